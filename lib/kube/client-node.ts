/** @kubernetes/client-node, loaded on first use rather than at start-up. */
import { createRequire } from 'node:module';

type ClientNode = typeof import('@kubernetes/client-node');

let loaded: ClientNode | undefined;

/**
 * @kubernetes/client-node, loaded on first use. Its entry point loads about a thousand generated
 * API modules (its `KubeConfig` alone needs them), most of the start-up of an operator that
 * talks to the API server through rxkube's own request path; only a user's KubeConfig, an auth
 * plugin or a proxy needs them. Node loads an ES module synchronously with `require`, so the
 * callers stay synchronous.
 */
export function clientNode(): ClientNode {
  return (loaded ??= createRequire(import.meta.url)('@kubernetes/client-node') as ClientNode);
}
