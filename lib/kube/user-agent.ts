/**
 * rxkube's version, as package.json states it (a spec holds the two equal): a constant rather than
 * a read of package.json, whose path from this module differs between the package, the repository
 * and an application that compiles rxkube's sources into its own tree.
 */
export const RXKUBE_VERSION = '0.1.0';

/** The User-Agent of rxkube's requests: `rxkube/<version>`, with `(<name>)` for an operator's, so the API server's audit log (and a test) tells them apart. */
export function rxkubeUserAgent(name?: string): string {
  return name === undefined ? `rxkube/${RXKUBE_VERSION}` : `rxkube/${RXKUBE_VERSION} (${name})`;
}
