#!/usr/bin/env node
// rxkube ships TypeScript sources; tsx compiles them on load so `npx rxkube` needs no build step.
// This file assembles the command: the library's subcommands, and the demo (lib/ never imports demos/).
import { register } from 'tsx/esm/api';

register();
const { commands, runCli } = await import('../lib/cli/index.ts');
process.exitCode = await runCli(process.argv.slice(2), {
  ...commands,
  demo: {
    summary: 'run the demo operator against the embedded API server (or --kubeconfig FILE)',
    load: () => import('../demos/webpage/main.ts'),
  },
});
