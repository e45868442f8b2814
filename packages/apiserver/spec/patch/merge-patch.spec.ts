import { expect } from 'chai';
import { applyMergePatch } from '../../src/patch/merge-patch.js';
import type { JsonValue } from '../../src/base/json.js';

describe('apiserver/patch merge-patch (RFC 7386)', () => {
  // RFC 7386 appendix A, row by row.
  const cases: Array<[JsonValue, JsonValue, JsonValue]> = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  cases.forEach(([target, patch, expected], i) => {
    it(`RFC 7386 appendix A example ${i + 1}: ${JSON.stringify(target)} + ${JSON.stringify(patch)}`, () => {
      expect(applyMergePatch(target, patch)).to.deep.equal(expected);
    });
  });

  it('does not mutate the target or share structure with the patch', () => {
    const target = { metadata: { labels: { a: '1' } }, spec: { list: [1] } };
    const patch = { metadata: { labels: { b: '2' } }, spec: { list: [2] } };
    const out = applyMergePatch(target, patch) as { spec: { list: number[] } };
    expect(target).to.deep.equal({ metadata: { labels: { a: '1' } }, spec: { list: [1] } });
    out.spec.list.push(3);
    expect(patch.spec.list).to.deep.equal([2]);
  });

  it('merges Kubernetes labels and deletes one with null', () => {
    const out = applyMergePatch({ metadata: { name: 'x', labels: { a: '1', b: '2' } } }, { metadata: { labels: { b: null, c: '3' } } });
    expect(out).to.deep.equal({ metadata: { name: 'x', labels: { a: '1', c: '3' } } });
  });
});
