import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import { newerOf } from '../../lib/cache/index.js';
import { foreignChangeIn } from '../../lib/cache/own-writes.js';

const obj = (resourceVersion: string, generation?: number, deleting = false): KubernetesObject => ({
  metadata: {
    name: 'x',
    resourceVersion,
    ...(generation === undefined ? {} : { generation }),
    ...(deleting ? { deletionTimestamp: new Date(0) } : {}),
  },
});

describe('cache/foreignChangeIn (ES4, issue 9)', () => {
  it('ES4: an answer is ours when it keeps what the write keeps on top of its base', () => {
    expect(foreignChangeIn(obj('5', 2), { base: obj('3', 2) })).to.equal(undefined);
    expect(foreignChangeIn(obj('5', 3), { base: obj('3', 2), generation: 'bump' })).to.equal(undefined);
    expect(foreignChangeIn(obj('5', 2), { base: obj('3', 2), generation: 'keepOrBump' })).to.equal(undefined);
    expect(foreignChangeIn(obj('5', 3, true), { base: obj('3', 2), generation: 'keepOrBump', deletes: true })).to.equal(undefined);
    expect(foreignChangeIn(obj('5', 3, true), { base: obj('3', 3, true) }), 'already marked when read').to.equal(undefined);
    expect(foreignChangeIn(obj('3', 2), { base: obj('3', 2), unchanged: true }), 'a no-op answers with the base').to.equal(undefined);
    expect(foreignChangeIn(obj('5'), { base: obj('3') }), 'no generation to compare').to.equal(undefined);
    expect(foreignChangeIn(obj('5', 7)), 'no base: a create or a write with its precondition').to.equal(undefined);
  });

  it("ES4: issue 9 — a moved generation, a new deletion mark or a new version under a write that changed nothing is someone else's", () => {
    expect(foreignChangeIn(obj('5', 3), { base: obj('3', 2) })).to.match(/generation moved from 2 to 3/);
    expect(foreignChangeIn(obj('5', 4), { base: obj('3', 2), generation: 'bump' })).to.match(/from 2 to 4 \(the write alone gives 3\)/);
    expect(foreignChangeIn(obj('5', 4), { base: obj('3', 2), generation: 'keepOrBump' })).to.match(/gives 2 or 3/);
    expect(foreignChangeIn(obj('5', 2, true), { base: obj('3', 2) })).to.equal('the object was marked for deletion');
    expect(foreignChangeIn(obj('5'), { base: obj('3'), unchanged: true })).to.match(
      /changed nothing answered with resourceVersion 5 instead of 3/,
    );
    const held = (rv: string, finalizers: string[]): KubernetesObject => ({
      metadata: { name: 'x', resourceVersion: rv, generation: 2, finalizers },
    });
    expect(foreignChangeIn(held('5', []), { base: held('3', ['ours']), keepsFinalizers: true })).to.equal('the finalizers changed');
    expect(foreignChangeIn(held('5', ['ours']), { base: held('3', ['ours']), keepsFinalizers: true })).to.equal(undefined);
    expect(foreignChangeIn(held('5', []), { base: held('3', ['ours']) }), 'a write that may change them').to.equal(undefined);
  });

  it('newerOf orders by resourceVersion', () => {
    expect(newerOf(obj('3'), obj('10'))?.metadata?.resourceVersion).to.equal('10');
    expect(newerOf(obj('10'), obj('3'))?.metadata?.resourceVersion).to.equal('10');
    expect(newerOf(undefined, obj('3'))?.metadata?.resourceVersion).to.equal('3');
    expect(newerOf(obj('a'), obj('b'))?.metadata?.resourceVersion, 'unordered: the first').to.equal('a');
  });
});
