import { createRequire } from 'node:module';

/** rxkube's version, from its package.json (the same path from lib/ and from dist/). */
const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/** The User-Agent of rxkube's requests: `rxkube/<version>`, with `(<name>)` for an operator's, so the API server's audit log (and a test) tells them apart. */
export function rxkubeUserAgent(name?: string): string {
  return name === undefined ? `rxkube/${version}` : `rxkube/${version} (${name})`;
}
