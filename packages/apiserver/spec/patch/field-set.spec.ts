import { expect } from 'chai';
import { FieldSet, canonicalJson, fieldElement, formatPath, keyElement, valueElement } from '../../src/patch/field-set.js';

describe('apiserver/patch field sets (FieldsV1)', () => {
  it('round-trips FieldsV1 with "." markers and Kubernetes ordering', () => {
    const wire = {
      'f:spec': {
        'f:containers': {
          'k:{"name":"web"}': { '.': {}, 'f:image': {}, 'f:name': {} },
        },
        'f:replicas': {},
      },
      'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
    };
    const set = FieldSet.fromFieldsV1(wire);
    expect(set.has(['f:spec', 'f:replicas'])).to.equal(true);
    expect(set.has(['f:spec', 'f:containers', 'k:{"name":"web"}'])).to.equal(true);
    expect(set.has(['f:spec', 'f:containers'])).to.equal(false);
    expect(set.has(['f:metadata', 'f:labels'])).to.equal(true);
    expect(JSON.stringify(set.toFieldsV1())).to.equal(
      '{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"web\\"}":{".":{},"f:image":{},"f:name":{}}},"f:replicas":{}}}',
    );
  });

  it('canonicalizes key elements (sorted keys) so equal keys match', () => {
    const set = FieldSet.fromFieldsV1({ 'k:{"protocol":"TCP","containerPort":80}': {} });
    expect(set.has([keyElement({ containerPort: 80, protocol: 'TCP' })])).to.equal(true);
    expect(keyElement({ protocol: 'TCP', containerPort: 80 })).to.equal('k:{"containerPort":80,"protocol":"TCP"}');
    expect(canonicalJson({ b: [1, { d: 1, c: 2 }], a: null })).to.equal('{"a":null,"b":[1,{"c":2,"d":1}]}');
  });

  it('orders fields before keys before values', () => {
    const set = FieldSet.of([
      [valueElement('x')],
      [keyElement({ name: 'b' })],
      [keyElement({ name: 'a' })],
      [fieldElement('z')],
      [fieldElement('a')],
    ]);
    expect(Object.keys(set.toFieldsV1())).to.deep.equal(['f:a', 'f:z', 'k:{"name":"a"}', 'k:{"name":"b"}', 'v:"x"']);
  });

  it('union, difference, intersection and covers work on members, not prefixes', () => {
    const a = FieldSet.of([['f:a', 'f:b'], ['f:c']]);
    const b = FieldSet.of([['f:a'], ['f:c']]);
    expect(a.union(b).paths()).to.deep.equal([['f:a'], ['f:a', 'f:b'], ['f:c']]);
    expect(a.difference(b).paths()).to.deep.equal([['f:a', 'f:b']]);
    expect(a.intersection(b).paths()).to.deep.equal([['f:c']]);
    expect(a.covers(['f:a'])).to.equal(true);
    expect(a.has(['f:a'])).to.equal(false);
    expect(a.difference(a).isEmpty()).to.equal(true);
    expect(a.withoutSubtrees([['f:a']]).paths()).to.deep.equal([['f:c']]);
  });

  it('formats paths like Kubernetes conflict messages', () => {
    expect(formatPath(['f:spec', 'f:containers', keyElement({ name: 'web' }), 'f:image'])).to.equal('.spec.containers[name="web"].image');
    expect(formatPath(['f:spec', 'f:ports', keyElement({ protocol: 'TCP', port: 80 })])).to.equal('.spec.ports[port=80,protocol="TCP"]');
    expect(formatPath(['f:metadata', 'f:finalizers', valueElement('a/b')])).to.equal('.metadata.finalizers[="a/b"]');
  });

  it('rejects malformed FieldsV1', () => {
    expect(() => FieldSet.fromFieldsV1([])).to.throw('must be an object');
    expect(() => FieldSet.fromFieldsV1({ 'x:y': {} })).to.throw('invalid path element');
    expect(() => FieldSet.fromFieldsV1({ 'k:notjson': {} })).to.throw('invalid path element');
    expect(() => FieldSet.fromFieldsV1({ 'f:a': 1 })).to.throw('must be an object');
  });
});
