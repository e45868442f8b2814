import { expect } from 'chai';
import fc from 'fast-check';
import { applyJsonPatch, jsonPatch } from '../../lib/webhooks/index.js';

describe('webhooks: JSONPatch (RFC 6902) from two documents', () => {
  it('adds, removes and replaces keys, escaping ~ and / in pointers', () => {
    const ops = jsonPatch({ a: 1, 'x/y': 1, keep: true, gone: 'x' }, { a: 2, 'x/y': 2, keep: true, 'm~n': 3 });
    expect(ops).to.deep.equal([
      { op: 'remove', path: '/gone' },
      { op: 'replace', path: '/a', value: 2 },
      { op: 'replace', path: '/x~1y', value: 2 },
      { op: 'add', path: '/m~0n', value: 3 },
    ]);
  });

  it('appends to and trims arrays by index, and replaces an array whose head changed', () => {
    expect(jsonPatch({ l: [1, 2] }, { l: [1, 2, 3] })).to.deep.equal([{ op: 'add', path: '/l/-', value: 3 }]);
    expect(jsonPatch({ l: [1, 2, 3] }, { l: [1] })).to.deep.equal([
      { op: 'remove', path: '/l/2' },
      { op: 'remove', path: '/l/1' },
    ]);
    expect(jsonPatch({ l: [1, 2] }, { l: [2, 1] })).to.deep.equal([{ op: 'replace', path: '/l', value: [2, 1] }]);
  });

  it('applying the patch to the first document gives the second, for any JSON documents', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        const before = JSON.parse(JSON.stringify({ root: a })) as unknown;
        const after = JSON.parse(JSON.stringify({ root: b })) as unknown;
        expect(applyJsonPatch(before, jsonPatch(before, after))).to.deep.equal(after);
      }),
      { numRuns: 300, seed: 24 },
    );
  });

  it('applies every RFC 6902 operation (the one JsonPatchOperation of the client): move, copy and test too', () => {
    const doc = { a: { x: 1 }, l: [1, 2, 3] };
    expect(
      applyJsonPatch(doc, [
        { op: 'test', path: '/a/x', value: 1 },
        { op: 'copy', from: '/a', path: '/b' },
        { op: 'move', from: '/l/0', path: '/l/-' },
        { op: 'remove', path: '/a/x' },
      ]),
    ).to.deep.equal({ a: {}, b: { x: 1 }, l: [2, 3, 1] });
    expect(doc).to.deep.equal({ a: { x: 1 }, l: [1, 2, 3] });
    expect(() => applyJsonPatch(doc, [{ op: 'test', path: '/a/x', value: 2 }])).to.throw('applyJsonPatch: test at /a/x failed');
    expect(() => applyJsonPatch(doc, [{ op: 'copy', from: '/nope', path: '/c' }])).to.throw('applyJsonPatch: /nope does not exist');
  });
});
