/** The packages as npm would publish them, packed once per test run and shared by the spec files. */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface PackedFile {
  readonly path: string;
  readonly size: number;
}

export interface Tarball {
  readonly path: string;
  readonly filename: string;
  readonly size: number;
  readonly unpackedSize: number;
  readonly files: readonly PackedFile[];
}

export const ROOT = new URL('../', import.meta.url).pathname;
const packed = new Map<string, Promise<Tarball>>();
/** Packs one at a time: each build writes the server's dist/, and a pack must not read it half written. */
let last: Promise<unknown> = Promise.resolve();

/** `npm pack` of a package of this repository (its prepare or prepack script builds dist/ first), into a directory of its own. */
function pack(workspace: string | undefined): Promise<Tarball> {
  const key = workspace ?? '.';
  let tarball = packed.get(key);
  if (tarball === undefined) {
    tarball = last
      .catch(() => undefined)
      .then(async () => {
        const dir = mkdtempSync(join(tmpdir(), 'rxkube-tarball-'));
        const args = ['pack', '--json', '--pack-destination', dir, ...(workspace === undefined ? [] : ['--workspace', workspace])];
        const { stdout } = await promisify(execFile)('npm', args, { cwd: ROOT, maxBuffer: 64 * 1024 * 1024, timeout: 240_000 });
        const info = (JSON.parse(stdout.slice(stdout.indexOf('['))) as Omit<Tarball, 'path'>[])[0];
        return { ...info, path: join(dir, info.filename) };
      });
    last = tarball;
    packed.set(key, tarball);
  }
  return tarball;
}

/** The toolkit, `rxkube`. */
export function packOnce(): Promise<Tarball> {
  return pack(undefined);
}

/** The embedded API server, `@rxkube/apiserver`. */
export function packServerOnce(): Promise<Tarball> {
  return pack('@rxkube/apiserver');
}
