/**
 * The embedded Kubernetes API server (`rxkube/apiserver`): an in-process HTTP server that
 * @kubernetes/client-node and kubectl use as if it were a cluster.
 *
 * Map of the folders (what depends on what: http/ → api/, patch/, auth/; controllers/, auth/ → api/):
 * - server.ts       startApiServer: the assembly of the parts below; faults.ts fault injection;
 *                   kubeconfig.ts the kubeconfig it writes
 * - http/           HTTP and wire formats: request paths and bodies (http.ts), resource requests
 *                   (handlers.ts), Host/Origin guards, TLS, Table printing, protobuf bodies of
 *                   kubectl's imperative commands, discovery, OpenAPI, the request log
 * - api/            API semantics and storage: the verbs with status split, generation,
 *                   finalizers, optimistic concurrency, dry run, paging (core.ts); served types
 *                   (registry.ts, builtins.ts, crds.ts, validation.ts); custom resources'
 *                   schemas (crd-schema.ts, with CEL rules in cel.ts and formats.ts) and the CRD's
 *                   own rules (crd-structure.ts); the store
 *                   with resourceVersions, history and indexes (store.ts) and its write-ahead log
 *                   (durable/); the watch hub (watch.ts); selectors, one grammar per file
 *                   (label-selector.ts, field-selector.ts; filter.ts compiles them per request);
 *                   Status errors (errors.ts)
 * - patch/          the patch seam (engine.ts) over JSON, merge and strategic merge patch,
 *                   server-side apply (apply.ts) and the managedFields codec (managed-fields.ts)
 * - controllers/    the controllers that run inside the server: garbage collection, namespace
 *                   lifecycle, the simulated workload controllers
 * - auth/           who a request comes from (the admin, ServiceAccount tokens, impersonation) and
 *                   whether RBAC allows it (auth.ts, rbac.ts), escalation prevention on writes
 *                   of RBAC objects (escalation.ts); the RBAC and review types, the default
 *                   ClusterRoles and ClusterRole aggregation
 */
export { isLoopback, startApiServer, type ApiServer, type ApiServerOptions, type ApiServerStats, type KubeconfigIdentity } from './server.js';
export type { Fault, Faults, RequestDescription, RequestFaultSpec, RequestMatch, WatchMatch } from './http/faults.js';
export type { RequestLog } from './http/request-log.js';
export type { SimulateOptions, SimulationClock } from './controllers/simulators.js';
export { kubeconfigYaml, type KubeconfigSpec } from './kubeconfig.js';
