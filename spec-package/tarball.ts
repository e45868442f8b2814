/** The package as npm would publish it, packed once per test run and shared by the spec files. */
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
let packed: Promise<Tarball> | undefined;

/** `npm pack` of the repository (its prepare script builds dist/ first), into a directory of its own. */
export function packOnce(): Promise<Tarball> {
  return (packed ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rxkube-tarball-'));
    const { stdout } = await promisify(execFile)('npm', ['pack', '--json', '--pack-destination', dir], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024, timeout: 240_000 });
    const info = (JSON.parse(stdout.slice(stdout.indexOf('['))) as Omit<Tarball, 'path'>[])[0]!;
    return { ...info, path: join(dir, info.filename) };
  })());
}
