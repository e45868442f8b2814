#!/usr/bin/env node
// The `rxkube` command runs the compiled package (dist/ is built before packing and shipped in the tarball).
// The Node.js check first, on its own: on an older Node the rest fails to load, naming nothing useful.
try {
  await import('../dist/node-check.js');
} catch (err) {
  console.error(`rxkube: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
await import('../dist/cli/main.js');
