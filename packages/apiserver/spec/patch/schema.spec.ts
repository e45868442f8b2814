import { expect } from 'chai';
import { builtInKinds, fieldTypeOf, itemTypeOf, listPatchStrategy, typeInfoFor, type FieldType } from '../../src/patch/schema.js';

function at(root: FieldType | undefined, ...path: string[]): FieldType | undefined {
  let t = root;
  for (const step of path) t = step === '[]' ? itemTypeOf(t) : fieldTypeOf(t, step);
  return t;
}

describe('apiserver/patch schema', () => {
  it('knows the built-ins the server serves and nothing else', () => {
    for (const [group, kind] of [
      ['', 'Namespace'],
      ['', 'ConfigMap'],
      ['', 'Secret'],
      ['', 'Service'],
      ['', 'ServiceAccount'],
      ['', 'Pod'],
      ['', 'Event'],
      ['apps', 'Deployment'],
      ['networking.k8s.io', 'Ingress'],
      ['coordination.k8s.io', 'Lease'],
      ['events.k8s.io', 'Event'],
      ['apiextensions.k8s.io', 'CustomResourceDefinition'],
    ] as const) {
      expect(typeInfoFor(group, kind), `${group}/${kind}`).to.not.equal(undefined);
    }
    expect(typeInfoFor('example.com', 'Widget')).to.equal(undefined);
    expect(typeInfoFor('apps', 'ConfigMap')).to.equal(undefined);
    expect(builtInKinds()).to.deep.include(['apps', 'Deployment']);
  });

  it('describes Deployment pod template lists', () => {
    const root = typeInfoFor('apps', 'Deployment')!.root;
    const container = at(root, 'spec', 'template', 'spec', 'containers', '[]');
    expect(at(root, 'spec', 'template', 'spec', 'containers'))
      .to.include({ listType: 'map' })
      .and.have.deep.property('keys', ['name']);
    expect(at(container, 'ports')).to.deep.include({ keys: ['containerPort', 'protocol'], keyDefaults: { protocol: 'TCP' } });
    expect(listPatchStrategy(at(container, 'ports'))).to.deep.equal({ strategy: 'merge', mergeKey: 'containerPort' });
    expect(listPatchStrategy(at(container, 'env'))).to.deep.equal({ strategy: 'merge', mergeKey: 'name' });
    expect(listPatchStrategy(at(container, 'volumeMounts'))).to.deep.equal({ strategy: 'merge', mergeKey: 'mountPath' });
    expect(listPatchStrategy(at(root, 'spec', 'template', 'spec', 'volumes'))).to.deep.equal({ strategy: 'merge', mergeKey: 'name' });
    expect(listPatchStrategy(at(root, 'spec', 'template', 'spec', 'imagePullSecrets'))).to.deep.equal({
      strategy: 'merge',
      mergeKey: 'name',
    });
    expect(listPatchStrategy(at(root, 'spec', 'template', 'spec', 'tolerations')).strategy).to.equal('replace');
    expect(at(root, 'spec', 'selector')).to.include({ kind: 'struct', atomic: true });
  });

  it('describes metadata, conditions and Service ports', () => {
    const svc = typeInfoFor('', 'Service')!.root;
    expect(at(svc, 'metadata', 'finalizers')).to.include({ listType: 'set' });
    expect(at(svc, 'metadata', 'ownerReferences')).to.deep.include({ keys: ['uid'] });
    expect(at(svc, 'status', 'conditions')).to.deep.include({ keys: ['type'] });
    expect(at(svc, 'spec', 'ports')).to.deep.include({ keys: ['port', 'protocol'] });
    expect(listPatchStrategy(at(svc, 'spec', 'ports'))).to.deep.equal({ strategy: 'merge', mergeKey: 'port' });
    expect(at(svc, 'spec', 'selector')).to.include({ kind: 'map', atomic: true });
    expect(listPatchStrategy(at(svc, 'spec', 'undeclared')).strategy).to.equal('replace');
  });
});
