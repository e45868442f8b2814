import { expect } from 'chai';
import { deepClone, deepEqual, isJsonObject, type JsonObject } from '../../src/base/json.js';

describe('apiserver/json', () => {
  it('isJsonObject accepts plain objects only', () => {
    expect(isJsonObject({})).to.equal(true);
    expect(isJsonObject({ a: 1 })).to.equal(true);
    expect(isJsonObject(null)).to.equal(false);
    expect(isJsonObject([])).to.equal(false);
    expect(isJsonObject('x')).to.equal(false);
    expect(isJsonObject(undefined)).to.equal(false);
  });

  it('deepEqual ignores key order but not array order', () => {
    expect(deepEqual({ a: 1, b: [1, { c: 'x' }] }, { b: [1, { c: 'x' }], a: 1 })).to.equal(true);
    expect(deepEqual([1, 2], [2, 1])).to.equal(false);
    expect(deepEqual({ a: 1 }, { a: 1, b: 2 })).to.equal(false);
    expect(deepEqual({ a: 1, b: 2 }, { a: 1 })).to.equal(false);
    expect(deepEqual({ a: null }, {})).to.equal(false);
    expect(deepEqual({ a: undefined }, {})).to.equal(true);
    expect(deepEqual([], {})).to.equal(false);
    expect(deepEqual(1, '1')).to.equal(false);
    expect(deepEqual(null, {})).to.equal(false);
    expect(deepEqual('a', 'a')).to.equal(true);
  });

  it('deepClone shares nothing with the input', () => {
    const src: JsonObject = { a: [{ b: 1 }], c: { d: 'x' }, e: null };
    const copy = deepClone(src);
    expect(copy).to.deep.equal(src);
    (copy['a'] as JsonObject[])[0]['b'] = 2;
    (copy['c'] as JsonObject)['d'] = 'y';
    expect(src).to.deep.equal({ a: [{ b: 1 }], c: { d: 'x' }, e: null });
  });
});

describe('apiserver/json setOwn', () => {
  it('keeps a "__proto__" key as data, not as a prototype', async () => {
    const { setOwn, hasOwn } = await import('../../src/base/json.js');
    const parsed = JSON.parse('{"__proto__": {"polluted": true}}') as JsonObject;
    const copy = deepClone(parsed);
    expect(hasOwn(copy, '__proto__')).to.equal(true);
    expect((copy as Record<string, unknown>)['polluted']).to.equal(undefined);
    const target: JsonObject = {};
    setOwn(target, '__proto__', { x: 1 });
    expect(Object.keys(target)).to.deep.equal(['__proto__']);
    expect(Object.getPrototypeOf(target)).to.equal(Object.prototype);
  });
});
