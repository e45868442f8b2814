import { expect } from 'chai';
import { kubernetesMatches, kubernetesMismatch } from '../../lib/dependent/index.js';
import { appliedFieldsOf } from '../../lib/dependent/matchers.js';

const desired = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'c',
    namespace: 'default',
    labels: { app: 'web' },
    ownerReferences: [{ apiVersion: 'sample.rxkube.dev/v1', kind: 'Widget', name: 'w', uid: 'u1', controller: true }],
  },
  data: { a: '1' },
};

/** The object as the server answers it: server metadata, another owner, another manager's field. */
function actual(extra: Record<string, unknown> = {}) {
  return {
    ...desired,
    metadata: {
      ...desired.metadata,
      uid: 'x',
      resourceVersion: '7',
      creationTimestamp: '2024-01-01T00:00:00Z',
      labels: { app: 'web', team: 'them' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', uid: 'u0' }, ...desired.metadata.ownerReferences],
      finalizers: ['example.com/hold'],
      managedFields: [
        {
          manager: 'ctl',
          operation: 'Apply',
          apiVersion: 'v1',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:labels': { 'f:app': {} }, 'f:ownerReferences': { 'k:{"uid":"u1"}': { '.': {}, 'f:name': {} } } },
            'f:data': { 'f:a': {} },
          },
        },
        { manager: 'other', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:b': {} } } },
      ],
    },
    data: { a: '1', b: 'theirs' },
    ...extra,
  };
}

describe('dependent: kubernetesMatches (the default matcher)', () => {
  it('DR2: desired ⊆ actual matches, ignoring server metadata, extra owners, labels and fields of other managers', () => {
    expect(kubernetesMismatch(actual(), desired, { fieldManager: 'ctl' })).to.equal(undefined);
  });

  it('DR2: a different value of a desired field is a mismatch, named by its path', () => {
    expect(kubernetesMismatch(actual({ data: { a: '2', b: 'theirs' } }), desired)).to.equal('data.a');
    expect(kubernetesMismatch(actual(), { ...desired, metadata: { ...desired.metadata, labels: { app: 'api' } } })).to.equal(
      'metadata.labels.app',
    );
    expect(kubernetesMismatch(actual(), { ...desired, data: { a: '1', c: '3' } })).to.equal('data.c');
  });

  it('DR2: a field our manager owns that the desired object no longer sets is a mismatch', () => {
    const withoutA = { ...desired, data: {} };
    expect(kubernetesMismatch(actual(), withoutA, { fieldManager: 'ctl' })).to.equal('metadata.managedFields[f:data.f:a]');
    // Without the field manager (or for another manager) only desired ⊆ actual is checked.
    expect(kubernetesMatches(actual(), withoutA)).to.equal(true);
    expect(kubernetesMatches(actual(), withoutA, { fieldManager: 'someone-else' })).to.equal(true);
    const withoutOwner = { ...desired, metadata: { ...desired.metadata, ownerReferences: [] } };
    expect(kubernetesMismatch(actual(), withoutOwner, { fieldManager: 'ctl' })).to.equal(
      'metadata.managedFields[f:metadata.f:ownerReferences.k:{"uid":"u1"}]',
    );
  });

  it('server metadata and status in the desired object are not compared', () => {
    const noisy = {
      ...desired,
      metadata: { ...desired.metadata, resourceVersion: '1', uid: 'other', generation: 9 },
      status: { ready: true },
    };
    expect(kubernetesMatches(actual(), noisy, { fieldManager: 'ctl' })).to.equal(true);
  });

  it('an empty map or list matches an absent one; null means absent', () => {
    expect(kubernetesMatches({ metadata: { name: 'c' } }, { metadata: { name: 'c', labels: {} }, data: {} })).to.equal(true);
    expect(kubernetesMismatch({ data: { a: '1' } }, { data: { a: null } })).to.equal('data.a');
    expect(kubernetesMatches({ data: {} }, { data: { a: null } })).to.equal(true);
  });

  it('plain lists match item by item; finalizers and ownerReferences as subsets', () => {
    const pod = (containers: unknown[]) => ({ spec: { containers } });
    const live = pod([
      { name: 'a', image: 'x', imagePullPolicy: 'IfNotPresent' },
      { name: 'b', image: 'y' },
    ]);
    expect(
      kubernetesMatches(
        live,
        pod([
          { name: 'a', image: 'x' },
          { name: 'b', image: 'y' },
        ]),
      ),
    ).to.equal(true);
    expect(kubernetesMismatch(live, pod([{ name: 'a', image: 'x' }]))).to.equal('spec.containers');
    expect(
      kubernetesMismatch(
        live,
        pod([
          { name: 'b', image: 'y' },
          { name: 'a', image: 'x' },
        ]),
      ),
    ).to.equal('spec.containers[0].name');
    expect(kubernetesMatches(actual(), { metadata: { finalizers: ['example.com/hold'] } })).to.equal(true);
    expect(kubernetesMismatch(actual(), { metadata: { finalizers: ['mine'] } })).to.equal('metadata.finalizers[0]');
  });

  it('keyed list items match with a key field the server defaulted', () => {
    const live = {
      spec: { ports: [{ port: 80, protocol: 'TCP' }] },
      metadata: {
        managedFields: [
          {
            manager: 'ctl',
            operation: 'Apply',
            fieldsV1: { 'f:spec': { 'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:port': {} } } } },
          },
        ],
      },
    };
    expect(kubernetesMatches(live, { spec: { ports: [{ port: 80 }] } }, { fieldManager: 'ctl' })).to.equal(true);
    expect(kubernetesMatches(live, { spec: { ports: [{ port: 81 }] } }, { fieldManager: 'ctl' })).to.equal(false);
  });

  it('appliedFieldsOf finds only the Apply entry of the manager on the main resource', () => {
    const obj = {
      metadata: {
        managedFields: [
          { manager: 'ctl', operation: 'Apply', subresource: 'status', fieldsV1: { 'f:status': {} } },
          { manager: 'ctl', operation: 'Update', fieldsV1: { 'f:data': {} } },
        ],
      },
    };
    expect(appliedFieldsOf(obj, 'ctl')).to.equal(undefined);
    expect(appliedFieldsOf(actual(), 'ctl')).to.have.property('f:data');
  });
});
