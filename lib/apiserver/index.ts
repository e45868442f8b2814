/**
 * The embedded Kubernetes API server (`rxkube/apiserver`): an in-process HTTP server that
 * @kubernetes/client-node and kubectl use as if it were a cluster.
 *
 * Map of the modules:
 * - server.ts      startApiServer: assembly, HTTP front, discovery/OpenAPI routes, data file
 * - handlers.ts    resource requests: verbs, query parameters, bodies, Table, watch streams
 * - http.ts        request paths (RequestInfo), body limits and parsing, JSON answers
 * - core.ts        API semantics: create/get/list/update/patch/delete, status split, generation,
 *                  finalizers, optimistic concurrency, no-op writes, dry run, paging, scale
 * - store.ts       objects, the global resourceVersion, per-resource watch history, uid/owner indexes
 * - watch.ts       the watch hub: live fan-out, resume from a resourceVersion, bookmarks, timeouts
 * - registry.ts    served types; builtins.ts (built-in types and their strategies); crds.ts (CRDs)
 * - crd-schema.ts  CRD structural schemas: defaults, pruning, validation
 * - gc.ts, namespaces.ts, simulators.ts   the controllers inside the server
 * - faults.ts      fault injection; request-log.ts counts requests (server.requests); filter.ts selectors; table.ts server-side printing;
 *   openapi.ts, discovery.ts, kubeconfig.ts, protobuf.ts (kubectl's imperative bodies),
 *   patching.ts (patch algorithms and managedFields from patch/), errors.ts (Status errors)
 */
export { isLoopback, startApiServer, type ApiServer, type ApiServerOptions, type ApiServerStats } from './server.js';
export type { Fault, Faults, RequestDescription, RequestFaultSpec, RequestMatch, WatchMatch } from './faults.js';
export type { RequestLog } from './request-log.js';
export type { SimulateOptions } from './simulators.js';
export { kubeconfigYaml, type KubeconfigSpec } from './kubeconfig.js';
