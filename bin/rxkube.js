#!/usr/bin/env node
// The `rxkube` command runs the compiled package (dist/ is built before packing and shipped in the tarball).
// The Node.js check first, on its own: on an older Node the rest fails to load, naming nothing useful.
import { fileURLToPath } from 'node:url';

try {
  await import('../dist/node-check.js');
} catch (err) {
  const dist = fileURLToPath(new URL('../dist/', import.meta.url));
  // A clone of the repository: npm ci installs the dependencies but does not compile lib/ to dist/.
  const notBuilt = err instanceof Error && err.code === 'ERR_MODULE_NOT_FOUND' && err.message.includes(dist);
  console.error(
    `rxkube: ${notBuilt ? `${dist} is not built: in a clone of the repository, run \`npm run build\` first (npm ci does not build it)` : err instanceof Error ? err.message : String(err)}`,
  );
  process.exit(1);
}
await import('../dist/cli/main.js');
