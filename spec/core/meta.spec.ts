import { expect } from 'chai';
import { isMarkedForDeletion, isRecord } from '../../lib/core/index.js';

describe('core: object metadata helpers', () => {
  it('FZ3: isMarkedForDeletion means what the API server means: deletionTimestamp is set', () => {
    const at = (deletionTimestamp: unknown) => ({ metadata: { name: 'a', deletionTimestamp } });
    expect(isMarkedForDeletion(at('2026-11-23T22:00:00Z')), 'as the server sends it').to.equal(true);
    expect(isMarkedForDeletion(at(new Date())), "as client-node's typed models hold it").to.equal(true);
    for (const unset of [undefined, null, '']) expect(isMarkedForDeletion(at(unset)), String(unset)).to.equal(false);
    for (const notAnObject of [undefined, null, 'x', [], { metadata: [] }]) expect(isMarkedForDeletion(notAnObject)).to.equal(false);
  });

  it('isRecord: plain objects only, not null and not arrays', () => {
    expect([{}, { a: 1 }, null, [], 'x', 1].map(isRecord)).to.deep.equal([true, true, false, false, false, false]);
  });
});
