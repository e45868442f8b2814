import { expect } from 'chai';
import { of, VirtualAction, VirtualTimeScheduler } from 'rxjs';
import type { ResourceEvent } from '../../lib/core/index.js';
import { externalDependent, externalStateDependent, reconcileDependent, isDeletable } from '../../lib/dependent/index.js';
import { EXTERNAL_ID_KEY } from '../../lib/dependent/external.js';
import {
  createWidget,
  deleteWidget,
  eventually,
  FINALIZER,
  getWidget,
  patchWidget,
  SECRETS,
  startEnv,
  widget,
  type Env,
  type Widget,
} from '../controller/fixtures.js';
import { configMapOf, startWidgets, widgetWorkflow } from './helpers.js';

/** An in-memory stand-in for a REST API of buckets, with a call log. */
class BucketApi {
  readonly buckets = new Map<string, Bucket>();
  readonly calls: string[] = [];
  private next = 1;

  create(b: Omit<Bucket, 'id'>): Bucket {
    const bucket = { ...b, id: `b-${this.next++}` };
    this.calls.push(`create ${bucket.id}`);
    this.buckets.set(bucket.id, bucket);
    return bucket;
  }

  update(id: string, b: Omit<Bucket, 'id'>): Bucket {
    this.calls.push(`update ${id}`);
    const bucket = { ...b, id };
    this.buckets.set(id, bucket);
    return bucket;
  }

  delete(id: string): void {
    this.calls.push(`delete ${id}`);
    this.buckets.delete(id);
  }
}

interface Bucket {
  readonly id?: string;
  readonly owner: string;
  readonly size: string;
}

const primary: Widget = widget('w1', { value: 'small' });

describe('dependent: externalDependent', () => {
  it('DR1: user functions fetch, create, update and delete a non-Kubernetes resource', async () => {
    const api = new BucketApi();
    const byOwner = (w: Widget) => [...api.buckets.values()].find((b) => b.owner === w.metadata!.name);
    const dependent = externalDependent<Bucket, Widget>({
      name: 'bucket',
      fetch: (w) => byOwner(w),
      desired: (w) => ({ owner: w.metadata!.name!, size: w.spec!.value! }),
      create: (d) => api.create(d),
      update: (actual, d) => api.update(actual.id!, d),
      delete: (actual) => api.delete(actual.id!),
    });
    expect(isDeletable(dependent), 'never garbage-collected').to.equal(true);
    expect((await reconcileDependent(dependent, primary, {})).operation).to.equal('created');
    expect((await reconcileDependent(dependent, primary, {})).operation).to.equal('unchanged');
    const bigger = widget('w1', { value: 'large' });
    expect(await reconcileDependent(dependent, bigger, {})).to.deep.equal({
      operation: 'updated',
      resource: { id: 'b-1', owner: 'w1', size: 'large' },
    });
    await dependent.delete!(bigger, {});
    await dependent.delete!(bigger, {});
    expect(api.calls).to.deep.equal(['create b-1', 'update b-1', 'delete b-1']);
  });

  it('ES5: with polling, the first read starts polling the primary, changes trigger it, delete stops it', async () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, 100);
    const sizes = new Map([['w1', 'small']]);
    const dependent = externalDependent<string, Widget>({
      name: 'size',
      fetch: (w) => sizes.get(w.metadata!.name!),
      delete: (_actual, w) => void sizes.delete(w.metadata!.name!),
      polling: { intervalMs: 10, fetch: (id) => of(sizes.get(id.name)), scheduler },
    });
    const source = dependent.pollingSource!;
    const events: [number, ResourceEvent<string>][] = [];
    source.events$.subscribe((e) => events.push([scheduler.now(), e]));
    expect(await dependent.getSecondary!(primary, {})).to.equal('small');
    expect(source.tracked()).to.deep.equal(['default/w1']);
    scheduler.schedule(() => sizes.set('w1', 'large'), 25);
    scheduler.flush();
    expect(events.map(([t, e]) => [t, e.id, e.action, e.object])).to.deep.equal([
      [0, { name: 'w1', namespace: 'default' }, 'trigger', 'small'],
      [30, { name: 'w1', namespace: 'default' }, 'trigger', 'large'],
    ]);
    await dependent.delete!(primary, {});
    expect(source.tracked()).to.deep.equal([]);
  });

  it('bad input: create without desired, or a non-function trait, is a ConfigurationError naming it', () => {
    expect(() => externalDependent<Bucket, Widget>({ name: 'b', fetch: () => undefined, create: (d) => d })).to.throw(
      /externalDependent\(b\)\.desired: is required/,
    );
    expect(() => externalDependent<Bucket, Widget>({ name: 'b', fetch: 'x' } as never)).to.throw(
      /externalDependent\(b\)\.fetch: must be a function/,
    );
    expect(() => externalDependent<Bucket, Widget>({ fetch: () => undefined } as never)).to.throw(
      /externalDependent\.name: must be a non-empty string/,
    );
  });
});

describe('dependent: externalStateDependent against the embedded API server', () => {
  let env: Env;
  beforeEach(async () => {
    env = await startEnv();
  });
  afterEach(async () => {
    await env.close();
  });

  function bucketDependent(api: BucketApi, name = 'bucket', kind: 'ConfigMap' | 'Secret' = 'ConfigMap') {
    return externalStateDependent<Bucket, Widget>({
      name,
      desired: (w) => ({ owner: w.metadata!.name!, size: w.spec?.value ?? 'small' }),
      fetch: (id) => api.buckets.get(id),
      create: (d) => api.create(d),
      idOf: (b) => b.id!,
      update: (id, _actual, d) => api.update(id, d),
      delete: (id) => api.delete(id),
      match: (actual, d) => actual.size === d.size,
      state: { kind },
    });
  }

  it('DR3: keeps the external id in a ConfigMap owned by the primary; reads by id; recreates a vanished resource', async () => {
    const api = new BucketApi();
    const bucket = bucketDependent(api);
    expect(bucket.eventSource.name).to.equal('configmaps');
    await startWidgets(env, widgetWorkflow().add(bucket));
    await createWidget(env, widget('w1', { value: 'small' }));
    const state = await eventually('state object', () => configMapOf(env, 'w1-bucket'));
    expect(state.data).to.deep.equal({ [EXTERNAL_ID_KEY]: 'b-1' });
    expect(state.metadata?.ownerReferences?.[0]).to.include({ kind: 'Widget', name: 'w1' });
    expect((await getWidget(env, 'w1'))?.metadata?.finalizers).to.deep.equal([FINALIZER]);

    await patchWidget(env, 'w1', { spec: { value: 'large' } });
    await eventually('updated by id', () => api.buckets.get('b-1')?.size === 'large');
    api.buckets.delete('b-1');
    await patchWidget(env, 'w1', { spec: { value: 'medium' } });
    await eventually('new id kept', async () => (await configMapOf(env, 'w1-bucket'))?.data?.[EXTERNAL_ID_KEY] === 'b-2');
    expect(api.calls).to.deep.equal(['create b-1', 'update b-1', 'create b-2']);

    await deleteWidget(env, 'w1');
    await eventually('w1 gone', async () => (await getWidget(env, 'w1')) === undefined);
    expect(api.calls.at(-1)).to.equal('delete b-2');
    await eventually('state object deleted', async () => (await configMapOf(env, 'w1-bucket')) === undefined);
  });

  it('DR3: the id can be kept in a Secret instead (base64 in data)', async () => {
    const api = new BucketApi();
    await startWidgets(env, widgetWorkflow().add(bucketDependent(api, 'vault', 'Secret')));
    await createWidget(env, widget('w1'));
    const secrets = env.secrets;
    const secret = (await eventually('secret', () => secrets.find({ name: 'w1-vault', namespace: 'default' }))) as {
      data?: Record<string, string>;
      kind?: string;
    };
    expect(secret.data?.[EXTERNAL_ID_KEY]).to.equal(Buffer.from('b-1').toString('base64'));
    expect(SECRETS.kind).to.equal(secret.kind);
    expect(api.calls).to.deep.equal(['create b-1']);
  });
});
