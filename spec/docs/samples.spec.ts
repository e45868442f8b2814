/**
 * Every TypeScript sample in README.md and docs/ is type-checked: it must stand, verbatim, in a
 * file under docs/examples/ or demos/, which `npm test` type-checks with the rest of the project.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';

const root = new URL('../../', import.meta.url).pathname;

function filesUnder(dir: string, suffix: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(suffix))
    .map((e) => join(e.parentPath, e.name));
}

function tsBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => (m[1] ?? '').trim());
}

const normalize = (text: string) => text.replace(/\s+/g, ' ').trim();

describe('documentation samples', () => {
  // Both folders are type-checked by `npm test`; a page may quote a demo directly.
  const examples = [...filesUnder('docs/examples', '.ts'), ...filesUnder('demos', '.ts')].map((f) => normalize(readFileSync(f, 'utf8')));
  // docs/api/ is generated from the declarations: its signatures are the code itself.
  const pages = [
    join(root, 'README.md'),
    join(root, 'packages/apiserver/README.md'),
    ...filesUnder('docs', '.md').filter((f) => !f.includes('/docs/api/')),
  ];

  it('every ```ts block in README.md, packages/apiserver/README.md and docs/ stands in a type-checked file under docs/examples/ or demos/', () => {
    const missing: string[] = [];
    for (const page of pages) {
      for (const block of tsBlocks(readFileSync(page, 'utf8'))) {
        if (!examples.some((example) => example.includes(normalize(block)))) {
          missing.push(`${page.slice(root.length)}: block starting "${block.split('\n')[0]}"`);
        }
      }
    }
    expect(missing, 'samples not found in docs/examples/*.ts').to.deep.equal([]);
  });

  it('every example in docs/examples imports rxkube through its entry points (rxkube, rxkube/testing...), never a relative path into lib/, dist/ or packages/', () => {
    const relative = filesUnder('docs/examples', '.ts').flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)]
        .map((m) => m[1])
        .filter((spec) => /^(lib|dist|packages)\//.test(join(file.slice(root.length), '..', spec)))
        .map((spec) => `${file.slice(root.length)}: ${spec}`),
    );
    expect(relative, 'an example a user copies imports the package, not its files').to.deep.equal([]);
  });

  it("every example in docs/examples type-checks as a strict consumer's project would: tsc --init's settings (exactOptionalPropertyTypes, noUncheckedIndexedAccess...) with skipLibCheck off, against the built package", async function () {
    this.timeout(180_000);
    const config = JSON.parse(readFileSync(join(root, 'docs/examples/tsconfig.json'), 'utf8')) as {
      compilerOptions: Record<string, unknown>;
      exclude: string[];
    };
    expect(config.compilerOptions).to.include({
      strict: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      noPropertyAccessFromIndexSignature: true,
      skipLibCheck: false,
      verbatimModuleSyntax: true,
    });
    expect(config.exclude).to.deep.equal(['webpage.ts']);
    const tsc = join(root, 'node_modules/.bin/tsc');
    const result = await promisify(execFile)(tsc, ['-p', 'docs/examples/tsconfig.json'], { cwd: root, maxBuffer: 16 * 1024 * 1024 }).then(
      () => '',
      (err: Error & { stdout?: string }) => err.stdout ?? String(err),
    );
    expect(result.split('\n').filter((line) => line.includes('error TS'))).to.deep.equal([]);
  });

  const runExample = async (file: string) =>
    (
      await promisify(execFile)(process.execPath, ['--import', 'tsx', file], {
        cwd: root,
        env: { ...process.env, LOG_LEVEL: 'warn' },
        timeout: 55_000,
      })
    ).stdout;

  it('the quickstart from README.md runs: an operator reconciles a Greeting on the embedded server', async function () {
    this.timeout(60_000);
    expect(await runExample('docs/examples/quickstart.ts')).to.include('Hello, world!');
  });

  it("the tracing example (docs/tracing.md) runs: its spans go to the console, the run and the user's own span among them", async function () {
    this.timeout(60_000);
    const stdout = await runExample('docs/examples/tracing.ts');
    for (const name of ['backups.example.com added', 'backups.example.com', 'take snapshot', 'write status', 'PATCH'])
      expect(stdout).to.include(`name: '${name}'`);
  });

  it('FZ2, FZ3, UP1: a controller assembled from exported operators only (docs/examples/own-pipeline.ts) reconciles and cleans up on the embedded server', async function () {
    this.timeout(60_000);
    const stdout = await runExample('docs/examples/own-pipeline.ts');
    expect(stdout).to.include('Hello, world!');
    expect(stdout).to.include('finalizers: greetings.example.com/finalizer');
    expect(stdout.indexOf('goodbye, world'), 'cleanup ran before the greeting was gone').to.be.within(0, stdout.indexOf('world is gone'));
    expect(stdout).to.not.match(/run of world: failure/);
  });
});
