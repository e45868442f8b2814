#!/usr/bin/env node
// The `rxkube-apiserver` command runs the compiled package (dist/ is built before packing and shipped in the tarball).
const { main } = await import('../dist/cli.js');
process.exitCode = await main(process.argv.slice(2));
