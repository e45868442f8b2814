/**
 * `rxkube apiserver`: the embedded API server's own command (`rxkube-apiserver` of
 * `@rxkube/apiserver`), reached from the toolkit's CLI when that package is installed.
 */
export async function main(args: string[]): Promise<number> {
  let server: { main(args: string[], program?: string): Promise<number> };
  try {
    server = await import('@rxkube/apiserver/cli');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND' || !String((err as Error).message).includes('@rxkube/apiserver'))
      throw err;
    console.error(
      'rxkube apiserver: the embedded API server is a package of its own; install it with `npm install --save-dev @rxkube/apiserver` (then `npx rxkube-apiserver` runs it too)',
    );
    return 2;
  }
  return server.main(args, 'rxkube apiserver');
}
