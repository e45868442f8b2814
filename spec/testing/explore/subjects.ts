/**
 * Small operators with the bugs Sieve and Acto found in real ones, each with a buggy and a fixed
 * twin, and the workload that exercises them. Members and claims are ConfigMaps standing in for
 * Pods and PersistentVolumeClaims.
 */
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import type { Operator, Reconciler } from '../../../lib/index.js';
import { builtinResources, customResourceDefinition, statusCodeOf, type KubeClient, type ResourceDescriptor } from '../../../lib/kube.js';
import { schemaWorkload, type ExploreOptions } from '../../../lib/testing/explore/index.js';

const GROUP = 'explore.rxkube.dev';
const configMap = builtinResources.configMap;

interface Object<S, T = Record<string, unknown>> extends KubernetesObject {
  spec?: S;
  status?: T;
}

export interface Subject {
  readonly name: string;
  readonly sieveClass: 'stale read' | 'crash between writes' | 'observability gap' | 'bad input';
  readonly bug: string;
  readonly options: (variant: 'buggy' | 'fixed') => ExploreOptions;
}

function kind(kindName: string, plural: string, spec: NonNullable<Parameters<typeof customResourceDefinition>[0]['spec']>) {
  const crd = customResourceDefinition({
    group: GROUP,
    kind: kindName,
    plural,
    spec,
    status: { type: 'object', x_kubernetes_preserve_unknown_fields: true },
  });
  const resource: ResourceDescriptor = { apiVersion: `${GROUP}/v1`, kind: kindName, plural };
  return { crd, resource };
}

const ignore =
  (...codes: number[]) =>
  (err: unknown): undefined => {
    if (codes.includes(statusCodeOf(err) ?? 0)) return undefined;
    throw err;
  };

const member = (name: string, labels: Record<string, string>, data: Record<string, string> = {}): V1ConfigMap => ({
  metadata: { name, namespace: 'default', labels },
  data,
});

async function patchStatus(client: KubeClient, resource: ResourceDescriptor, o: KubernetesObject, status: object): Promise<void> {
  await client.resource(resource).mergePatchStatus({ name: o.metadata?.name ?? '', namespace: o.metadata?.namespace }, { status });
}

const index = (o: KubernetesObject): number => Number(o.metadata?.labels?.['index'] ?? -1);

// ---- crash between writes ---------------------------------------------------------------------

/** Scale-down that records the new size before it deletes the surplus members (Sieve: crash in the middle of a scale-down). */
const scaleDown = (() => {
  const { crd, resource } = kind('Cluster', 'clusters', {
    type: 'object',
    properties: { replicas: { type: 'integer', minimum: 0, maximum: 5 } },
  });
  type Cluster = Object<{ replicas?: number }, { members?: number }>;
  const reconciler = (variant: 'buggy' | 'fixed'): Reconciler<Cluster> => ({
    async reconcile(cluster, ctx) {
      const name = cluster.metadata?.name ?? '';
      const desired = cluster.spec?.replicas ?? 0;
      const cms = ctx.client.resource<V1ConfigMap>(configMap);
      if (variant === 'buggy') {
        const current = cluster.status?.members ?? 0;
        if (desired < current) {
          await patchStatus(ctx.client, resource, cluster, { members: desired }); // the bug: recorded before it is done
          for (let i = desired; i < current; i++) await cms.delete({ name: `${name}-${i}`, namespace: 'default' }).catch(ignore(404));
          return;
        }
        for (let i = current; i < desired; i++)
          await cms.create(member(`${name}-${i}`, { cluster: name, index: String(i) })).catch(ignore(409));
        if (desired !== current) await patchStatus(ctx.client, resource, cluster, { members: desired });
        return;
      }
      const members = (await cms.list({ namespace: 'default', labelSelector: { cluster: name } })).items;
      for (const m of members)
        if (index(m) >= desired) await cms.delete({ name: m.metadata?.name ?? '', namespace: 'default' }).catch(ignore(404));
      for (let i = 0; i < desired; i++)
        if (!members.some((m) => index(m) === i))
          await cms.create(member(`${name}-${i}`, { cluster: name, index: String(i) })).catch(ignore(409));
      if (cluster.status?.members !== desired) await patchStatus(ctx.client, resource, cluster, { members: desired });
    },
  });
  return {
    name: 'scale-down',
    sieveClass: 'crash between writes',
    bug: 'a scale-down interrupted by a restart leaves an orphan member: the new size is recorded before the surplus is deleted, and the restart trusts the record',
    options: (variant) => ({
      crds: [crd],
      setup: (operator: Operator) => void operator.register(reconciler(variant), { resource }),
      observe: [resource, configMap],
      workload: [
        { op: 'apply', resource, object: { metadata: { name: 'c' }, spec: { replicas: 3 } } as KubernetesObject },
        { op: 'merge', resource, name: 'c', patch: { spec: { replicas: 1 } } },
      ],
    }),
  } satisfies Subject;
})();

/** A run object made with generateName and recorded afterwards: a restart in between makes a second one. */
const generatedName = (() => {
  const { crd, resource } = kind('Backup', 'backups', { type: 'object', properties: { target: { type: 'string' } } });
  type Backup = Object<{ target?: string }, { run?: string }>;
  const reconciler = (variant: 'buggy' | 'fixed'): Reconciler<Backup> => ({
    async reconcile(backup, ctx) {
      if (backup.status?.run) return;
      const name = backup.metadata?.name ?? '';
      const cms = ctx.client.resource<V1ConfigMap>(configMap);
      const body: V1ConfigMap =
        variant === 'buggy'
          ? {
              metadata: { generateName: `${name}-run-`, namespace: 'default', labels: { backup: name } },
              data: { target: backup.spec?.target ?? '' },
            }
          : member(`${name}-run`, { backup: name }, { target: backup.spec?.target ?? '' });
      const made = await cms.create(body).catch(ignore(409));
      await patchStatus(ctx.client, resource, backup, { run: made?.metadata?.name ?? `${name}-run` });
    },
  });
  return {
    name: 'generated-name',
    sieveClass: 'crash between writes',
    bug: 'a run object created with generateName is recorded in status by a second write; a restart (or a create that timed out) between the two makes a duplicate',
    options: (variant) => ({
      crds: [crd],
      setup: (operator: Operator) => void operator.register(reconciler(variant), { resource }),
      observe: [resource, configMap],
      volatile: ['status.run'],
      workload: [{ op: 'apply', resource, object: { metadata: { name: 'nightly' }, spec: { target: 'db' } } as KubernetesObject }],
    }),
  } satisfies Subject;
})();

// ---- stale reads ------------------------------------------------------------------------------

/**
 * Claims are deleted by a reaper when their Db is being deleted (Sieve: a PVC deleted on a stale
 * deletionTimestamp). rxkube's own cleanup checks that the object is still live before it runs, so
 * the bug is ported where that check does not reach: a second controller that decides from its
 * cache. A restart on a stale view that still shows the old Db being deleted deletes the claim of
 * the Db re-created under its name since, with its data.
 */
const staleDeletion = (() => {
  const { crd, resource } = kind('Db', 'dbs', { type: 'object', properties: { size: { type: 'string' } } });
  type Db = Object<{ size?: string }>;
  const OWNER = 'owner-uid';
  const db: Reconciler<Db> = {
    async reconcile(db, ctx) {
      const name = db.metadata?.name ?? '';
      const cms = ctx.client.resource<V1ConfigMap>(configMap);
      if (await cms.find({ name: `data-${name}`, namespace: 'default' })) return;
      const claim = member(`data-${name}`, { db: name });
      await cms.create({ ...claim, metadata: { ...claim.metadata, annotations: { [OWNER]: db.metadata?.uid ?? '' } } }).catch(ignore(409));
    },
  };
  const reaper = (variant: 'buggy' | 'fixed'): Reconciler<V1ConfigMap> => ({
    async reconcile(claim, ctx) {
      const owner = ctx.getSecondaryResource<Db>('dbs');
      if (!owner?.metadata?.deletionTimestamp) return;
      const cms = ctx.client.resource<V1ConfigMap>(configMap);
      const ref = { name: claim.metadata?.name ?? '', namespace: 'default' };
      if (variant === 'buggy')
        await cms.delete(ref).catch(ignore(404)); // the bug: by name, on what the cache says
      // The claim is the deleted Db's only if it was made for that Db (uid), and the delete is bound to that claim.
      else if (claim.metadata?.annotations?.[OWNER] === owner.metadata.uid)
        await cms.delete(ref, { preconditions: { uid: claim.metadata?.uid } }).catch(ignore(404, 409));
    },
  });
  const object = (finalizers: string[]): KubernetesObject =>
    ({ metadata: { name: 'orders', finalizers }, spec: { size: '1Gi' } }) as KubernetesObject;
  return {
    name: 'stale-deletion',
    sieveClass: 'stale read',
    bug: "the reaper deletes a claim by name when its cache shows the claim's Db being deleted: on a stale view that still shows the old Db, it deletes the new Db's claim and its data",
    options: (variant) => ({
      crds: [crd],
      setup: (operator: Operator) => {
        operator.register(db, { resource });
        operator.register(reaper(variant), {
          resource: configMap,
          name: 'claim-reaper',
          labelSelector: 'db',
          secondaries: [
            {
              resource,
              toPrimaries: (d: KubernetesObject) => [{ name: `data-${d.metadata?.name ?? ''}`, namespace: d.metadata?.namespace }],
            },
          ],
        });
      },
      observe: [resource, configMap],
      volatile: [`metadata.annotations.${OWNER}`],
      workload: [
        // A backup tool holds the Db while the reaper deletes its claim, then lets it go.
        { op: 'apply', resource, object: object(['example.com/backup']) },
        { op: 'delete', resource, name: 'orders' },
        { op: 'apply', resource, object: object([]) },
        { op: 'apply', resource, object: object([]) },
        { op: 'merge', resource: configMap, name: 'data-orders', patch: { data: { rows: '42' } } },
      ],
    }),
  } satisfies Subject;
})();

/** Scale-down decided on the cached spec, carried out on live members (Sieve: members deleted on a stale replica count). */
const staleScaleDown = (() => {
  const { crd, resource } = kind('Quorum', 'quorums', {
    type: 'object',
    properties: { replicas: { type: 'integer', minimum: 0, maximum: 5 } },
  });
  type Quorum = Object<{ replicas?: number }>;
  const reconciler = (variant: 'buggy' | 'fixed'): Reconciler<Quorum> => ({
    async reconcile(quorum, ctx) {
      const name = quorum.metadata?.name ?? '';
      const cms = ctx.client.resource<V1ConfigMap>(configMap);
      let desired = quorum.spec?.replicas ?? 0;
      for (let i = 0; i < desired; i++) await cms.create(member(`${name}-${i}`, { quorum: name })).catch(ignore(409));
      const surplus: string[] = [];
      for (let i = desired; i < 5; i++) if (await cms.find({ name: `${name}-${i}`, namespace: 'default' })) surplus.push(`${name}-${i}`);
      if (surplus.length === 0) return;
      if (variant === 'fixed') {
        // Deleting members loses their data: decide on a quorum read of the spec, not on the cache.
        const fresh = await ctx.client.resource<Quorum>(resource).get({ name, namespace: 'default' });
        desired = fresh.spec?.replicas ?? 0;
      }
      for (const m of surplus)
        if (Number(m.slice(name.length + 1)) >= desired) await cms.delete({ name: m, namespace: 'default' }).catch(ignore(404));
    },
  });
  return {
    name: 'stale-scale-down',
    sieveClass: 'stale read',
    bug: 'a restarted operator whose cache shows an older, smaller replica count deletes live members and their data',
    options: (variant) => ({
      crds: [crd],
      setup: (operator: Operator) => void operator.register(reconciler(variant), { resource }),
      observe: [resource, configMap],
      workload: [
        { op: 'apply', resource, object: { metadata: { name: 'q' }, spec: { replicas: 1 } } as KubernetesObject },
        { op: 'merge', resource, name: 'q', patch: { spec: { replicas: 3 } } },
        { op: 'merge', resource: configMap, name: 'q-2', patch: { data: { rows: '42' } } },
      ],
    }),
  } satisfies Subject;
})();

// ---- observability gaps -----------------------------------------------------------------------

/** Failures counted when a member is seen in phase Failed: a failure shorter than the watch gap is never counted (Sieve: an unobserved state). */
const missedFailure = (() => {
  const { crd, resource } = kind('Group', 'groups', {
    type: 'object',
    properties: { members: { type: 'integer', minimum: 0, maximum: 5 } },
  });
  type Group = Object<{ members?: number }, { restarts?: number; failing?: string[] }>;
  const reconciler = (variant: 'buggy' | 'fixed'): Reconciler<Group> => ({
    async reconcile(group, ctx) {
      const name = group.metadata?.name ?? '';
      const cms = ctx.client.resource<V1ConfigMap>(configMap);
      const members = ctx.getSecondaryResources<V1ConfigMap>('configmaps');
      for (let i = 0; i < (group.spec?.members ?? 0); i++) {
        if (!members.some((m) => m.metadata?.name === `${name}-m${i}`))
          await cms.create(member(`${name}-m${i}`, { group: name }, { phase: 'Running', restartCount: '0' })).catch(ignore(409));
      }
      let status: { restarts: number; failing?: string[] };
      if (variant === 'buggy') {
        // The bug: a restart is counted only if the operator happens to see the member Failed.
        const failing = members.filter((m) => m.data?.['phase'] === 'Failed').map((m) => m.metadata?.name ?? '');
        const fresh = failing.filter((n) => !(group.status?.failing ?? []).includes(n)).length;
        status = { restarts: (group.status?.restarts ?? 0) + fresh, failing };
      } else {
        // The member's own counter says how often it restarted, whether or not anyone saw it fail.
        status = { restarts: members.reduce((sum, m) => sum + Number(m.data?.['restartCount'] ?? 0), 0) };
      }
      if (
        JSON.stringify({ restarts: group.status?.restarts ?? 0, failing: group.status?.failing }) !==
        JSON.stringify({ failing: undefined, ...status })
      ) {
        await patchStatus(ctx.client, resource, group, status);
      }
    },
  });
  return {
    name: 'missed-failure',
    sieveClass: 'observability gap',
    bug: 'restarts are counted when a member is seen Failed; a member that failed and came back while the watch was down (or whose events arrived together) is never counted',
    options: (variant) => ({
      crds: [crd],
      setup: (operator: Operator) =>
        void operator.register(reconciler(variant), {
          resource,
          secondaries: [
            {
              resource: configMap,
              toPrimaries: (cm: KubernetesObject) =>
                cm.metadata?.labels?.['group'] ? [{ name: cm.metadata.labels['group'], namespace: cm.metadata.namespace }] : [],
            },
          ],
        }),
      observe: [resource, configMap],
      workload: [
        { op: 'apply', resource, object: { metadata: { name: 'g' }, spec: { members: 2 } } as KubernetesObject },
        { op: 'merge', resource: configMap, name: 'g-m1', patch: { data: { phase: 'Failed', restartCount: '1' } } },
        { op: 'merge', resource: configMap, name: 'g-m1', patch: { data: { phase: 'Running' } } },
      ],
    }),
  } satisfies Subject;
})();

/**
 * A registry of routes kept by a controller of the registry that removes an entry when it sees its
 * Route being deleted (Sieve: a deletion missed). Held only by another finalizer, that state can
 * pass unseen (a watch gap, events that arrive together), and the entry leaks.
 */
const missedDeletion = (() => {
  const { crd, resource } = kind('Route', 'routes', { type: 'object', properties: { host: { type: 'string' } } });
  type Route = Object<{ host?: string }>;
  const reconciler = (variant: 'buggy' | 'fixed'): Reconciler<V1ConfigMap> => ({
    async reconcile(registry, ctx) {
      const routes = ctx.getSecondaryResources<Route>('routes');
      const entries: Record<string, string | null> = {};
      for (const route of routes) entries[route.metadata?.name ?? ''] = route.metadata?.deletionTimestamp ? null : (route.spec?.host ?? '');
      // The bug: an entry is removed only for a Route seen being deleted. Fixed: every entry without a live Route goes.
      if (variant === 'fixed') for (const name of Object.keys(registry.data ?? {})) if (!(name in entries)) entries[name] = null;
      const changed = Object.entries(entries).filter(([name, value]) => (registry.data?.[name] ?? null) !== value);
      if (changed.length === 0) return;
      await ctx.client
        .resource<V1ConfigMap>(configMap)
        .mergePatch({ name: 'registry', namespace: 'default' }, { data: Object.fromEntries(changed) });
    },
  });
  const route = (finalizers: string[]): KubernetesObject =>
    ({ metadata: { name: 'web', finalizers }, spec: { host: 'web.example.com' } }) as KubernetesObject;
  return {
    name: 'missed-deletion',
    sieveClass: 'observability gap',
    bug: 'the registry entry of a Route is removed when the operator sees the Route with a deletionTimestamp; held only by another finalizer, that state can pass unseen and the entry leaks',
    options: (variant) => ({
      crds: [crd],
      setup: (operator: Operator) =>
        void operator.register(reconciler(variant), {
          resource: configMap,
          name: 'route-registry',
          labelSelector: { role: 'registry' },
          secondaries: [{ resource, toPrimaries: (r: KubernetesObject) => [{ name: 'registry', namespace: r.metadata?.namespace }] }],
        }),
      observe: [resource, configMap],
      workload: [
        { op: 'create', resource: configMap, object: member('registry', { role: 'registry' }) },
        { op: 'apply', resource, object: route(['example.com/protect']) },
        { op: 'delete', resource, name: 'web' },
        { op: 'apply', resource, object: route([]) },
      ],
    }),
  } satisfies Subject;
})();

// ---- bad input (Acto) -------------------------------------------------------------------------

/** replicas: 0 is allowed by the schema, and the operator divides by it (Acto: a boundary value the operator never handles). */
const zeroReplicas = (() => {
  const { crd, resource } = kind('Cache', 'caches', {
    type: 'object',
    properties: { replicas: { type: 'integer', minimum: 0, maximum: 5 }, memory: { type: 'integer', minimum: 64, maximum: 4096 } },
  });
  type Cache = Object<{ replicas?: number; memory?: number }, { shards?: number }>;
  const reconciler = (variant: 'buggy' | 'fixed'): Reconciler<Cache> => ({
    async reconcile(cache, ctx) {
      const name = cache.metadata?.name ?? '';
      const replicas = cache.spec?.replicas ?? 1;
      const cms = ctx.client.resource<V1ConfigMap>(configMap);
      if (variant === 'buggy' && replicas === 0) throw new RangeError('memory per shard: division by zero');
      const perShard = replicas === 0 ? 0 : Math.floor((cache.spec?.memory ?? 256) / replicas);
      for (let i = 0; i < 5; i++) {
        if (i < replicas)
          await cms.apply(
            {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: `${name}-${i}`, namespace: 'default', labels: { cache: name } },
              data: { memory: String(perShard) },
            },
            { fieldManager: 'cache', force: true },
          );
        else await cms.delete({ name: `${name}-${i}`, namespace: 'default' }).catch(ignore(404));
      }
      if (cache.status?.shards !== replicas) await patchStatus(ctx.client, resource, cache, { shards: replicas });
    },
  });
  return {
    name: 'zero-replicas',
    sieveClass: 'bad input',
    bug: 'replicas: 0 passes the schema, and the reconcile divides by it and fails on every retry; nothing says why in status',
    options: (variant) => ({
      crds: [crd],
      setup: (operator: Operator) => void operator.register(reconciler(variant), { resource }),
      observe: [resource, configMap],
      workload: schemaWorkload({
        crd,
        base: {
          apiVersion: `${GROUP}/v1`,
          kind: 'Cache',
          metadata: { name: 'sessions' },
          spec: { replicas: 2, memory: 256 },
        },
      }),
    }),
  } satisfies Subject;
})();

/** A bad version puts the object in a terminal Failed phase it never leaves, even when the version is put back (Acto: an error state not recovered from). */
const stuckFailed = (() => {
  const { crd, resource } = kind('Release', 'releases', {
    type: 'object',
    properties: { version: { type: 'string', maxLength: 10 }, canary: { type: 'boolean' } },
  });
  type Release = Object<{ version?: string; canary?: boolean }, { phase?: string; conditions?: unknown[] }>;
  const reconciler = (variant: 'buggy' | 'fixed'): Reconciler<Release> => ({
    async reconcile(release, ctx) {
      if (variant === 'buggy' && release.status?.phase === 'Failed') return; // the bug: Failed is forever
      const valid = /^\d+\.\d+$/.test(release.spec?.version ?? '');
      const status = valid
        ? { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', reason: 'Deployed', message: '' }] }
        : {
            phase: 'Failed',
            conditions: [
              {
                type: 'Ready',
                status: 'False',
                reason: 'InvalidVersion',
                message: `cannot parse version ${JSON.stringify(release.spec?.version)}`,
              },
            ],
          };
      if (JSON.stringify(release.status) !== JSON.stringify(status)) await patchStatus(ctx.client, resource, release, status);
    },
  });
  return {
    name: 'stuck-failed',
    sieveClass: 'bad input',
    bug: 'a version the operator cannot parse sets a terminal Failed phase; putting the good version back does not bring the release back',
    options: (variant) => ({
      crds: [crd],
      setup: (operator: Operator) => void operator.register(reconciler(variant), { resource }),
      observe: [resource, configMap],
      workload: schemaWorkload({
        crd,
        base: {
          apiVersion: `${GROUP}/v1`,
          kind: 'Release',
          metadata: { name: 'web' },
          spec: { version: '1.2', canary: false },
        },
      }),
    }),
  } satisfies Subject;
})();

export const subjects: readonly Subject[] = [
  scaleDown,
  generatedName,
  staleDeletion,
  staleScaleDown,
  missedFailure,
  missedDeletion,
  zeroReplicas,
  stuckFailed,
];
