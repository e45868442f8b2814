/**
 * docs/apiserver.md's comparison table (rxkube's server vs a real kube-apiserver vs envtest vs
 * kwok) and its Guarantees table stay true: every row names the tests that pin it, as
 * `file.spec.ts: test title` (a bare file name is in the server package's packages/apiserver/spec/,
 * `dir/file.spec.ts` under spec/; several separated by `; `, a title after `; ` without a file being in the same file),
 * and each of those tests exists in spec/.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect } from 'chai';

const root = new URL('../../', import.meta.url).pathname;
const specDir = join(root, 'spec');
const serverSpecDir = join(root, 'packages/apiserver/spec');

interface SpecTitles {
  /** `it` titles (a template literal's `${...}` matches anything). */
  tests: RegExp[];
  describes: RegExp[];
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The text of a string literal's body ('...', "..." or `...`), as a pattern for the title it makes. */
function titlePattern(body: string, quote: string): string {
  if (quote === '`')
    return body
      .split(/\$\{[^}]*\}/)
      .map((part) => escapeRegExp(part.replace(/\\(.)/g, '$1')))
      .join('.+');
  return escapeRegExp(body.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c)));
}

/** The `it` and `describe` titles a spec source declares (skipped tests pin nothing and are left out). */
function titlesIn(source: string): SpecTitles {
  const out: SpecTitles = { tests: [], describes: [] };
  const call = /\b(it|specify|describe|context)(\.only|\.skip)?\(\s*(?:'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`)/g;
  for (const m of source.matchAll(call)) {
    if (m[2] === '.skip') continue;
    const [body, quote] = m[3] !== undefined ? [m[3], "'"] : m[4] !== undefined ? [m[4], '"'] : [m[5] ?? '', '`'];
    const pattern = new RegExp(`^${titlePattern(body, quote)}$`);
    (m[1] === 'it' || m[1] === 'specify' ? out.tests : out.describes).push(pattern);
  }
  return out;
}

/** Every way to cut `text` at a space into a head and a tail. */
const cuts = (text: string): [string, string][] =>
  [...text.matchAll(/ /g)].map((m) => [text.slice(0, m.index), text.slice((m.index ?? 0) + 1)]);

/** Whether `title` is a test of the file: its own title, or it after describe titles (mocha's full title). */
function declares(titles: SpecTitles, title: string): boolean {
  const isDescribe = (text: string): boolean => titles.describes.some((d) => d.test(text));
  const isDescribeChain = (text: string): boolean =>
    isDescribe(text) || cuts(text).some(([head, tail]) => isDescribe(head) && isDescribeChain(tail));
  return titles.tests.some((t) => t.test(title) || cuts(title).some(([head, tail]) => t.test(tail) && isDescribeChain(head)));
}

function specFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const e of readdirSync(specDir, { withFileTypes: true, recursive: true })) {
    if (e.isFile() && e.name.endsWith('.spec.ts')) files.set(relative(specDir, join(e.parentPath, e.name)), join(e.parentPath, e.name));
  }
  for (const e of readdirSync(serverSpecDir, { withFileTypes: true, recursive: true })) {
    if (e.isFile() && e.name.endsWith('.spec.ts'))
      files.set(join('apiserver', relative(serverSpecDir, join(e.parentPath, e.name))), join(e.parentPath, e.name));
  }
  return files;
}

interface TableRow {
  label: string;
  cells: string[];
}

/** The lines of the first table after `heading`: header, separator, rows. */
function tableLines(markdown: string, heading: string): string[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim() === heading);
  if (start < 0) throw new Error(`no heading ${JSON.stringify(heading)}`);
  const rest = lines.slice(start + 1);
  const first = rest.findIndex((l) => l.startsWith('|'));
  const end = rest.findIndex((l, i) => i > first && !l.startsWith('|'));
  return rest.slice(first, end < 0 ? undefined : end);
}

/** The rows of the first table after `heading` (cells split on unescaped `|`, `\|` unescaped). */
function tableAfter(markdown: string, heading: string): TableRow[] {
  return tableLines(markdown, heading)
    .slice(2)
    .map((line) => {
      const cells = line
        .trim()
        .replace(/^\||\|$/g, '')
        .split(/(?<!\\)\|/)
        .map((c) => c.trim().replace(/\\\|/g, '|'));
      return { label: cells[0] ?? '', cells };
    });
}

interface Pin {
  file: string;
  title: string;
}

/** The tests a cell names: `file.spec.ts: title; title; other.spec.ts: title`, and `npm run x` scripts. */
function pinsIn(cell: string): { tests: Pin[]; scripts: string[] } {
  const tests: Pin[] = [];
  const scripts: string[] = [];
  let file: string | undefined;
  for (const segment of cell.split('; ')) {
    const script = /^`npm run ([\w:-]+)[^`]*`$/.exec(segment);
    const named = /^([\w./-]+\.spec\.ts): (.+)$/.exec(segment);
    if (script) scripts.push(script[1]);
    else if (named) {
      file = named[1];
      tests.push({ file, title: named[2] });
    } else if (file !== undefined && segment !== '') {
      tests.push({ file, title: segment });
    }
  }
  return { tests, scripts };
}

describe('docs/apiserver.md tables are pinned by tests that exist', () => {
  const markdown = readFileSync(join(root, 'docs/apiserver.md'), 'utf8');
  const files = specFiles();
  const titlesCache = new Map<string, SpecTitles>();
  const titlesOf = (path: string): SpecTitles => {
    let titles = titlesCache.get(path);
    if (!titles) titlesCache.set(path, (titles = titlesIn(readFileSync(path, 'utf8'))));
    return titles;
  };
  const scripts = Object.keys(
    (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts,
  );

  /** What is wrong with a cell's pins: unknown files, titles no test has. */
  function problems(cell: string): string[] {
    const found: string[] = [];
    const { tests } = pinsIn(cell);
    // A title may itself contain "; ": join a segment that names no test with the next one.
    for (let i = 0; i < tests.length; i++) {
      const pin = tests[i];
      // A bare file name is in the server package's spec/, as the page says; a path is under spec/.
      const path = files.get(pin.file.includes('/') ? pin.file : join('apiserver', pin.file));
      if (path === undefined) {
        found.push(pin.file.includes('/') ? `no spec/${pin.file}` : `no packages/apiserver/spec/${pin.file}`);
        continue;
      }
      const titles = titlesOf(path);
      let title = pin.title;
      let j = i;
      while (!declares(titles, title) && j + 1 < tests.length && tests[j + 1]?.file === pin.file) title = `${title}; ${tests[++j]?.title}`;
      if (declares(titles, title)) i = j;
      else found.push(`${pin.file} has no test ${JSON.stringify(pin.title)}`);
    }
    return found;
  }

  it('finds titles as mocha makes them: describe prefixes, template literals; not a title a file lacks', () => {
    const source =
      "describe('outer', () => { describe(\"inner\", () => { it('does a thing', () => {}); it(`checks ${f}`, () => {}); it.skip('later', () => {}); }); });";
    const titles = titlesIn(source);
    expect(declares(titles, 'does a thing')).to.equal(true);
    expect(declares(titles, 'outer inner does a thing')).to.equal(true);
    expect(declares(titles, 'inner does a thing')).to.equal(true);
    expect(declares(titles, 'checks date-time')).to.equal(true);
    expect(declares(titles, 'does another thing')).to.equal(false);
    expect(declares(titles, 'later'), 'a skipped test pins nothing').to.equal(false);
    expect(pinsIn('a.spec.ts: one; two; b/c.spec.ts: three; `npm run bench:x -- --y`')).to.deep.equal({
      tests: [
        { file: 'a.spec.ts', title: 'one' },
        { file: 'a.spec.ts', title: 'two' },
        { file: 'b/c.spec.ts', title: 'three' },
      ],
      scripts: ['bench:x'],
    });
  });

  it('has one comparison table: rxkube, a real kube-apiserver, envtest, kwok, and the tests', () => {
    expect(markdown.match(/^## Compared with .*$/gm)).to.deep.equal(['## Compared with a real kube-apiserver, envtest and kwok']);
    const [header] = tableLines(markdown, '## Compared with a real kube-apiserver, envtest and kwok');
    // Prettier pads the cells to align the columns: compare with single spaces.
    expect(header?.replace(/ +/g, ' ')).to.match(/^\| \| rxkube's server \| real kube-apiserver .*\| envtest \| kwok \| Pinned by .*\|$/);
  });

  it('every row of the comparison table names tests that exist in spec/ (file: title)', () => {
    const rows = tableAfter(markdown, '## Compared with a real kube-apiserver, envtest and kwok');
    expect(rows.length).to.be.greaterThan(20);
    const wrong: string[] = [];
    for (const row of rows) {
      const pinned = row.cells.at(-1) ?? '';
      if (row.cells.length !== 6) wrong.push(`${row.label}: ${row.cells.length} cells, not 6`);
      else if (pinsIn(pinned).tests.length === 0) wrong.push(`${row.label}: names no test`);
      else wrong.push(...problems(pinned).map((p) => `${row.label}: ${p}`));
    }
    expect(wrong).to.deep.equal([]);
  });

  it('every row of the Guarantees table names tests that exist in spec/, or an npm script that exists', () => {
    const rows = tableAfter(markdown, '## Guarantees and their tests');
    expect(rows.length).to.be.greaterThan(10);
    const wrong: string[] = [];
    for (const row of rows) {
      const pinned = row.cells.at(-1) ?? '';
      const pins = pinsIn(pinned);
      if (pins.tests.length === 0 && pins.scripts.length === 0) wrong.push(`${row.label}: names no test`);
      for (const s of pins.scripts) if (!scripts.includes(s)) wrong.push(`${row.label}: no npm script ${s}`);
      wrong.push(...problems(pinned).map((p) => `${row.label}: ${p}`));
    }
    expect(wrong).to.deep.equal([]);
  });
});
