// The `rxkube` command: one module per subcommand, loaded only when asked for.
const commands: Record<string, { summary: string; load: () => Promise<{ main(args: string[]): Promise<number> }> }> = {
  apiserver: {
    summary: 'serve the embedded Kubernetes API server and write a kubeconfig (needs @rxkube/apiserver)',
    load: () => import('./apiserver.js'),
  },
  manifests: {
    summary: 'write the CRDs, RBAC, Deployment and Service of an operator (YAML or a kustomize base)',
    load: () => import('./manifests.js'),
  },
  dev: {
    summary: 'run the operator of this project here, as its ServiceAccount, against the embedded API server (or --kubeconfig)',
    load: () => import('./dev.js'),
  },
  init: {
    summary: 'start a new operator project in a directory',
    load: () => import('./init.js'),
  },
};

function usage(): string {
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return ['usage: rxkube <command> [options]', '', 'commands:', ...lines].join('\n');
}

async function run(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h') {
    console.log(usage());
    return name === undefined ? 2 : 0;
  }
  const command = commands[name];
  if (!command) {
    console.error(`rxkube: unknown command '${name}'\n${usage()}`);
    return 2;
  }
  const module = await command.load();
  return module.main(args);
}

process.exitCode = await run(process.argv.slice(2));
