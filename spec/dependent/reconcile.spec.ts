import { expect } from 'chai';
import { deleteDependent, isDeletable, reconcileDependent, type DependentResource } from '../../lib/dependent/index.js';
import { desiredFieldsEqual } from '../../lib/dependent/reconcile.js';

interface Primary {
  readonly name: string;
  readonly replicas: number;
}
interface Secondary {
  readonly name: string;
  readonly spec: { readonly replicas: number };
  readonly status?: { readonly ok: boolean };
}

/** An in-memory secondary store with a call log, so tests can see which traits ran. */
function store() {
  const items = new Map<string, Secondary>();
  const calls: string[] = [];
  const traits = {
    desired: (p: Primary): Secondary => ({ name: p.name, spec: { replicas: p.replicas } }),
    getSecondary: (p: Primary): Secondary | undefined => items.get(p.name),
    create: (d: Secondary): Secondary => {
      calls.push(`create ${d.name}`);
      const created = { ...d, status: { ok: true } };
      items.set(d.name, created);
      return created;
    },
    update: (_a: Secondary, d: Secondary): Secondary => {
      calls.push(`update ${d.name}`);
      const updated = { ...d, status: { ok: true } };
      items.set(d.name, updated);
      return updated;
    },
    delete: (p: Primary): void => {
      calls.push(`delete ${p.name}`);
      items.delete(p.name);
    },
  };
  return { items, calls, traits };
}

const primary: Primary = { name: 'web', replicas: 2 };

describe('dependent: reconcileDependent / deleteDependent', () => {
  it('DR1: creates an absent secondary and returns what create returned', async () => {
    const s = store();
    const dr: DependentResource<Secondary, Primary> = { name: 'dep', ...s.traits };
    const result = await reconcileDependent(dr, primary, {});
    expect(result).to.deep.equal({
      operation: 'created',
      resource: { name: 'web', spec: { replicas: 2 }, status: { ok: true } },
    });
    expect(s.calls).to.deep.equal(['create web']);
  });

  it('DR1: a create that returns nothing reports the desired state as the resource', async () => {
    const dr: DependentResource<Secondary, Primary> = {
      desired: (p) => ({ name: p.name, spec: { replicas: p.replicas } }),
      getSecondary: () => undefined,
      create: () => undefined,
    };
    const result = await reconcileDependent(dr, primary, {});
    expect(result).to.deep.equal({ operation: 'created', resource: { name: 'web', spec: { replicas: 2 } } });
  });

  it('DR1: leaves a matching secondary unchanged (default matcher ignores extra actual fields)', async () => {
    const s = store();
    s.items.set('web', { name: 'web', spec: { replicas: 2 }, status: { ok: false } });
    const result = await reconcileDependent({ name: 'dep', ...s.traits }, primary, {});
    expect(result.operation).to.equal('unchanged');
    expect(result.resource).to.deep.equal({ name: 'web', spec: { replicas: 2 }, status: { ok: false } });
    expect(s.calls).to.deep.equal([]);
  });

  it('DR1: updates a secondary that does not match', async () => {
    const s = store();
    s.items.set('web', { name: 'web', spec: { replicas: 1 } });
    const result = await reconcileDependent({ name: 'dep', ...s.traits }, primary, {});
    expect(result.operation).to.equal('updated');
    expect(s.items.get('web')?.spec.replicas).to.equal(2);
    expect(s.calls).to.deep.equal(['update web']);
  });

  it('DR1: without create an absent secondary is never created', async () => {
    const s = store();
    const { create: _omit, ...traits } = s.traits;
    const result = await reconcileDependent({ name: 'dep', ...traits }, primary, {});
    expect(result).to.deep.equal({ operation: 'skipped', reason: 'noCreate', resource: undefined });
    expect(s.items.size).to.equal(0);
  });

  it('DR1: without update a differing secondary is never updated', async () => {
    const s = store();
    s.items.set('web', { name: 'web', spec: { replicas: 1 } });
    const { update: _omit, ...traits } = s.traits;
    const result = await reconcileDependent({ name: 'dep', ...traits }, primary, {});
    expect(result).to.deep.equal({
      operation: 'skipped',
      reason: 'noUpdate',
      resource: { name: 'web', spec: { replicas: 1 } },
    });
    expect(s.calls).to.deep.equal([]);
  });

  it('DR1: without delete nothing is deleted', async () => {
    const s = store();
    s.items.set('web', { name: 'web', spec: { replicas: 1 } });
    const { delete: _omit, ...traits } = s.traits;
    expect(await deleteDependent({ name: 'dep', ...traits }, primary, {})).to.deep.equal({
      operation: 'skipped',
    });
    expect(s.items.has('web')).to.equal(true);
    expect(await deleteDependent({ name: 'dep', ...s.traits }, primary, {})).to.deep.equal({
      operation: 'deleted',
    });
    expect(s.items.has('web')).to.equal(false);
  });

  it('DR1: a read-only dependent (getSecondary only) reports the actual resource unchanged', async () => {
    const actual: Secondary = { name: 'web', spec: { replicas: 9 } };
    const result = await reconcileDependent<Secondary, Primary, object>({ getSecondary: () => actual }, primary, {});
    expect(result).to.deep.equal({ operation: 'unchanged', resource: actual });
  });

  it('DR1: a custom match decides, and receives actual, desired, primary and context', async () => {
    const s = store();
    s.items.set('web', { name: 'web', spec: { replicas: 1 } });
    const seen: unknown[] = [];
    const ctx = { tag: 'ctx' };
    const result = await reconcileDependent<Secondary, Primary, typeof ctx>(
      {
        ...s.traits,
        match: (actual, desired, p, c) => {
          seen.push(actual.spec.replicas, desired.spec.replicas, p.name, c.tag);
          return true;
        },
      },
      primary,
      ctx,
    );
    expect(result.operation).to.equal('unchanged');
    expect(seen).to.deep.equal([1, 2, 'web', 'ctx']);
  });

  it('DR3: getSecondary receives the desired state to pick its own secondary', async () => {
    const seen: unknown[] = [];
    await reconcileDependent<Secondary, Primary, object>(
      {
        desired: (p) => ({ name: `${p.name}-a`, spec: { replicas: 1 } }),
        getSecondary: (_p, _c, desired) => {
          seen.push(desired?.name);
          return undefined;
        },
      },
      primary,
      {},
    );
    expect(seen).to.deep.equal(['web-a']);
  });

  it('DR1: a reconcile trait replaces the generic flow', async () => {
    const s = store();
    const result = await reconcileDependent(
      {
        ...s.traits,
        reconcile: () => ({ operation: 'unchanged', resource: { name: 'x', spec: { replicas: 0 } } }),
      },
      primary,
      {},
    );
    expect(result.resource?.name).to.equal('x');
    expect(s.calls).to.deep.equal([]);
  });

  it('rejects create/update without desired() or getSecondary(), naming the dependent', async () => {
    const noDesired = reconcileDependent<Secondary, Primary, object>(
      { name: 'cm', getSecondary: () => undefined, create: () => undefined },
      primary,
      {},
    );
    const noSecondary = reconcileDependent<Secondary, Primary, object>(
      { name: 'svc', desired: () => ({ name: 'a', spec: { replicas: 1 } }), update: () => undefined },
      primary,
      {},
    );
    const [a, b] = await Promise.allSettled([noDesired, noSecondary]);
    expect(a.status === 'rejected' && String(a.reason)).to.match(/dependent 'cm' has create but no desired\(\)/);
    expect(b.status === 'rejected' && String(b.reason)).to.match(/dependent 'svc' has update but no getSecondary\(\)/);
  });

  it('propagates a desired() error', async () => {
    const outcome = await reconcileDependent<Secondary, Primary, object>(
      {
        desired: () => {
          throw new Error('bad spec');
        },
        getSecondary: () => undefined,
      },
      primary,
      {},
    ).then(
      () => 'resolved',
      (e: unknown) => (e as Error).message,
    );
    expect(outcome).to.equal('bad spec');
  });

  it('isDeletable: delete trait and not garbage-collected', () => {
    expect(isDeletable({ delete: () => undefined })).to.equal(true);
    expect(isDeletable({ delete: () => undefined, garbageCollected: true })).to.equal(false);
    expect(isDeletable({})).to.equal(false);
  });

  describe('desiredFieldsEqual', () => {
    it('compares only fields the desired value sets', () => {
      expect(desiredFieldsEqual({ a: 1, b: { c: 2 } }, { a: 1, b: { c: 2, d: 3 }, e: 4 })).to.equal(true);
      expect(desiredFieldsEqual({ a: 1, b: { c: 2 } }, { a: 1, b: { c: 3 } })).to.equal(false);
      expect(desiredFieldsEqual({ a: 1 }, { b: 1 })).to.equal(false);
      expect(desiredFieldsEqual({ a: undefined }, {})).to.equal(true);
    });
    it('requires arrays of equal length matched element by element', () => {
      expect(desiredFieldsEqual([{ n: 'x' }], [{ n: 'x', image: 'i' }])).to.equal(true);
      expect(desiredFieldsEqual([{ n: 'x' }], [{ n: 'x' }, { n: 'y' }])).to.equal(false);
      expect(desiredFieldsEqual({ a: [] }, { a: {} })).to.equal(false);
      expect(desiredFieldsEqual({}, [])).to.equal(false);
    });
    it('compares primitives strictly (NaN equals NaN)', () => {
      expect(desiredFieldsEqual('1', 1)).to.equal(false);
      expect(desiredFieldsEqual(Number.NaN, Number.NaN)).to.equal(true);
      expect(desiredFieldsEqual(null, undefined)).to.equal(false);
      expect(desiredFieldsEqual({ a: null }, { a: null })).to.equal(true);
    });
  });
});
