import { expect } from 'chai';
import { createMergePatch } from '../../lib/controller/merge-patch.js';
import { statusChanges } from '../../lib/controller/primary-writes.js';

// The controller's two diffs compare values with the one JSON equality of core/: a key whose value
// is undefined is absent, as in the JSON the API server receives.
describe('the status and merge-patch diffs', () => {
  it('a merge patch of equal JSON is empty, though one side carries undefined keys inside an array', () => {
    expect(createMergePatch({ l: [{ a: 1 }], m: 1 }, { l: [{ a: 1, b: undefined }], m: 1 })).to.deep.equal({});
    expect(createMergePatch({ l: [{ a: 1 }] }, { l: [{ a: 2 }] })).to.deep.equal({ l: [{ a: 2 }] });
  });

  it('a status key set to undefined is removed, never sent as an add without a value; equal JSON gives no operation', () => {
    expect(statusChanges({ ready: true, phase: 'Up' }, { ready: true, phase: undefined })).to.deep.equal([
      { op: 'remove', path: '/status/phase' },
    ]);
    expect(statusChanges({ ready: true }, { ready: true, phase: undefined })).to.deep.equal([]);
    expect(statusChanges({ spec: { a: 1 } }, { spec: { a: 1, b: undefined } })).to.deep.equal([]);
    expect(statusChanges({ 'a/b': 1 }, { 'a/b': 2 })).to.deep.equal([{ op: 'add', path: '/status/a~1b', value: 2 }]);
  });
});
