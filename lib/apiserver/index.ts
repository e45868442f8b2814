/**
 * The embedded Kubernetes API server (`rxkube/apiserver`): an in-process HTTP server that
 * @kubernetes/client-node and kubectl use as if it were a cluster.
 */
export { startApiServer, type ApiServer, type ApiServerOptions, type ApiServerStats } from './server.js';
export type { Fault, Faults, RequestFaultSpec, RequestMatch, WatchMatch } from './faults.js';
export type { SimulateOptions } from './simulators.js';
export { kubeconfigYaml, type KubeconfigSpec } from './kubeconfig.js';
