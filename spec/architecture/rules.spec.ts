import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { PAGE, renderIndex, ruleFacts, withIndex } from './rules.js';

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
});
