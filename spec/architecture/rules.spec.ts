import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect } from 'chai';
import { constantFile, constantMismatches, PAGE, renderIndex, ruleFacts, statedConstants, withIndex } from './rules.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('architecture: the behaviour rules the code cites', () => {
  const facts = ruleFacts(root);

  it(`every rule id cited in the packages' sources is stated in ${PAGE}`, () => {
    expect(facts.cited.size, 'the reader found citations').to.be.greaterThan(40);
    const unstated = [...facts.cited.keys()]
      .filter((id) => !facts.stated.has(id))
      .map((id) => `${id} (cited in ${facts.cited.get(id)?.join(', ')})`);
    expect(unstated).to.deep.equal([]);
  });

  it('every stated rule is pinned by a test whose title names it', () => {
    const unpinned = [...facts.stated].filter((id) => !facts.pinned.has(id));
    expect(unpinned).to.deep.equal([]);
  });

  it(`the index at the end of ${PAGE} is current (npm run rules:index rewrites it)`, () => {
    const page = readFileSync(join(root, PAGE), 'utf8');
    expect(page === withIndex(page, renderIndex(facts)), `${PAGE}'s rules index is out of date: run npm run rules:index`).to.equal(true);
  });

  it('the checks fail on a rule cited but not stated, and on a stale index', () => {
    const cited = new Map(facts.cited).set('EP99', ['lib/processing/retry.ts']);
    expect([...cited.keys()].filter((id) => !facts.stated.has(id))).to.deep.equal(['EP99']);
    const page = readFileSync(join(root, PAGE), 'utf8');
    const stale = withIndex(page, renderIndex({ ...facts, pinned: new Map() }));
    expect(stale === withIndex(stale, renderIndex(facts))).to.equal(false);
  });

  describe('the numbers a rule states are the constants the code uses', () => {
    const page = readFileSync(join(root, PAGE), 'utf8');
    const stated = statedConstants(page);
    const values = new Map<string, unknown>();
    before(async () => {
      for (const name of new Set(stated.map((s) => s.name))) {
        const file = constantFile(root, name);
        if (file === undefined) continue;
        const module = (await import(pathToFileURL(join(root, file)).href)) as Record<string, unknown>;
        values.set(name, module[name]);
      }
    });

    it(`every \`CONSTANT\` = number in a rule of ${PAGE} equals the exported constant (ES1's backoff, ES2's sync timeout, EP1's bound, …)`, () => {
      expect(stated.map((s) => s.rule)).to.include.members(['EP1', 'ES1', 'ES2']);
      expect(constantMismatches(stated, (name) => values.get(name))).to.deep.equal([]);
    });

    it('fails on a planted mismatch, on a unit that changes the number, and on a constant the code does not export', () => {
      const planted = [
        '- **ES1** backs off (reset after `WATCH_BACKOFF.resetAfterMs` = 2 min of health);',
        '  at most `DEFAULT_MAX_CONCURRENT_RECONCILIATIONS` = 50 at once, `NO_SUCH_CONSTANT` = 3.',
        'Not a rule: `WATCH_BACKOFF.maxMs` = 1 ms.',
      ].join('\n');
      const valueOf = (name: string) =>
        ({ WATCH_BACKOFF: { resetAfterMs: 30_000, maxMs: 30_000 }, DEFAULT_MAX_CONCURRENT_RECONCILIATIONS: 50 })[name];
      expect(constantMismatches(statedConstants(planted), valueOf)).to.deep.equal([
        "ES1: `WATCH_BACKOFF.resetAfterMs` = 2 min says 120000, the code's WATCH_BACKOFF.resetAfterMs is 30000",
        'ES1: `NO_SUCH_CONSTANT` = 3 cites NO_SUCH_CONSTANT, which no file of lib/ exports as a number',
      ]);
      const fixed = planted.replace('= 2 min', '= 30 s');
      expect(constantMismatches(statedConstants(fixed), valueOf)).to.have.length(1);
    });
  });
});
