#!/usr/bin/env node
// The `rxkube` command runs the compiled package (dist/ is built on prepare and shipped in the tarball).
await import('../dist/cli/main.js');
