/** What the demos share with the `rxkube` command: its one flag parser and its wait for Ctrl-C. */
export { parseFlags, UsageError, waitForSignal } from './args.js';
