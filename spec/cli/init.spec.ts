/**
 * `rxkube init` without installing: the files it writes and the mistakes it names. The project
 * itself (npm ci && npm test on the packed tarball) is proven by spec-package/init.spec.ts.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { main as init } from '../../lib/cli/init.js';

async function quietly(args: string[]): Promise<{ code: number; output: string }> {
  const lines: string[] = [];
  const { log, error } = console;
  console.log = console.error = (...parts: unknown[]) => lines.push(parts.join(' '));
  try {
    return { code: await init(args), output: lines.join('\n') };
  } finally {
    Object.assign(console, { log, error });
  }
}

describe('rxkube init', () => {
  const work = mkdtempSync(join(tmpdir(), 'rxkube-init-spec-'));

  it('writes a project for the kind and group asked for, depending on rxkube as a package', async () => {
    const dir = join(work, 'Shop Operator');
    const { code, output } = await quietly([dir, '--kind', 'WebShop', '--group', 'shop.example.org', '--no-install']);
    expect(code, output).to.equal(0);
    expect(output).to.include("wrote the WebShop operator 'shop-operator'");
    const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
    expect(files.sort()).to.deep.equal(
      ['.dockerignore', '.gitignore', 'Dockerfile', 'README.md', 'package.json', 'src/controller.ts', 'src/main.ts', 'src/operator.ts', 'src/webshop.ts', 'test/integration.test.ts', 'test/scheduling.test.ts', 'tsconfig.json'].sort(),
    );
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; dependencies: Record<string, string> };
    expect(pkg.name).to.equal('shop-operator');
    expect(pkg.dependencies['rxkube']).to.match(/^\^\d+\.\d+\.\d+/);
    expect(readFileSync(join(dir, 'src/webshop.ts'), 'utf8')).to.include("group: 'shop.example.org'").and.include('export const WEB_SHOP = WebShopResource.descriptor;');
    expect(readFileSync(join(dir, 'Dockerfile'), 'utf8')).to.include('npm ci --omit=dev').and.include('USER node').and.include('ENTRYPOINT ["node", "dist/src/main.js"]');
  });

  it('names what is wrong: no directory, a non-empty directory, a bad kind or group (exit 2)', async () => {
    const busy = join(work, 'busy');
    mkdirSync(busy);
    writeFileSync(join(busy, 'file'), '');
    for (const [args, message] of [
      [['--no-install'], 'give the directory of the new project first'],
      [[busy, '--no-install'], 'exists and is not empty'],
      [[join(work, 'a'), '--kind', 'webshop'], "--kind 'webshop' must be CamelCase"],
      [[join(work, 'b'), '--group', 'local'], "--group 'local' must be a lowercase domain with a dot"],
    ] as const) {
      const { code, output } = await quietly([...args]);
      expect(code, output).to.equal(2);
      expect(output).to.include(message);
    }
  });
});
