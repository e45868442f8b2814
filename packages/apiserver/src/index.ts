/**
 * The embedded Kubernetes API server (`rxkube/apiserver`): an in-process HTTP server that
 * @kubernetes/client-node and kubectl use as if it were a cluster.
 *
 * Map of the folders, lowest layer first (a folder imports only lower layers; spec/architecture
 * in the repository checks it):
 * - base/           what every folder shares: Status errors (errors.ts), JSON values (json.ts),
 *                   object metadata (meta.ts), the work queue of the controllers (work-queue.ts)
 * - grammar/        on base/: CEL (cel.ts), label and field selectors, cron schedules, formats
 * - storage/        on base/: the store with resourceVersions, history and indexes (store.ts) and
 *                   its write-ahead log (durable/)
 * - api/            on those: the API semantics: the verbs (verbs.ts), subresources
 *                   (subresources.ts) and deletion (deletion.ts) on one write path with status split,
 *                   generation, finalizers, optimistic concurrency and dry run (write-path.ts, the
 *                   update rules in update.ts), the controllers' writes (internal-writes.ts), all
 *                   assembled in core.ts; served types (registry.ts, builtins/ one file per kind,
 *                   crds.ts, validation.ts); custom resources' schemas (crd-schema.ts) and the CRD's
 *                   own rules (crd-structure.ts); the watch hub (watch.ts); paging; filter.ts
 *                   compiles a request's selectors; the PatchEngine the write path takes (patch-port.ts)
 * - patch/          on api/ and below: the PatchEngine (engine.ts) over JSON, merge and strategic merge
 *                   patch, server-side apply (apply.ts) and the managedFields codec (managed-fields.ts)
 * - auth/           on api/ and below: who a request comes from (the admin, ServiceAccount tokens,
 *                   impersonation) and whether RBAC allows it (auth.ts, rbac.ts), escalation
 *                   prevention on writes of RBAC objects (escalation.ts); the RBAC and review
 *                   types, the default ClusterRoles and ClusterRole aggregation
 * - controllers/    on api/ and below: the controllers that run inside the server: garbage collection,
 *                   namespace lifecycle, the simulated workload controllers
 * - admission/      on those: admission webhooks, ValidatingAdmissionPolicies, conversion webhooks
 * - http/           on all of the above: the router (router.ts), request paths and bodies
 *                   (http.ts), resource requests (handlers.ts), Host/Origin guards, TLS, listening,
 *                   Table printing, protobuf bodies of kubectl's imperative commands, discovery,
 *                   OpenAPI, fault injection (faults.ts), the request log
 * - server.ts       startApiServer: the assembly (options.ts, the parts in parts.ts);
 *                   kubeconfig.ts the kubeconfig it writes
 */
export {
  isLoopback,
  startApiServer,
  type ApiServer,
  type ApiServerOptions,
  type ApiServerStats,
  type KubeconfigIdentity,
} from './server.js';
export type { Fault, FaultOutcome, Faults, RequestDescription, RequestFaultSpec, RequestMatch, WatchMatch } from './http/faults.js';
export type { Verb } from './http/http.js';
export type { RequestLog } from './http/request-log.js';
export type { SimulateOptions, SimulationClock } from './controllers/simulators.js';
export { kubeconfigYaml, type KubeconfigSpec } from './kubeconfig.js';
// The selector grammars, for a tool that serves lists as this server does (the explorer's stale views).
export {
  matchesLabelSelector,
  parseLabelSelector,
  SelectorError,
  type LabelOperator,
  type LabelRequirement,
  type LabelSelector,
} from './grammar/label-selector.js';
export {
  matchesFieldSelector,
  parseFieldSelector,
  type FieldOperator,
  type FieldRequirement,
  type FieldSelector,
} from './grammar/field-selector.js';

// Types that appear in the signatures above, exported so that users can name them.
export type { ApiError, StatusCause, StatusDetails } from './base/errors.js';
export type { JsonObject, JsonValue } from './base/json.js';
