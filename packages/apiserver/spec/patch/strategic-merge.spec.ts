import { expect } from 'chai';
import { applyStrategicMergePatch } from '../../src/patch/strategic-merge.js';
import { PatchError } from '../../src/patch/errors.js';
import { typeInfoFor, type TypeInfo } from '../../src/patch/schema.js';
import type { JsonObject } from '../../src/base/json.js';

const deploymentType = typeInfoFor('apps', 'Deployment')!;
const serviceType = typeInfoFor('', 'Service')!;

function deployment(containers: JsonObject[], extraPodSpec: JsonObject = {}): JsonObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd', namespace: 'ns' },
    spec: { replicas: 1, template: { metadata: { labels: { app: 'd' } }, spec: { containers, ...extraPodSpec } } },
  };
}

function podSpecPatch(podSpec: JsonObject): JsonObject {
  return { spec: { template: { spec: podSpec } } };
}

function podSpecOf(obj: JsonObject): JsonObject {
  return ((obj['spec'] as JsonObject)['template'] as JsonObject)['spec'] as JsonObject;
}

function containersOf(obj: JsonObject): JsonObject[] {
  return podSpecOf(obj)['containers'] as JsonObject[];
}

function smpError(target: JsonObject, patch: JsonObject, type: TypeInfo = deploymentType): PatchError {
  try {
    applyStrategicMergePatch(target, patch, type);
  } catch (err) {
    expect(err).to.be.instanceOf(PatchError);
    return err as PatchError;
  }
  throw new Error('expected a PatchError');
}

describe('apiserver/patch strategic merge patch', () => {
  const live = deployment([
    {
      name: 'web',
      image: 'web:1',
      env: [
        { name: 'A', value: '1' },
        { name: 'B', value: '2' },
      ],
      ports: [{ containerPort: 80, name: 'http' }],
    },
    { name: 'side', image: 'side:1' },
  ]);

  it('merges containers by name, leaving the others alone', () => {
    const out = applyStrategicMergePatch(live, podSpecPatch({ containers: [{ name: 'web', image: 'web:2' }] }), deploymentType);
    expect(containersOf(out)).to.deep.equal([
      {
        name: 'web',
        image: 'web:2',
        env: [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ],
        ports: [{ containerPort: 80, name: 'http' }],
      },
      { name: 'side', image: 'side:1' },
    ]);
    expect((out['spec'] as JsonObject)['replicas']).to.equal(1);
  });

  it('puts a container the live list did not have first, like Kubernetes', () => {
    const out = applyStrategicMergePatch(live, podSpecPatch({ containers: [{ name: 'new', image: 'n:1' }] }), deploymentType);
    expect(containersOf(out).map((c) => c['name'])).to.deep.equal(['new', 'web', 'side']);
  });

  it('orders patched items as the patch does and slots server-only items by their old position', () => {
    const three = deployment([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
    const out = applyStrategicMergePatch(
      three,
      podSpecPatch({
        containers: [
          { name: 'c', image: 'x' },
          { name: 'a', image: 'y' },
        ],
      }),
      deploymentType,
    );
    // b preceded c on the server, so it stays before the first patch item it preceded.
    expect(containersOf(out)).to.deep.equal([{ name: 'b' }, { name: 'c', image: 'x' }, { name: 'a', image: 'y' }]);
  });

  it('merges env by name inside a container, and null deletes a field of an item', () => {
    const out = applyStrategicMergePatch(
      live,
      podSpecPatch({
        containers: [
          {
            name: 'web',
            env: [
              { name: 'B', value: null, valueFrom: { fieldRef: { fieldPath: 'x' } } },
              { name: 'C', value: '3' },
            ],
          },
        ],
      }),
      deploymentType,
    );
    expect(containersOf(out)[0]['env']).to.deep.equal([
      { name: 'A', value: '1' },
      { name: 'B', valueFrom: { fieldRef: { fieldPath: 'x' } } },
      { name: 'C', value: '3' },
    ]);
  });

  it('merges container ports by containerPort', () => {
    const out = applyStrategicMergePatch(
      live,
      podSpecPatch({ containers: [{ name: 'web', ports: [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 443 }] }] }),
      deploymentType,
    );
    expect(containersOf(out)[0]['ports']).to.deep.equal([{ containerPort: 80, name: 'http', protocol: 'TCP' }, { containerPort: 443 }]);
  });

  it('merges volumes by name and volumeMounts by mountPath', () => {
    const withVolumes = deployment([{ name: 'web', volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg' }] }], {
      volumes: [{ name: 'cfg', configMap: { name: 'c1' } }],
    });
    const out = applyStrategicMergePatch(
      withVolumes,
      podSpecPatch({
        volumes: [{ name: 'data', emptyDir: {} }],
        containers: [
          {
            name: 'web',
            volumeMounts: [
              { mountPath: '/etc/cfg', readOnly: true },
              { name: 'data', mountPath: '/data' },
            ],
          },
        ],
      }),
      deploymentType,
    );
    expect(podSpecOf(out)['volumes']).to.deep.equal([
      { name: 'data', emptyDir: {} },
      { name: 'cfg', configMap: { name: 'c1' } },
    ]);
    expect(containersOf(out)[0]['volumeMounts']).to.deep.equal([
      { name: 'cfg', mountPath: '/etc/cfg', readOnly: true },
      { name: 'data', mountPath: '/data' },
    ]);
  });

  it('replaces atomic lists (tolerations, args) and lists the schema does not describe', () => {
    const base = deployment([{ name: 'web', args: ['a', 'b'], custom: [1, 2] }], { tolerations: [{ key: 'k1', operator: 'Exists' }] });
    const out = applyStrategicMergePatch(
      base,
      podSpecPatch({ tolerations: [{ key: 'k2', operator: 'Exists' }], containers: [{ name: 'web', args: ['c'], custom: [3] }] }),
      deploymentType,
    );
    expect(podSpecOf(out)['tolerations']).to.deep.equal([{ key: 'k2', operator: 'Exists' }]);
    expect(containersOf(out)[0]).to.deep.equal({ name: 'web', args: ['c'], custom: [3] });
  });

  it('$patch: delete removes a keyed item', () => {
    const out = applyStrategicMergePatch(live, podSpecPatch({ containers: [{ name: 'side', $patch: 'delete' }] }), deploymentType);
    expect(containersOf(out).map((c) => c['name'])).to.deep.equal(['web']);
  });

  it('$patch: replace in a list replaces it with the other elements', () => {
    const out = applyStrategicMergePatch(
      live,
      podSpecPatch({ containers: [{ $patch: 'replace' }, { name: 'only', image: 'o', gone: null }] }),
      deploymentType,
    );
    expect(containersOf(out)).to.deep.equal([{ name: 'only', image: 'o' }]);
  });

  it('$patch: replace in a map replaces the map; $patch: delete empties it; $patch: merge merges', () => {
    const base = { ...live, metadata: { name: 'd', labels: { a: '1', b: '2' }, annotations: { x: 'y' } } };
    const replaced = applyStrategicMergePatch(base, { metadata: { labels: { $patch: 'replace', c: '3' } } }, deploymentType);
    expect((replaced['metadata'] as JsonObject)['labels']).to.deep.equal({ c: '3' });
    const deleted = applyStrategicMergePatch(base, { metadata: { annotations: { $patch: 'delete' } } }, deploymentType);
    expect((deleted['metadata'] as JsonObject)['annotations']).to.deep.equal({});
    const merged = applyStrategicMergePatch(base, { metadata: { labels: { $patch: 'merge', c: '3' } } }, deploymentType);
    expect((merged['metadata'] as JsonObject)['labels']).to.deep.equal({ a: '1', b: '2', c: '3' });
  });

  it('finalizers are a set: union, no duplicates, new values first', () => {
    const base = { ...live, metadata: { name: 'd', finalizers: ['a', 'b'] } };
    const out = applyStrategicMergePatch(base, { metadata: { finalizers: ['c', 'a'] } }, deploymentType);
    expect((out['metadata'] as JsonObject)['finalizers']).to.deep.equal(['c', 'a', 'b']);
  });

  it('$deleteFromPrimitiveList removes values from a set', () => {
    const base = { ...live, metadata: { name: 'd', finalizers: ['a', 'b', 'c'] } };
    const out = applyStrategicMergePatch(base, { metadata: { '$deleteFromPrimitiveList/finalizers': ['b', 'zz'] } }, deploymentType);
    expect((out['metadata'] as JsonObject)['finalizers']).to.deep.equal(['a', 'c']);
  });

  it('$setElementOrder reorders a keyed list, even without a patch list', () => {
    const three = deployment([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
    const out = applyStrategicMergePatch(
      three,
      podSpecPatch({ '$setElementOrder/containers': [{ name: 'c' }, { name: 'a' }, { name: 'b' }] }),
      deploymentType,
    );
    expect(containersOf(out).map((c) => c['name'])).to.deep.equal(['c', 'a', 'b']);
  });

  it('$setElementOrder with a server-only item interleaves it by live position (kubectl apply shape)', () => {
    const base = deployment([{ name: 'a' }, { name: 'x' }, { name: 'b' }]);
    const out = applyStrategicMergePatch(
      base,
      podSpecPatch({ '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }], containers: [{ name: 'a', image: 'i' }] }),
      deploymentType,
    );
    expect(containersOf(out)).to.deep.equal([{ name: 'x' }, { name: 'b' }, { name: 'a', image: 'i' }]);
  });

  it('$setElementOrder on a set list orders values', () => {
    const base = { ...live, metadata: { name: 'd', finalizers: ['a', 'b'] } };
    const out = applyStrategicMergePatch(
      base,
      { metadata: { '$setElementOrder/finalizers': ['b', 'c', 'a'], finalizers: ['c'] } },
      deploymentType,
    );
    expect((out['metadata'] as JsonObject)['finalizers']).to.deep.equal(['b', 'c', 'a']);
  });

  it('$setElementOrder that contradicts the patch list is 400', () => {
    const err = smpError(
      live,
      podSpecPatch({ '$setElementOrder/containers': [{ name: 'web' }, { name: 'side' }], containers: [{ name: 'side' }, { name: 'web' }] }),
    );
    expect(err.code).to.equal(400);
    expect(err.message).to.contain('$setElementOrder/containers');
  });

  it('$retainKeys clears unlisted fields (Deployment strategy switch)', () => {
    const base = {
      ...live,
      spec: { ...(live['spec'] as JsonObject), strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } },
    };
    const out = applyStrategicMergePatch(base, { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } }, deploymentType);
    expect((out['spec'] as JsonObject)['strategy']).to.deep.equal({ type: 'Recreate' });
    const err = smpError(base, { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate', rollingUpdate: { maxSurge: 2 } } } });
    expect(err.code).to.equal(400);
    expect(err.message).to.contain('"rollingUpdate"');
  });

  it('merges Service ports by port, ownerReferences by uid, conditions by type', () => {
    const svc: JsonObject = {
      metadata: { name: 's', ownerReferences: [{ uid: 'u1', name: 'o1', kind: 'X' }] },
      spec: { ports: [{ port: 80, targetPort: 8080 }, { port: 443 }] },
      status: { conditions: [{ type: 'Ready', status: 'False' }] },
    };
    const out = applyStrategicMergePatch(
      svc,
      {
        metadata: { ownerReferences: [{ uid: 'u1', controller: true }] },
        spec: { ports: [{ port: 80, targetPort: 9090 }] },
        status: { conditions: [{ type: 'Ready', status: 'True' }] },
      },
      serviceType,
    );
    expect(out).to.deep.equal({
      metadata: { name: 's', ownerReferences: [{ uid: 'u1', name: 'o1', kind: 'X', controller: true }] },
      spec: { ports: [{ port: 80, targetPort: 9090 }, { port: 443 }] },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    });
  });

  it('Job status conditions merge by type (patchStrategy merge although SSA treats them as atomic)', () => {
    const job = {
      status: {
        conditions: [
          { type: 'Complete', status: 'False' },
          { type: 'Failed', status: 'False' },
        ],
      },
    };
    const out = applyStrategicMergePatch(
      job,
      { status: { conditions: [{ type: 'Complete', status: 'True' }] } },
      typeInfoFor('batch', 'Job')!,
    );
    expect(out).to.deep.equal({
      status: {
        conditions: [
          { type: 'Complete', status: 'True' },
          { type: 'Failed', status: 'False' },
        ],
      },
    });
  });

  it('null deletes a field, and a null for an absent field is dropped', () => {
    const out = applyStrategicMergePatch(
      live,
      { spec: { replicas: null, paused: null, template: { metadata: { labels: { extra: 'x', gone: null } } } } },
      deploymentType,
    );
    expect(out['spec']).to.not.have.property('replicas');
    expect(out['spec']).to.not.have.property('paused');
    expect(((out['spec'] as JsonObject)['template'] as JsonObject)['metadata']).to.deep.equal({ labels: { app: 'd', extra: 'x' } });
  });

  it('directives inside a newly created list are processed, not stored', () => {
    const out = applyStrategicMergePatch(
      deployment([{ name: 'web' }]),
      podSpecPatch({
        initContainers: [
          { name: 'init', image: 'i', gone: null },
          { name: 'nope', $patch: 'delete' },
        ],
      }),
      deploymentType,
    );
    expect(podSpecOf(out)['initContainers']).to.deep.equal([{ name: 'init', image: 'i' }]);
  });

  it('never mutates the target or the patch', () => {
    const target = JSON.parse(JSON.stringify(live)) as JsonObject;
    const patch = podSpecPatch({ containers: [{ name: 'web', image: 'web:9' }] });
    const patchCopy = JSON.parse(JSON.stringify(patch)) as JsonObject;
    const out = applyStrategicMergePatch(target, patch, deploymentType);
    expect(target).to.deep.equal(live);
    expect(patch).to.deep.equal(patchCopy);
    containersOf(out)[0]['image'] = 'changed';
    expect(containersOf(patch)[0]['image']).to.equal('web:9');
  });

  describe('errors', () => {
    it('an item without its merge key is 422 and names the key', () => {
      const err = smpError(live, podSpecPatch({ containers: [{ image: 'x' }] }));
      expect(err.code).to.equal(422);
      expect(err.message).to.contain('merge key "name"').and.contain('.spec.template.spec.containers');
    });
    it('a non-object item in a keyed list is 422', () => {
      expect(smpError(live, podSpecPatch({ containers: ['web'] })).code).to.equal(422);
    });
    it('an unknown $patch directive is 400', () => {
      expect(smpError(live, { spec: { $patch: 'explode' } }).code).to.equal(400);
      expect(smpError(live, podSpecPatch({ containers: [{ name: 'web', $patch: 'explode' }] })).code).to.equal(400);
    });
    it('a malformed $retainKeys, $deleteFromPrimitiveList or $setElementOrder is 400', () => {
      expect(smpError(live, { spec: { $retainKeys: 'type' } }).code).to.equal(400);
      expect(smpError(live, { metadata: { '$deleteFromPrimitiveList/finalizers': 'a' } }).code).to.equal(400);
      expect(smpError(live, podSpecPatch({ '$setElementOrder/containers': [{ image: 'x' }] })).code).to.equal(400);
    });
    it('a patch that is not an object is 400', () => {
      expect(smpError(live, [] as unknown as JsonObject).code).to.equal(400);
    });
  });
});

describe('apiserver/patch strategic merge: large lists (issue 22)', () => {
  // Not a timing assertion: the old quadratic merge needed minutes for this (it blocked every
  // client for 48 s on a 645 KB patch); the figure is in bench/results/apiserver-hostile.json.
  it('merges a keyed list of 20,000 items with a patch of 20,000 in one pass (once n² comparisons)', function () {
    this.timeout(15_000);
    const n = 20_000;
    const env = (from: number) => Array.from({ length: n }, (_, i) => ({ name: `V${(i + from) % (2 * n)}`, value: 'x' }));
    const live: JsonObject = { spec: { template: { metadata: { finalizers: [] }, spec: { containers: [{ name: 'c', env: env(0) }] } } } };
    const patch: JsonObject = {
      spec: { template: { spec: { containers: [{ name: 'c', env: env(n / 2).reverse() }] } } },
    };
    const out = applyStrategicMergePatch(live, patch, deploymentType) as {
      spec: { template: { spec: { containers: { env: { name: string }[] }[] } } };
    };
    const merged = out.spec.template.spec.containers[0].env;
    expect(merged).to.have.length(n + n / 2);
    expect(new Set(merged.map((e) => e.name)).size).to.equal(n + n / 2);
    // Patch items come in patch order; the first patch item is the last of the reversed range.
    expect(merged.filter((e) => Number(e.name.slice(1)) >= n).map((e) => e.name)[0]).to.equal(`V${n + n / 2 - 1}`);
  });
});
