import { expect } from 'chai';
import type { ResourceEvent } from '../../lib/core/events.js';
import { generationChanged } from '../../lib/processing/index.js';
import { updateNeedsRun } from '../../lib/core/index.js';
import { testScheduler } from './helpers.js';

interface Obj {
  metadata: { name: string; generation?: number; deletionTimestamp?: string; finalizers?: string[] };
  status?: { ready: boolean };
}

const obj = (generation?: number, extra: Partial<Obj['metadata']> = {}, status?: Obj['status']): Obj => ({
  metadata: { name: 'x', ...(generation === undefined ? {} : { generation }), ...extra },
  ...(status ? { status } : {}),
});

const modified = (oldObject: Obj, object: Obj, primary = true): ResourceEvent<Obj> => ({
  id: { name: 'x' },
  source: primary ? 'primary' : 'other',
  action: 'modified',
  primary,
  oldObject,
  object,
});

describe('generationChanged', () => {
  it('EP6: an update passes only if the generation increased', () => {
    expect(updateNeedsRun(obj(1), obj(2))).to.equal(true);
    expect(updateNeedsRun(obj(2), obj(2, {}, { ready: true }))).to.equal(false); // status-only update
    expect(updateNeedsRun(obj(3), obj(2))).to.equal(false);
  });

  it('EP6: passes when the old object had no generation or the objects are unknown', () => {
    expect(updateNeedsRun(obj(), obj(1))).to.equal(true);
    expect(updateNeedsRun(undefined, obj(1))).to.equal(true);
    expect(updateNeedsRun<unknown>('not an object', obj(1))).to.equal(true);
  });

  it('EP6: passes when the object was just marked for deletion, not on later updates while deleting', () => {
    const deleting = obj(2, { deletionTimestamp: '2026-01-01T00:00:00Z' });
    expect(updateNeedsRun(obj(2), deleting)).to.equal(true);
    expect(updateNeedsRun(deleting, { ...deleting, status: { ready: false } })).to.equal(false);
  });

  it('EP6: passes when the caller says the finalizer is needed and missing', () => {
    const finalizerNeeded = (o: Obj) => !(o.metadata.finalizers ?? []).includes('x/finalizer');
    expect(updateNeedsRun(obj(2), obj(2), finalizerNeeded)).to.equal(true);
    expect(updateNeedsRun(obj(2), obj(2, { finalizers: ['x/finalizer'] }), finalizerNeeded)).to.equal(false);
  });

  it('EP6: as an operator it drops same-generation primary updates and lets adds, deletes and other sources pass', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const values: Record<string, ResourceEvent<Obj>> = {
        a: { id: { name: 'x' }, source: 'primary', action: 'added', primary: true, object: obj(1) },
        s: modified(obj(1), obj(1, {}, { ready: true })),
        g: modified(obj(1), obj(2)),
        o: modified(obj(1), obj(1), false),
        d: { id: { name: 'x' }, source: 'primary', action: 'deleted', primary: true, object: obj(2) },
      };
      expectObservable(cold('asgod|', values).pipe(generationChanged<Obj>())).toBe('a-god|', values);
    });
  });
});
