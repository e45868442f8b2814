// The `rxkube` command's parts, for the `bin/rxkube.js` entry and the demos' own commands.
export { parseFlags, UsageError, waitForSignal, type FlagSpec, type ParsedFlags } from './args.js';
export { commands, runCli, type Command } from './run.js';
