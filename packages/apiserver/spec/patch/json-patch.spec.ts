import { expect } from 'chai';
import { applyJsonPatch, escapeJsonPointerToken, parseJsonPointer } from '../../src/patch/json-patch.js';
import { PatchError } from '../../src/patch/errors.js';
import type { JsonValue } from '../../src/base/json.js';

function patchError(fn: () => unknown): PatchError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(PatchError);
    return err as PatchError;
  }
  throw new Error('expected a PatchError');
}

describe('apiserver/patch json-patch (RFC 6902)', () => {
  describe('RFC 6902 appendix A', () => {
    const cases: Array<[string, JsonValue, unknown, JsonValue]> = [
      ['A.1 adding an object member', { foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux' }], { baz: 'qux', foo: 'bar' }],
      [
        'A.2 adding an array element',
        { foo: ['bar', 'baz'] },
        [{ op: 'add', path: '/foo/1', value: 'qux' }],
        { foo: ['bar', 'qux', 'baz'] },
      ],
      ['A.3 removing an object member', { baz: 'qux', foo: 'bar' }, [{ op: 'remove', path: '/baz' }], { foo: 'bar' }],
      ['A.4 removing an array element', { foo: ['bar', 'qux', 'baz'] }, [{ op: 'remove', path: '/foo/1' }], { foo: ['bar', 'baz'] }],
      ['A.5 replacing a value', { baz: 'qux', foo: 'bar' }, [{ op: 'replace', path: '/baz', value: 'boo' }], { baz: 'boo', foo: 'bar' }],
      [
        'A.6 moving a value',
        { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } },
        [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }],
        { foo: { bar: 'baz' }, qux: { corge: 'grault', thud: 'fred' } },
      ],
      [
        'A.7 moving an array element',
        { foo: ['all', 'grass', 'cows', 'eat'] },
        [{ op: 'move', from: '/foo/1', path: '/foo/3' }],
        { foo: ['all', 'cows', 'eat', 'grass'] },
      ],
      [
        'A.8 testing a value: success',
        { baz: 'qux', foo: ['a', 2, 'c'] },
        [
          { op: 'test', path: '/baz', value: 'qux' },
          { op: 'test', path: '/foo/1', value: 2 },
        ],
        { baz: 'qux', foo: ['a', 2, 'c'] },
      ],
      [
        'A.10 adding a nested member object',
        { foo: 'bar' },
        [{ op: 'add', path: '/child', value: { grandchild: {} } }],
        { foo: 'bar', child: { grandchild: {} } },
      ],
      [
        'A.11 ignoring unrecognized elements',
        { foo: 'bar' },
        [{ op: 'add', path: '/baz', value: 'qux', xyz: 123 }],
        { foo: 'bar', baz: 'qux' },
      ],
      ['A.14 ~ escape ordering', { '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: 10 }], { '/': 9, '~1': 10 }],
      [
        'A.16 adding an array value',
        { foo: ['bar'] },
        [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }],
        { foo: ['bar', ['abc', 'def']] },
      ],
    ];
    for (const [title, doc, patch, expected] of cases) {
      it(title, () => {
        expect(applyJsonPatch(doc, patch)).to.deep.equal(expected);
      });
    }

    it('A.9 testing a value: error (422)', () => {
      const err = patchError(() => applyJsonPatch({ baz: 'qux' }, [{ op: 'test', path: '/baz', value: 'bar' }]));
      expect(err.code).to.equal(422);
      expect(err.message).to.contain('test failed').and.contain('"qux"');
    });

    it('A.12 adding to a nonexistent target (422)', () => {
      const err = patchError(() => applyJsonPatch({ foo: 'bar' }, [{ op: 'add', path: '/baz/bat', value: 'qux' }]));
      expect(err.code).to.equal(422);
      expect(err.message).to.contain('"/baz"');
    });

    it('A.13 an operation with duplicate "op" members is an error', () => {
      // JSON.parse keeps the last "op", so this is a remove of a member that does not exist.
      const patch = JSON.parse('[{ "op": "add", "path": "/baz", "value": "qux", "op": "remove" }]') as unknown;
      expect(() => applyJsonPatch({ foo: 'bar' }, patch)).to.throw(PatchError);
    });

    it('A.15 comparing strings and numbers (422)', () => {
      const err = patchError(() => applyJsonPatch({ '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: '10' }]));
      expect(err.code).to.equal(422);
    });
  });

  describe('semantics', () => {
    it('never mutates the target, and all operations apply or none', () => {
      const doc = { a: [1, 2], b: { c: 1 } };
      const before = JSON.parse(JSON.stringify(doc)) as JsonValue;
      expect(() =>
        applyJsonPatch(doc, [
          { op: 'add', path: '/a/-', value: 3 },
          { op: 'remove', path: '/b/missing' },
        ]),
      ).to.throw(PatchError);
      applyJsonPatch(doc, [{ op: 'replace', path: '/b/c', value: 2 }]);
      expect(doc).to.deep.equal(before);
    });

    it('add and replace at the root replace the whole document', () => {
      expect(applyJsonPatch({ a: 1 }, [{ op: 'add', path: '', value: [1] }])).to.deep.equal([1]);
      expect(applyJsonPatch({ a: 1 }, [{ op: 'replace', path: '', value: { b: 2 } }])).to.deep.equal({ b: 2 });
    });

    it('add replaces an existing member and appends at index == length', () => {
      expect(applyJsonPatch({ a: 1 }, [{ op: 'add', path: '/a', value: 2 }])).to.deep.equal({ a: 2 });
      expect(applyJsonPatch({ a: [1] }, [{ op: 'add', path: '/a/1', value: 2 }])).to.deep.equal({ a: [1, 2] });
    });

    it('add with an index past the end is 422', () => {
      expect(patchError(() => applyJsonPatch({ a: [1] }, [{ op: 'add', path: '/a/2', value: 2 }])).code).to.equal(422);
    });

    it('replace and remove of a missing member are 422', () => {
      expect(patchError(() => applyJsonPatch({}, [{ op: 'replace', path: '/a', value: 1 }])).code).to.equal(422);
      expect(patchError(() => applyJsonPatch({ a: [] }, [{ op: 'remove', path: '/a/0' }])).code).to.equal(422);
      expect(patchError(() => applyJsonPatch({ a: 1 }, [{ op: 'remove', path: '' }])).code).to.equal(422);
    });

    it('rejects leading zeros, negative indices and "-" outside add', () => {
      expect(patchError(() => applyJsonPatch({ a: [1, 2] }, [{ op: 'remove', path: '/a/01' }])).code).to.equal(422);
      expect(patchError(() => applyJsonPatch({ a: [1, 2] }, [{ op: 'remove', path: '/a/-1' }])).code).to.equal(422);
      expect(patchError(() => applyJsonPatch({ a: [1, 2] }, [{ op: 'replace', path: '/a/-', value: 0 }])).code).to.equal(422);
    });

    it('copy deep-copies the value', () => {
      const out = applyJsonPatch({ a: { b: [1] } }, [
        { op: 'copy', from: '/a', path: '/c' },
        { op: 'add', path: '/c/b/-', value: 2 },
      ]);
      expect(out).to.deep.equal({ a: { b: [1] }, c: { b: [1, 2] } });
    });

    it('move into its own child is 422; move onto itself is a no-op', () => {
      expect(patchError(() => applyJsonPatch({ a: { b: 1 } }, [{ op: 'move', from: '/a', path: '/a/b/c' }])).code).to.equal(422);
      expect(applyJsonPatch({ a: { b: 1 } }, [{ op: 'move', from: '/a', path: '/a' }])).to.deep.equal({ a: { b: 1 } });
    });

    it('works on Kubernetes-style paths with escaped slashes', () => {
      const obj = { metadata: { labels: { 'app.kubernetes.io/name': 'x' } } };
      const out = applyJsonPatch(obj, [
        { op: 'test', path: '/metadata/labels/app.kubernetes.io~1name', value: 'x' },
        { op: 'replace', path: '/metadata/labels/app.kubernetes.io~1name', value: 'y' },
      ]);
      expect(out).to.deep.equal({ metadata: { labels: { 'app.kubernetes.io/name': 'y' } } });
    });

    it('add with a null value sets null', () => {
      expect(applyJsonPatch({}, [{ op: 'add', path: '/a', value: null }])).to.deep.equal({ a: null });
    });
  });

  describe('malformed documents are 400', () => {
    const bad: Array<[string, unknown, string]> = [
      ['not an array', { op: 'add' }, 'must be an array'],
      ['an operation that is not an object', ['add'], 'operation 0 must be an object'],
      ['no op', [{ path: '/a' }], 'no "op"'],
      ['unknown op', [{ op: 'merge', path: '/a' }], 'unknown op "merge"'],
      ['no path', [{ op: 'remove' }], '"path"'],
      ['non-string path', [{ op: 'remove', path: 3 }], '"path"'],
      ['no value', [{ op: 'add', path: '/a' }], 'no "value"'],
      ['no from', [{ op: 'move', path: '/a' }], '"from"'],
      ['pointer without leading slash', [{ op: 'remove', path: 'a' }], 'must be empty or start with "/"'],
      ['bad ~ escape', [{ op: 'remove', path: '/a~2' }], '"~" must be followed by 0 or 1'],
    ];
    for (const [title, patch, fragment] of bad) {
      it(title, () => {
        const err = patchError(() => applyJsonPatch({ a: 1 }, patch));
        expect(err.code).to.equal(400);
        expect(err.message).to.contain(fragment);
      });
    }
    it('names the offending operation index', () => {
      const err = patchError(() =>
        applyJsonPatch({}, [
          { op: 'add', path: '/a', value: 1 },
          { op: 'nope', path: '/b' },
        ]),
      );
      expect(err.message).to.contain('operation 1');
    });
  });

  describe('bounds, as the real server has them', () => {
    it('refuses a patch of more than 10,000 operations with 413, naming the limit and the count', () => {
      const ops = Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/a', value: 1 }));
      const err = patchError(() => applyJsonPatch({ a: 1 }, ops));
      expect(err.code).to.equal(413);
      expect(err.statusReason).to.equal('RequestEntityTooLarge');
      expect(err.message).to.equal('The allowed maximum operations in a JSON patch is 10000, got 10001');
      expect(applyJsonPatch({ a: 1 }, ops.slice(1))).to.deep.equal({ a: 1 });
    });

    it('refuses copies that together add more than 3 MiB (a copy chain doubling a value) with 422, naming the operation', () => {
      const chain = [{ op: 'add', path: '/a', value: ['x'.repeat(1024)] }];
      for (let i = 0; i < 12; i++) chain.push({ op: 'copy', from: '/a', path: '/a/-' } as never);
      const err = patchError(() => applyJsonPatch({}, chain));
      expect(err.code).to.equal(422);
      expect(err.message).to.match(
        /^json patch operation 12 \(copy "\/a\/-"\) cannot apply: the accumulated size increase of copy is over 3145728 bytes/,
      );
    });

    it('counts every copy of one patch toward the 3 MiB, and allows copies under it', () => {
      const big = 'x'.repeat(1024 * 1024 - 2);
      const three = [0, 1, 2].map((i) => ({ op: 'copy', from: '/s', path: `/c${i}` }));
      expect(patchError(() => applyJsonPatch({ s: big }, [...three, { op: 'copy', from: '/s', path: '/c3' }])).message).to.contain(
        'operation 3 (copy',
      );
      const out = applyJsonPatch({ s: big }, three) as Record<string, string>;
      expect(out['c2']).to.have.length(big.length);
    });
  });

  it('parses and escapes pointer tokens', () => {
    expect(parseJsonPointer('')).to.deep.equal([]);
    expect(parseJsonPointer('/')).to.deep.equal(['']);
    expect(parseJsonPointer('/a~1b/c~0d/~01')).to.deep.equal(['a/b', 'c~d', '~1']);
    expect(escapeJsonPointerToken('a/b~c')).to.equal('a~1b~0c');
  });
});
