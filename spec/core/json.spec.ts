import { expect } from 'chai';
import { jsonEqual, pointerSegment } from '../../lib/core/index.js';

describe('jsonEqual and pointerSegment (core/json.ts)', () => {
  it('compares as JSON does: key order ignored, an undefined-valued key absent, arrays in order', () => {
    expect(jsonEqual({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 })).to.equal(true);
    expect(jsonEqual({ a: 1, b: undefined }, { a: 1 })).to.equal(true);
    expect(jsonEqual({ a: 1 }, { a: 1, b: null })).to.equal(false);
    expect(jsonEqual([1, 2], [2, 1])).to.equal(false);
    expect(jsonEqual([], {})).to.equal(false);
  });

  it('escapes ~ and / in a pointer segment', () => {
    expect(pointerSegment('a/b~c')).to.equal('a~1b~0c');
    expect(pointerSegment(3)).to.equal('3');
  });
});
