/** The `rxkube` command: a table of subcommands, one module each, loaded only when asked for. */

/** One subcommand: a one-line summary for the usage, and its module (`main(args)` answers the exit code). */
export interface Command {
  readonly summary: string;
  readonly load: () => Promise<{ main(args: string[]): Promise<number> }>;
}

/** The subcommands rxkube's library itself provides; `bin/rxkube.js` adds the demo's. */
export const commands: Readonly<Record<string, Command>> = {
  apiserver: {
    summary: 'serve the embedded Kubernetes API server and write a kubeconfig',
    load: () => import('./apiserver.js'),
  },
};

function usage(table: Readonly<Record<string, Command>>): string {
  const lines = Object.entries(table).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return ['usage: rxkube <command> [options]', '', 'commands:', ...lines].join('\n');
}

/** Runs the subcommand `argv[0]` of `table` with the rest; resolves with the exit code. */
export async function runCli(argv: string[], table: Readonly<Record<string, Command>> = commands): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h') {
    console.log(usage(table));
    return name === undefined ? 2 : 0;
  }
  const command = table[name];
  if (!command) {
    console.error(`rxkube: unknown command '${name}'\n${usage(table)}`);
    return 2;
  }
  const module = await command.load();
  return module.main(args);
}
