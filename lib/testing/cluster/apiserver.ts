/**
 * `@rxkube/apiserver`, loaded when a test starts a server rather than when `rxkube/testing/cluster`
 * is imported: it is an optional peer dependency, and without it the error names the package and
 * how to install it instead of Node's bare ERR_MODULE_NOT_FOUND.
 */
import type * as ApiServerPackage from '@rxkube/apiserver';

export type ApiServerModule = typeof ApiServerPackage;

export async function loadApiServer(load: () => Promise<ApiServerModule> = () => import('@rxkube/apiserver')): Promise<ApiServerModule> {
  try {
    return await load();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND' || !String((err as Error).message).includes('@rxkube/apiserver'))
      throw err;
    throw new Error(
      'rxkube/testing/cluster runs the embedded API server of the package @rxkube/apiserver, which is not installed: npm install --save-dev @rxkube/apiserver',
      { cause: err },
    );
  }
}
