/**
 * A blind corpus: small operators written apart from the explorer, each modeled on one bug that
 * Sieve (sieve-project/sieve, docs/bugs.md) or Acto (xlab-uiuc/acto, bugs.md) reported in a real
 * operator, with a correct twin that fixes it the way the upstream fix (or the report's proposal)
 * did, and the workload a user of that operator would run. Written from the explorer's user docs
 * and public API only.
 *
 * ConfigMaps stand in for Pods, PersistentVolumeClaims and StatefulSets; a StatefulSet stand-in is
 * turned into members and claims by a small in-process "StatefulSet controller" (claims are made
 * once from the template and never updated, members above `replicas` are removed, claims are
 * retained), so that the operator under test talks to another actor as it does on a real cluster.
 * A claim's `data` is the volume's content: a workload step that merges into it is the database
 * writing to its disk, so a claim deleted and made again shows up as lost data.
 */
import type { KubernetesObject, V1ConfigMap, V1OwnerReference, V1Secret } from '@kubernetes/client-node';
import {
  DeleteControl,
  Mappers,
  UpdateControl,
  kubernetesDependent,
  statusCondition,
  workflow,
  type Context,
  type DependentResource,
  type Operator,
  type Reconciler,
} from '../../../lib/index.js';
import { builtinResources, customResourceDefinition, statusCodeOf, type KubeClient, type ResourceDescriptor } from '../../../lib/kube.js';
import type { Subject } from './subjects.js';

const GROUP = 'blind.rxkube.dev';
const configMap = builtinResources.configMap;
const secret = builtinResources.secret;

type Variant = 'buggy' | 'fixed';

interface Custom<S, T = Record<string, unknown>> extends KubernetesObject {
  spec?: S;
  status?: T;
}

type SpecSchema = NonNullable<Parameters<typeof customResourceDefinition>[0]['spec']>;

function customKind(kindName: string, plural: string, properties: NonNullable<SpecSchema['properties']>) {
  const crd = customResourceDefinition({
    group: GROUP,
    kind: kindName,
    plural,
    spec: { type: 'object', properties },
    status: { type: 'object', x_kubernetes_preserve_unknown_fields: true },
  });
  const resource: ResourceDescriptor = { apiVersion: `${GROUP}/v1`, kind: kindName, plural };
  return { crd, resource };
}

/** A failed request with one of these codes is an outcome the operator expects, not an error. */
const tolerate =
  (...codes: number[]) =>
  (err: unknown): undefined => {
    if (codes.includes(statusCodeOf(err) ?? 0)) return undefined;
    throw err;
  };

function idOf(object: KubernetesObject): { name: string; namespace: string; uid: string } {
  return { name: object.metadata?.name ?? '', namespace: object.metadata?.namespace ?? 'default', uid: object.metadata?.uid ?? '' };
}

function ordinalOf(object: KubernetesObject): number {
  const match = /-(\d+)$/.exec(object.metadata?.name ?? '');
  return match ? Number(match[1]) : -1;
}

const configMaps = (client: KubeClient) => client.resource<V1ConfigMap>(configMap);

/** Creates the object unless one of that name exists: what a StatefulSet does with its claims. */
async function createIfMissing(client: KubeClient, object: V1ConfigMap): Promise<void> {
  await configMaps(client)
    .create({ apiVersion: 'v1', kind: 'ConfigMap', ...object })
    .catch(tolerate(409));
}

/** Deletes by name; with `uid`, only that very object (a successor of the same name answers 409). */
async function deleteConfigMap(client: KubeClient, object: KubernetesObject, uid?: string): Promise<void> {
  const { name, namespace } = idOf(object);
  await configMaps(client)
    .delete({ name, namespace }, uid === undefined ? {} : { preconditions: { uid } })
    .catch(tolerate(404, 409));
}

function ownerReference(owner: KubernetesObject): V1OwnerReference {
  return { apiVersion: owner.apiVersion ?? '', kind: owner.kind ?? '', name: owner.metadata?.name ?? '', uid: owner.metadata?.uid ?? '' };
}

const ownedBy = (object: KubernetesObject, uid: string): boolean => (object.metadata?.ownerReferences ?? []).some((ref) => ref.uid === uid);

// ---------------------------------------------------------------------------------------------
// The StatefulSet stand-in and its controller (another actor, shared by several subjects).

const STS_LABEL = 'statefulset';
const COMPONENT = 'component';

interface StatefulSetIntent {
  readonly name: string;
  readonly namespace: string;
  readonly replicas: number;
  /** The claim template's size; claims keep the size they were made with. */
  readonly storage?: string;
  readonly claimPrefix: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}

function statefulSetObject(intent: StatefulSetIntent): V1ConfigMap {
  const data: Record<string, string> = { replicas: String(intent.replicas), claimPrefix: intent.claimPrefix };
  if (intent.storage !== undefined) data['storage'] = intent.storage;
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: intent.name,
      namespace: intent.namespace,
      labels: { ...intent.labels, [COMPONENT]: 'statefulset' },
      annotations: intent.annotations,
    },
    data,
  };
}

/** Makes members `<set>-<i>` and claims `<claimPrefix>-<set>-<i>` for i < replicas; removes members above; keeps claims. */
const statefulSetController: Reconciler<V1ConfigMap> = {
  async reconcile(set, ctx) {
    const { name, namespace } = idOf(set);
    const replicas = Number(set.data?.['replicas'] ?? 0);
    const claimPrefix = set.data?.['claimPrefix'] ?? 'data';
    const storage = set.data?.['storage'];
    const labels = { ...set.metadata?.labels, [STS_LABEL]: name };
    for (let i = 0; i < replicas; i++) {
      await createIfMissing(ctx.client, {
        metadata: { name: `${claimPrefix}-${name}-${i}`, namespace, labels: { ...labels, [COMPONENT]: 'claim' } },
        data: storage === undefined ? {} : { storage },
      });
      await createIfMissing(ctx.client, {
        metadata: { name: `${name}-${i}`, namespace, labels: { ...labels, [COMPONENT]: 'member' } },
        data: { ordinal: String(i) },
      });
    }
    for (const member of ctx.getSecondaryResources<V1ConfigMap>('set-members')) {
      if (member.metadata?.labels?.[COMPONENT] === 'member' && ordinalOf(member) >= replicas) await deleteConfigMap(ctx.client, member);
    }
  },
};

function registerStatefulSetController(operator: Operator): void {
  operator.register(statefulSetController, {
    name: 'statefulset-controller',
    resource: configMap,
    labelSelector: `${COMPONENT}=statefulset`,
    secondaries: [{ name: 'set-members', resource: configMap, labelSelector: STS_LABEL, toPrimaries: Mappers.fromLabel(STS_LABEL) }],
  });
}

// ---------------------------------------------------------------------------------------------
// 1. cass-operator: a stale deletionTimestamp of a deleted-and-recreated datacenter deletes the
//    new datacenter's claims, found by name.
//    datastax/cass-operator#412 (K8SSAND-559, k8ssandra/cass-operator#118), Sieve "stale state".
//    Upstream proposal: tie the claims to the datacenter's uid and select them by it. The twin
//    owns its claims by uid and deletes each with a uid precondition, so a stale list cannot hit
//    a successor of the same name either.
//    As it turned out, rxkube itself skips `cleanup` for an object the API shows deleted or
//    re-created since (FZ3), so in an rxkube operator this bug cannot happen; the subject stays
//    as the bug a user would write, and as a check that the framework keeps it harmless.

type CassandraDatacenter = Custom<
  { size?: number; replaceNodes?: string[] | null },
  { nodeReplacements?: string[]; conditions?: unknown[]; nodes?: number }
>;
const cassandraDatacenters = customKind('CassandraDatacenter', 'cassandradatacenters', {
  size: { type: 'integer', minimum: 0 },
  replaceNodes: { type: 'array', items: { type: 'string' } },
});
const DC_LABEL = 'cassandra-datacenter';

function recreatedDatacenterReconciler(variant: Variant): Reconciler<CassandraDatacenter> {
  return {
    async reconcile(dc, ctx) {
      const { name, namespace } = idOf(dc);
      for (let i = 0; i < (dc.spec?.size ?? 0); i++) {
        const metadata = {
          name: `server-data-${name}-${i}`,
          namespace,
          labels: { [DC_LABEL]: name },
          ...(variant === 'fixed' ? { ownerReferences: [ownerReference(dc)] } : {}),
        };
        await createIfMissing(ctx.client, { metadata, data: {} });
      }
      return UpdateControl.patchStatus({ ...dc, status: { nodes: dc.spec?.size ?? 0 } });
    },
    // deletePVCs: the datacenter's claims go with it.
    async cleanup(dc, ctx) {
      const { name, namespace, uid } = idOf(dc);
      const { items } = await configMaps(ctx.client).list({ namespace, labelSelector: `${DC_LABEL}=${name}` });
      for (const claim of items) {
        if (variant === 'buggy') await deleteConfigMap(ctx.client, claim);
        else if (ownedBy(claim, uid)) await deleteConfigMap(ctx.client, claim, claim.metadata?.uid);
      }
      return DeleteControl.defaultDelete();
    },
  };
}

const recreatedDatacenter: Subject = {
  name: 'recreated-datacenter-claims',
  sieveClass: 'stale read',
  bug: 'cass-operator deletes the claims of a recreated CassandraDatacenter on a stale deletionTimestamp of its predecessor (datastax/cass-operator#412, K8SSAND-559)',
  options: (variant) => ({
    crds: [cassandraDatacenters.crd],
    setup: (operator) => {
      operator.register(recreatedDatacenterReconciler(variant), {
        resource: cassandraDatacenters.resource,
        finalizerName: 'cassandra.datastax.com/finalizer',
      });
    },
    observe: [cassandraDatacenters.resource, configMap],
    workload: [
      {
        op: 'apply',
        resource: cassandraDatacenters.resource,
        object: { metadata: { name: 'dc1' }, spec: { size: 2 } } as CassandraDatacenter,
      },
      { op: 'delete', resource: cassandraDatacenters.resource, name: 'dc1' },
      {
        op: 'apply',
        resource: cassandraDatacenters.resource,
        object: { metadata: { name: 'dc1' }, spec: { size: 2 } } as CassandraDatacenter,
      },
      // Cassandra writes to its volume.
      { op: 'merge', resource: configMap, name: 'server-data-dc1-0', patch: { data: { sstables: 'rows 1-42' } } },
    ],
  }),
};

// ---------------------------------------------------------------------------------------------
// 2. zookeeper-operator: after a scale down and up, a restarted operator reads a stale
//    replicas=1, scales the StatefulSet down and deletes the "orphan" claim of the member it
//    removed; the scale-up that follows makes an empty one.
//    pravega/zookeeper-operator#314, Sieve "stale state".
//    Twin: an irreversible step (lowering the StatefulSet, deleting claims) is decided on a quorum
//    read of the ZookeeperCluster, not on the cache.

type ZookeeperCluster = Custom<{ replicas?: number }>;
const zookeeperClusters = customKind('ZookeeperCluster', 'zookeeperclusters', { replicas: { type: 'integer', minimum: 0 } });

function staleScaleDownReconciler(variant: Variant): Reconciler<ZookeeperCluster> {
  return {
    async reconcile(zk, ctx) {
      const { name, namespace } = idOf(zk);
      let replicas = zk.spec?.replicas ?? 0;
      const current = await configMaps(ctx.client).find({ name, namespace });
      if (variant === 'fixed' && current && Number(current.data?.['replicas'] ?? 0) > replicas) {
        const fresh = await ctx.client.resource<ZookeeperCluster>(zookeeperClusters.resource).get({ name, namespace });
        replicas = fresh.spec?.replicas ?? 0;
      }
      await configMaps(ctx.client).apply(statefulSetObject({ name, namespace, replicas, claimPrefix: 'data' }), {
        fieldManager: ctx.fieldManager,
        force: true,
      });
      // reconcileFinalizers: the claims of members scaled away are orphans; delete them.
      for (let i = replicas; ; i++) {
        const orphan = await configMaps(ctx.client).find({ name: `data-${name}-${i}`, namespace });
        if (!orphan) break;
        await deleteConfigMap(ctx.client, orphan);
      }
      return UpdateControl.patchStatus({ ...zk, status: { replicas } });
    },
  };
}

const staleScaleDown: Subject = {
  name: 'stale-scale-down-claims',
  sieveClass: 'stale read',
  bug: "zookeeper-operator scales the StatefulSet down and deletes a live member's claim on a stale spec after a scale down and up (pravega/zookeeper-operator#314)",
  options: (variant) => ({
    crds: [zookeeperClusters.crd],
    setup: (operator) => {
      registerStatefulSetController(operator);
      operator.register(staleScaleDownReconciler(variant), { resource: zookeeperClusters.resource });
    },
    observe: [zookeeperClusters.resource, configMap],
    workload: [
      {
        op: 'apply',
        resource: zookeeperClusters.resource,
        object: { metadata: { name: 'zk' }, spec: { replicas: 2 } } as ZookeeperCluster,
      },
      { op: 'merge', resource: zookeeperClusters.resource, name: 'zk', patch: { spec: { replicas: 1 } } },
      { op: 'merge', resource: zookeeperClusters.resource, name: 'zk', patch: { spec: { replicas: 2 } } },
      // ZooKeeper writes its snapshot to the member's volume.
      { op: 'merge', resource: configMap, name: 'data-zk-1', patch: { data: { snapshot: 'zxid 0x200000042' } } },
    ],
  }),
};

// ---------------------------------------------------------------------------------------------
// 3. rabbitmq cluster-operator: to expand the claims it deletes the StatefulSet, patches the
//    claims and lets the StatefulSet be made again; it decides by comparing the StatefulSet's
//    claim template with the spec. A crash after the delete makes the next run create the set
//    with the new template, see nothing to expand, and leave the claims small forever.
//    rabbitmq/cluster-operator#782, Sieve "intermediate state".
//    Twin: the decision compares the claims themselves with the spec.

type RabbitmqCluster = Custom<{ replicas?: number; storage?: string }>;
const rabbitmqClusters = customKind('RabbitmqCluster', 'rabbitmqclusters', {
  replicas: { type: 'integer', minimum: 1 },
  storage: { type: 'string', pattern: '^[0-9]+Gi$' },
});

const gibibytes = (quantity: string | undefined): number => Number((quantity ?? '0Gi').replace(/Gi$/, ''));

function pvcExpansionReconciler(variant: Variant): Reconciler<RabbitmqCluster> {
  return {
    async reconcile(rabbit, ctx) {
      const { name, namespace } = idOf(rabbit);
      const setName = `${name}-server`;
      const replicas = rabbit.spec?.replicas ?? 1;
      const storage = rabbit.spec?.storage ?? '10Gi';
      const sets = configMaps(ctx.client);
      const current = await sets.find({ name: setName, namespace });
      const claims: V1ConfigMap[] = [];
      for (let i = 0; i < replicas; i++) {
        const claim = await sets.find({ name: `persistence-${setName}-${i}`, namespace });
        if (claim) claims.push(claim);
      }
      const needsResize =
        variant === 'buggy'
          ? current !== undefined && gibibytes(current.data?.['storage']) < gibibytes(storage)
          : claims.some((claim) => gibibytes(claim.data?.['storage']) < gibibytes(storage));
      if (needsResize) {
        // A StatefulSet's claim template cannot be changed: delete the set (orphaning its members),
        // expand the claims, and make the set again below.
        if (current) await sets.delete({ name: setName, namespace }, { propagationPolicy: 'Orphan' }).catch(tolerate(404));
        for (const claim of claims) {
          if (gibibytes(claim.data?.['storage']) < gibibytes(storage))
            await sets.mergePatch({ name: claim.metadata!.name!, namespace }, { data: { storage } });
        }
      }
      await sets.apply(statefulSetObject({ name: setName, namespace, replicas, storage, claimPrefix: 'persistence' }), {
        fieldManager: ctx.fieldManager,
        force: true,
      });
      return UpdateControl.patchStatus({ ...rabbit, status: { storage } });
    },
  };
}

const pvcExpansionCrash: Subject = {
  name: 'pvc-expansion-crash',
  sieveClass: 'crash between writes',
  bug: 'rabbitmq cluster-operator never expands the claims if it crashes after deleting the StatefulSet for the expansion (rabbitmq/cluster-operator#782)',
  options: (variant) => ({
    crds: [rabbitmqClusters.crd],
    setup: (operator) => {
      registerStatefulSetController(operator);
      operator.register(pvcExpansionReconciler(variant), { resource: rabbitmqClusters.resource });
    },
    observe: [rabbitmqClusters.resource, configMap],
    workload: [
      {
        op: 'apply',
        resource: rabbitmqClusters.resource,
        object: { metadata: { name: 'rabbit' }, spec: { replicas: 2, storage: '10Gi' } } as RabbitmqCluster,
      },
      { op: 'merge', resource: rabbitmqClusters.resource, name: 'rabbit', patch: { spec: { storage: '15Gi' } } },
    ],
  }),
};

// ---------------------------------------------------------------------------------------------
// 4. percona-xtradb-cluster-operator: the TLS step makes two Secrets, `<name>-ssl` and
//    `<name>-ssl-internal`, but checks only the first to decide whether there is anything to do.
//    A crash between the two creates leaves the internal one missing for good.
//    K8SPXC-896 (the same code in percona-server-mongodb-operator: K8SPSMDB-578), Sieve
//    "intermediate state". Written as a workflow: the buggy one is one dependent for the pair,
//    the twin (the upstream fix checks each Secret) two Kubernetes dependents.

type PerconaXtraDBCluster = Custom<{ size?: number }>;
const xtradbClusters = customKind('PerconaXtraDBCluster', 'perconaxtradbclusters', { size: { type: 'integer', minimum: 1 } });

function tlsSecret(cluster: KubernetesObject, suffix: 'ssl' | 'ssl-internal'): V1Secret {
  const { name, namespace } = idOf(cluster);
  // Real certificates are random; these are derived from the name so that runs compare.
  const pem = Buffer.from(`certificate of ${name}-${suffix}`).toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: { name: `${name}-${suffix}`, namespace },
    data: { 'tls.crt': pem, 'tls.key': pem, 'ca.crt': pem },
  };
}

const tlsPair: DependentResource<V1Secret[], PerconaXtraDBCluster, Context<PerconaXtraDBCluster>> = {
  name: 'tls',
  desired: (cluster) => [tlsSecret(cluster, 'ssl'), tlsSecret(cluster, 'ssl-internal')],
  async getSecondary(cluster, ctx) {
    const { name, namespace } = idOf(cluster);
    const ssl = await ctx.client.resource<V1Secret>(secret).find({ name: `${name}-ssl`, namespace });
    return ssl ? [ssl] : undefined;
  },
  match: () => true,
  async create(desired, _cluster, ctx) {
    for (const object of desired) await ctx.client.resource<V1Secret>(secret).create(object);
  },
};

const sslDependent = (suffix: 'ssl' | 'ssl-internal') =>
  kubernetesDependent<V1Secret, PerconaXtraDBCluster, Context<PerconaXtraDBCluster>>({
    name: suffix,
    resource: secret,
    desired: (cluster) => tlsSecret(cluster, suffix),
  });

const xtradbReconciler: Reconciler<PerconaXtraDBCluster> = {
  reconcile(cluster, ctx) {
    const ready = ctx.workflow?.reconcileResult?.allReady() ?? false;
    return UpdateControl.patchStatus({ ...cluster, status: { tls: ready ? 'ready' : 'pending' } });
  },
};

const sslInternalCrash: Subject = {
  name: 'ssl-internal-secret-crash',
  sieveClass: 'crash between writes',
  bug: 'percona-xtradb-cluster-operator never makes the ssl-internal Secret after a crash between the two TLS Secrets, since it checks only the first (K8SPXC-896, K8SPSMDB-578)',
  options: (variant) => ({
    crds: [xtradbClusters.crd],
    setup: (operator) => {
      const flow =
        variant === 'buggy'
          ? workflow<PerconaXtraDBCluster, Context<PerconaXtraDBCluster>>().add(tlsPair)
          : workflow<PerconaXtraDBCluster, Context<PerconaXtraDBCluster>>().add(sslDependent('ssl')).add(sslDependent('ssl-internal'));
      operator.register(xtradbReconciler, { resource: xtradbClusters.resource, workflow: flow });
    },
    observe: [xtradbClusters.resource, secret],
    workload: [
      { op: 'apply', resource: xtradbClusters.resource, object: { metadata: { name: 'pxc' }, spec: { size: 3 } } as PerconaXtraDBCluster },
    ],
  }),
};

// ---------------------------------------------------------------------------------------------
// 5 and 8. instaclustr cassandra-operator: members carry a finalizer held by a second controller
//    for a short graceful decommission (the kubelet's grace period); the datacenter controller
//    deletes the claim of a member it sees terminating.
//    5. It acts on the terminating state only: when that state is never seen (the delete event
//       comes first), the claim leaks. instaclustr/cassandra-operator#398, Sieve "unobserved
//       state". Twin (the upstream fix's idea): compare the claims with the members that exist.
//    8. A restarted operator that sees a stale terminating member (from an earlier scale-down)
//       deletes the claim of that name, which a later scale-up made for a live member.
//       instaclustr/cassandra-operator#407, Sieve "stale state". Twin (the report's proposal):
//       the claim belongs to its member by uid (an owner reference) and is deleted only with
//       the terminating member's uid and its own uid as a precondition.
//    Both twins also confirm a scale-down with a quorum read before removing a member: the
//    explorer found the first twin of #407 deleting a member (and its data) on a lagging spec.

type CassandraDataCenter = Custom<{ nodes?: number }>;
const cassandraDataCenters = customKind('CassandraDataCenter', 'cassandradatacenters', { nodes: { type: 'integer', minimum: 0 } });
const INSTACLUSTR_DC = 'instaclustr-datacenter';
type InstaclustrBug = 'unobserved' | 'stale';

const claimNameOf = (member: KubernetesObject) => `data-volume-${member.metadata?.name}`;
const isTerminating = (object: KubernetesObject) =>
  object.metadata?.deletionTimestamp !== undefined && object.metadata?.deletionTimestamp !== null;

function instaclustrReconciler(bug: InstaclustrBug, variant: Variant): Reconciler<CassandraDataCenter> {
  const ownClaimsByMember = bug === 'stale' && variant === 'fixed';
  return {
    async reconcile(dc, ctx) {
      const { name, namespace } = idOf(dc);
      const nodes = dc.spec?.nodes ?? 0;
      const objects = ctx.getSecondaryResources<V1ConfigMap>('cassandra-objects');
      const members = objects.filter((o) => o.metadata?.labels?.[COMPONENT] === 'member');
      const claims = objects.filter((o) => o.metadata?.labels?.[COMPONENT] === 'claim');
      // What a StatefulSet does: a member's claim is made before the member (twin of #407: owned by
      // the live member, so after it), and neither is made again while the member exists.
      for (let i = 0; i < nodes; i++) {
        const memberName = `cassandra-${name}-rack1-${i}`;
        const member = members.find((m) => m.metadata?.name === memberName);
        const claim = { name: `data-volume-${memberName}`, namespace, labels: { [INSTACLUSTR_DC]: name, [COMPONENT]: 'claim' } };
        if (!member) {
          if (!ownClaimsByMember) await createIfMissing(ctx.client, { metadata: claim, data: {} });
          await createIfMissing(ctx.client, {
            metadata: { name: memberName, namespace, labels: { [INSTACLUSTR_DC]: name, [COMPONENT]: 'member' } },
            data: { ordinal: String(i) },
          });
        } else if (ownClaimsByMember && !isTerminating(member)) {
          await createIfMissing(ctx.client, {
            metadata: { ...claim, ownerReferences: [ownerReference({ ...member, apiVersion: 'v1', kind: 'ConfigMap' })] },
            data: {},
          });
        }
      }
      // The twins scale down only what a quorum read of the datacenter confirms (a lagging cache
      // must not remove a member the user has asked back meanwhile).
      const above = (confirmed: number) => (object: KubernetesObject) => ordinalOf(object) >= confirmed;
      const scaledDown =
        variant === 'fixed' && [...members, ...claims].some(above(nodes))
          ? await ctx.client.resource<CassandraDataCenter>(cassandraDataCenters.resource).get({ name, namespace })
          : dc;
      const confirmedNodes = scaledDown.spec?.nodes ?? 0;
      for (const member of members) {
        if (above(confirmedNodes)(member) && ordinalOf(member) >= nodes && !isTerminating(member))
          await deleteConfigMap(ctx.client, member, variant === 'fixed' ? member.metadata?.uid : undefined);
      }
      if (bug === 'unobserved' && variant === 'fixed') {
        // Level-based: a claim above the size whose member is gone or going is released.
        for (const claim of claims) {
          const member = members.find((m) => claimNameOf(m) === claim.metadata?.name);
          if (above(confirmedNodes)(claim) && ordinalOf(claim) >= nodes && (!member || isTerminating(member)))
            await deleteConfigMap(ctx.client, claim, claim.metadata?.uid);
        }
      } else {
        // AllDeletedPods: the claims of the members seen terminating.
        for (const member of members.filter(isTerminating)) {
          if (ownClaimsByMember) {
            for (const claim of claims.filter((c) => ownedBy(c, member.metadata?.uid ?? '')))
              await deleteConfigMap(ctx.client, claim, claim.metadata?.uid);
          } else {
            await configMaps(ctx.client)
              .delete({ name: claimNameOf(member), namespace })
              .catch(tolerate(404));
          }
        }
      }
      return UpdateControl.patchStatus({ ...dc, status: { nodes: members.filter((m) => !isTerminating(m)).length } });
    },
  };
}

/** The member's graceful termination: the finalizer stays for 300 ms, then the member goes. */
const memberLifecycle: Reconciler<V1ConfigMap> = {
  reconcile: () => UpdateControl.noUpdate(),
  cleanup(_member, ctx) {
    return ctx.cause.type === 'reschedule' ? DeleteControl.defaultDelete() : DeleteControl.noFinalizerRemoval().rescheduleAfter(300);
  },
};

function instaclustrSetup(bug: InstaclustrBug, variant: Variant) {
  return (operator: Operator) => {
    operator.register(memberLifecycle, {
      name: 'member-lifecycle',
      resource: configMap,
      labelSelector: `${COMPONENT}=member`,
      finalizerName: 'cassandraoperator.instaclustr.com/decommission',
    });
    operator.register(instaclustrReconciler(bug, variant), {
      resource: cassandraDataCenters.resource,
      secondaries: [
        { name: 'cassandra-objects', resource: configMap, labelSelector: INSTACLUSTR_DC, toPrimaries: Mappers.fromLabel(INSTACLUSTR_DC) },
      ],
    });
  };
}

const missedTerminatingMember: Subject = {
  name: 'missed-terminating-member',
  sieveClass: 'observability gap',
  bug: 'instaclustr cassandra-operator leaks the claim of a member whose terminating state it never observed (instaclustr/cassandra-operator#398)',
  options: (variant) => ({
    crds: [cassandraDataCenters.crd],
    setup: instaclustrSetup('unobserved', variant),
    observe: [cassandraDataCenters.resource, configMap],
    workload: [
      {
        op: 'apply',
        resource: cassandraDataCenters.resource,
        object: { metadata: { name: 'dc1' }, spec: { nodes: 2 } } as CassandraDataCenter,
      },
      { op: 'merge', resource: cassandraDataCenters.resource, name: 'dc1', patch: { spec: { nodes: 1 } } },
    ],
  }),
};

const staleTerminatingMember: Subject = {
  name: 'stale-terminating-member',
  sieveClass: 'stale read',
  bug: 'instaclustr cassandra-operator deletes the claim of a live member when a stale view shows its predecessor terminating (instaclustr/cassandra-operator#407)',
  options: (variant) => ({
    crds: [cassandraDataCenters.crd],
    setup: instaclustrSetup('stale', variant),
    observe: [cassandraDataCenters.resource, configMap],
    workload: [
      {
        op: 'apply',
        resource: cassandraDataCenters.resource,
        object: { metadata: { name: 'dc1' }, spec: { nodes: 2 } } as CassandraDataCenter,
      },
      { op: 'merge', resource: cassandraDataCenters.resource, name: 'dc1', patch: { spec: { nodes: 1 } } },
      { op: 'merge', resource: cassandraDataCenters.resource, name: 'dc1', patch: { spec: { nodes: 2 } } },
      { op: 'merge', resource: configMap, name: 'data-volume-cassandra-dc1-rack1-1', patch: { data: { sstables: 'rows 43-99' } } },
    ],
  }),
};

// ---------------------------------------------------------------------------------------------
// 6. cass-operator: a pod name in spec.replaceNodes is moved to status.nodeReplacements without
//    checking that the pod exists; a name that does not exist is never cleared, and the operator
//    requeues on a non-empty list before anything else, so it no longer scales (or restarts,
//    or decommissions). Acto: xlab-uiuc/acto#62, k8ssandra/cass-operator#315 ("bad input",
//    partial inoperability). Twin (k8ssandra/cass-operator#326): only pods of this datacenter
//    are moved; the others are rejected with a Warning and a condition.

const CASS_DC = 'cassandra-dc';

function replaceNodesReconciler(variant: Variant): Reconciler<CassandraDatacenter> {
  return {
    async reconcile(dc, ctx) {
      const { name, namespace } = idOf(dc);
      const dcs = ctx.client.resource<CassandraDatacenter>(cassandraDatacenters.resource);
      const members = ctx.getSecondaryResources<V1ConfigMap>('pods');
      const podNames = new Set(members.map((m) => m.metadata?.name ?? ''));
      const requested = dc.spec?.replaceNodes ?? [];
      const replacements = dc.status?.nodeReplacements ?? [];
      if (requested.length > 0) {
        const accepted = variant === 'buggy' ? requested : requested.filter((pod) => podNames.has(pod));
        const rejected = requested.filter((pod) => !accepted.includes(pod));
        const conditions =
          rejected.length > 0
            ? [
                statusCondition(dc, {
                  type: 'ReplacingNodes',
                  status: false,
                  reason: 'InvalidPodName',
                  message: `not a pod of this datacenter: ${rejected.join(', ')}`,
                }),
              ]
            : [];
        if (rejected.length > 0) ctx.events.warning('InvalidReplaceNodes', `rejected replaceNodes entries: ${rejected.join(', ')}`);
        await dcs.mergePatchStatus(
          { name, namespace },
          { status: { nodeReplacements: [...new Set([...replacements, ...accepted])], conditions } },
        );
        await dcs.mergePatch({ name, namespace }, { spec: { replaceNodes: null } });
        return UpdateControl.noUpdate();
      }
      if (replacements.length > 0) {
        const remaining: string[] = [];
        for (const pod of replacements) {
          const member = members.find((m) => m.metadata?.name === pod);
          if (member) await deleteConfigMap(ctx.client, member);
          else remaining.push(pod);
        }
        await dcs.mergePatchStatus({ name, namespace }, { status: { nodeReplacements: remaining } });
        // Wait for the replacements to finish before anything else (RequeueSoon).
        if (remaining.length > 0) return UpdateControl.noUpdate<CassandraDatacenter>().rescheduleAfter(2_000);
      }
      for (let i = 0; i < (dc.spec?.size ?? 0); i++) {
        await createIfMissing(ctx.client, {
          metadata: { name: `${name}-sts-${i}`, namespace, labels: { [CASS_DC]: name } },
          data: { ordinal: String(i) },
        });
      }
      return UpdateControl.noUpdate();
    },
  };
}

const replaceNodesWedge: Subject = {
  name: 'replace-nodes-wedge',
  sieveClass: 'bad input',
  bug: 'cass-operator stops scaling once spec.replaceNodes names a pod that does not exist (k8ssandra/cass-operator#315, found by Acto)',
  options: (variant) => ({
    crds: [cassandraDatacenters.crd],
    setup: (operator) => {
      operator.register(replaceNodesReconciler(variant), {
        resource: cassandraDatacenters.resource,
        secondaries: [{ name: 'pods', resource: configMap, labelSelector: CASS_DC, toPrimaries: Mappers.fromLabel(CASS_DC) }],
      });
    },
    observe: [cassandraDatacenters.resource, configMap],
    workload: [
      {
        op: 'apply',
        resource: cassandraDatacenters.resource,
        object: { metadata: { name: 'dc1' }, spec: { size: 1 } } as CassandraDatacenter,
      },
      { op: 'merge', resource: cassandraDatacenters.resource, name: 'dc1', patch: { spec: { replaceNodes: ['dc1-sts-7'] } } },
      { op: 'merge', resource: cassandraDatacenters.resource, name: 'dc1', patch: { spec: { size: 2 } } },
    ],
  }),
};

// ---------------------------------------------------------------------------------------------
// 7. cass-operator: to start a node it labels the pod `Starting` and then calls the node's
//    management API. A crash between the label and the call leaves a pod labelled `Starting`
//    whose Cassandra was never started; the restarted operator waits for it forever.
//    K8SSAND-1023, Sieve "intermediate state" (fixed by the Sieve authors: a `Starting` node
//    that the management API reports as not running is started again).
//    The management API is state outside the cluster: a map in this process, keyed by the
//    datacenter's uid, which is new in every run (each run has a fresh server), so runs do not
//    share it and a crash of the operator keeps it, as it keeps a real Cassandra process.

const managementApi = new Map<string, 'running'>();
const NODE_STATE = 'node-state';

function startingNodeReconciler(variant: Variant): Reconciler<CassandraDatacenter> {
  return {
    async reconcile(dc, ctx) {
      const { name, namespace, uid } = idOf(dc);
      const size = dc.spec?.size ?? 0;
      for (let i = 0; i < size; i++) {
        await createIfMissing(ctx.client, {
          metadata: { name: `${name}-sts-${i}`, namespace, labels: { [CASS_DC]: name, [NODE_STATE]: 'Ready-to-Start' } },
          data: { ordinal: String(i) },
        });
      }
      const members = ctx
        .getSecondaryResources<V1ConfigMap>('pods')
        .filter((m) => ordinalOf(m) < size)
        .sort((a, b) => ordinalOf(a) - ordinalOf(b));
      for (const member of members) {
        const node = `${uid}/${member.metadata?.name}`;
        const label = (state: string) =>
          configMaps(ctx.client).mergePatch({ name: member.metadata!.name!, namespace }, { metadata: { labels: { [NODE_STATE]: state } } });
        const state = member.metadata?.labels?.[NODE_STATE];
        if (state === 'Started') continue;
        if (state === 'Ready-to-Start') {
          await label('Starting');
          managementApi.set(node, 'running'); // POST /api/v0/lifecycle/start
          return UpdateControl.noUpdate<CassandraDatacenter>().rescheduleAfter(100);
        }
        if (managementApi.get(node) === 'running') {
          await label('Started');
          continue;
        }
        if (variant === 'fixed') managementApi.set(node, 'running');
        // One node starts at a time: wait for this one to come up.
        return UpdateControl.noUpdate<CassandraDatacenter>().rescheduleAfter(variant === 'fixed' ? 100 : 2_000);
      }
      return UpdateControl.patchStatus({ ...dc, status: { nodes: members.length } });
    },
  };
}

const startingNodeCrash: Subject = {
  name: 'starting-node-crash',
  sieveClass: 'crash between writes',
  bug: 'cass-operator waits forever for a node labelled Starting whose start call was lost in a crash (K8SSAND-1023)',
  options: (variant) => ({
    crds: [cassandraDatacenters.crd],
    setup: (operator) => {
      operator.register(startingNodeReconciler(variant), {
        resource: cassandraDatacenters.resource,
        secondaries: [{ name: 'pods', resource: configMap, labelSelector: CASS_DC, toPrimaries: Mappers.fromLabel(CASS_DC) }],
      });
    },
    observe: [cassandraDatacenters.resource, configMap],
    workload: [
      {
        op: 'apply',
        resource: cassandraDatacenters.resource,
        object: { metadata: { name: 'dc1' }, spec: { size: 2 } } as CassandraDatacenter,
      },
      { op: 'merge', resource: cassandraDatacenters.resource, name: 'dc1', patch: { spec: { size: 3 } } },
    ],
  }),
};

// ---------------------------------------------------------------------------------------------
// 9. zookeeper-operator: the finalizer's cleanup deletes the claims it lists by the cluster's
//    name label; a stale deletionTimestamp of a deleted-and-recreated cluster deletes the new
//    cluster's claims. pravega/zookeeper-operator#312, Sieve "stale state". Written as a
//    workflow whose claims dependent is deleted by the workflow's cleanup (not garbage
//    collected). Twin (the report's proposal): select the claims by the cluster's uid (an owner
//    reference) and delete each with its uid as a precondition. Like 1, kept harmless by rxkube's
//    liveness check before a workflow's cleanup.

function zookeeperClaims(variant: Variant): DependentResource<V1ConfigMap[], ZookeeperCluster, Context<ZookeeperCluster>> {
  const listClaims = async (zk: ZookeeperCluster, ctx: Context<ZookeeperCluster>) => {
    const { name, namespace } = idOf(zk);
    return (await configMaps(ctx.client).list({ namespace, labelSelector: `app=${name}` })).items;
  };
  return {
    name: 'claims',
    garbageCollected: false,
    desired: (zk) => {
      const { name, namespace } = idOf(zk);
      return Array.from({ length: zk.spec?.replicas ?? 0 }, (_, i) => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `data-${name}-${i}`, namespace, labels: { app: name }, ownerReferences: [ownerReference(zk)] },
        data: {},
      }));
    },
    getSecondary: async (zk, ctx) => {
      const claims = await listClaims(zk, ctx);
      return claims.length > 0 ? claims : undefined;
    },
    match: (actual, desired) => desired.every((d) => actual.some((a) => a.metadata?.name === d.metadata?.name)),
    async create(desired, _zk, ctx) {
      for (const claim of desired) await createIfMissing(ctx.client, claim);
    },
    async update(_actual, desired, _zk, ctx) {
      for (const claim of desired) await createIfMissing(ctx.client, claim);
    },
    async delete(zk, ctx) {
      for (const claim of await listClaims(zk, ctx)) {
        if (variant === 'buggy') await deleteConfigMap(ctx.client, claim);
        else if (ownedBy(claim, zk.metadata?.uid ?? '')) await deleteConfigMap(ctx.client, claim, claim.metadata?.uid);
      }
    },
  };
}

const zookeeperStatus: Reconciler<ZookeeperCluster> = {
  reconcile(zk, ctx) {
    return UpdateControl.patchStatus({ ...zk, status: { ready: ctx.workflow?.reconcileResult?.allReady() ?? false } });
  },
};

const recreatedZookeeper: Subject = {
  name: 'recreated-zookeeper-claims',
  sieveClass: 'stale read',
  bug: 'zookeeper-operator deletes the claims of a recreated ZookeeperCluster, listed by name, on a stale deletionTimestamp of its predecessor (pravega/zookeeper-operator#312)',
  options: (variant) => ({
    crds: [zookeeperClusters.crd],
    setup: (operator) => {
      operator.register(zookeeperStatus, {
        resource: zookeeperClusters.resource,
        workflow: workflow<ZookeeperCluster, Context<ZookeeperCluster>>().add(zookeeperClaims(variant)),
      });
    },
    observe: [zookeeperClusters.resource, configMap],
    workload: [
      {
        op: 'apply',
        resource: zookeeperClusters.resource,
        object: { metadata: { name: 'zk' }, spec: { replicas: 1 } } as ZookeeperCluster,
      },
      { op: 'delete', resource: zookeeperClusters.resource, name: 'zk' },
      {
        op: 'apply',
        resource: zookeeperClusters.resource,
        object: { metadata: { name: 'zk' }, spec: { replicas: 1 } } as ZookeeperCluster,
      },
      { op: 'merge', resource: configMap, name: 'data-zk-0', patch: { data: { snapshot: 'zxid 0x100000007' } } },
    ],
  }),
};

// ---------------------------------------------------------------------------------------------
// 10. Elastic cloud-on-k8s: after a scale down and up, a restarted operator reads a stale
//     nodeSet count, writes it to the StatefulSet (whose controller deletes the member) and
//     garbage-collects the claims of members that are not expected.
//     elastic/cloud-on-k8s#5274, Sieve "stale state" (confirmed, not fixed upstream).
//     Twin: each StatefulSet records the generation of the Elasticsearch it was built from
//     (what ECK's expectations track); an operator whose view is older than that record does
//     not write and looks again shortly, until its cache has caught up.

type Elasticsearch = Custom<{ count?: number }>;
const elasticsearches = customKind('Elasticsearch', 'elasticsearches', { count: { type: 'integer', minimum: 0 } });
const SOURCE_GENERATION = 'source-generation';

function staleNodeSetReconciler(variant: Variant): Reconciler<Elasticsearch> {
  return {
    async reconcile(es, ctx) {
      const { name, namespace } = idOf(es);
      const setName = `${name}-es-default`;
      const count = es.spec?.count ?? 0;
      const generation = es.metadata?.generation ?? 0;
      if (variant === 'fixed') {
        const current = await configMaps(ctx.client).find({ name: setName, namespace });
        if (Number(current?.metadata?.annotations?.[SOURCE_GENERATION] ?? 0) > generation)
          return UpdateControl.noUpdate<Elasticsearch>().rescheduleAfter(200);
      }
      const annotations = { [SOURCE_GENERATION]: String(generation) };
      await configMaps(ctx.client).apply(
        statefulSetObject({ name: setName, namespace, replicas: count, claimPrefix: 'elasticsearch-data', annotations }),
        { fieldManager: ctx.fieldManager, force: true },
      );
      // GarbageCollectPVCs: claims of members that are no longer expected.
      for (let i = count; ; i++) {
        const orphan = await configMaps(ctx.client).find({ name: `elasticsearch-data-${setName}-${i}`, namespace });
        if (!orphan) break;
        await deleteConfigMap(ctx.client, orphan);
      }
      return UpdateControl.patchStatus({ ...es, status: { availableNodes: count } });
    },
  };
}

const staleNodeSetCount: Subject = {
  name: 'stale-nodeset-count',
  sieveClass: 'stale read',
  bug: "ECK scales an Elasticsearch StatefulSet down and garbage-collects a live node's claim on a stale nodeSet count (elastic/cloud-on-k8s#5274)",
  options: (variant) => ({
    crds: [elasticsearches.crd],
    setup: (operator) => {
      registerStatefulSetController(operator);
      operator.register(staleNodeSetReconciler(variant), { resource: elasticsearches.resource });
    },
    observe: [elasticsearches.resource, configMap],
    workload: [
      { op: 'apply', resource: elasticsearches.resource, object: { metadata: { name: 'es' }, spec: { count: 2 } } as Elasticsearch },
      { op: 'merge', resource: elasticsearches.resource, name: 'es', patch: { spec: { count: 1 } } },
      { op: 'merge', resource: elasticsearches.resource, name: 'es', patch: { spec: { count: 2 } } },
      { op: 'merge', resource: configMap, name: 'elasticsearch-data-es-es-default-1', patch: { data: { shards: 'logs-2026.11.28' } } },
    ],
  }),
};

// ---------------------------------------------------------------------------------------------
// 11. casskop: a scale-down lowers the StatefulSet and then deletes the claims of the members
//     it removed, deciding that a scale-down is under way by comparing the spec with the
//     StatefulSet. A crash between the two writes leaves the StatefulSet already lowered, so the
//     restarted operator sees no scale-down and the claim stays for good (Sieve's report: one
//     claim more than the reference). Orange-OpenSource/casskop#370, Sieve "intermediate state".
//     The decision logic is reconstructed from that report. Twin: the claims above the size are
//     found by probing, whatever the StatefulSet says.

type CassandraCluster = Custom<{ nodes?: number }>;
const cassandraClusters = customKind('CassandraCluster', 'cassandraclusters', { nodes: { type: 'integer', minimum: 0 } });

function scaleDownClaimsReconciler(variant: Variant): Reconciler<CassandraCluster> {
  return {
    async reconcile(cluster, ctx) {
      const { name, namespace } = idOf(cluster);
      const setName = `${name}-dc1-rack1`;
      const nodes = cluster.spec?.nodes ?? 0;
      const current = await configMaps(ctx.client).find({ name: setName, namespace });
      const replicas = Number(current?.data?.['replicas'] ?? 0);
      await configMaps(ctx.client).apply(statefulSetObject({ name: setName, namespace, replicas: nodes, claimPrefix: 'data' }), {
        fieldManager: ctx.fieldManager,
        force: true,
      });
      const claimName = (i: number) => `data-${setName}-${i}`;
      if (variant === 'buggy') {
        if (current && nodes < replicas)
          for (let i = nodes; i < replicas; i++)
            await configMaps(ctx.client)
              .delete({ name: claimName(i), namespace })
              .catch(tolerate(404));
      } else {
        for (let i = nodes; ; i++) {
          const orphan = await configMaps(ctx.client).find({ name: claimName(i), namespace });
          if (!orphan) break;
          await deleteConfigMap(ctx.client, orphan, orphan.metadata?.uid);
        }
      }
      return UpdateControl.patchStatus({ ...cluster, status: { nodes } });
    },
  };
}

const scaleDownClaimsCrash: Subject = {
  name: 'scale-down-claims-crash',
  sieveClass: 'crash between writes',
  bug: 'casskop leaves the claim of a removed node behind after a crash between lowering the StatefulSet and deleting the claims (Orange-OpenSource/casskop#370)',
  options: (variant) => ({
    crds: [cassandraClusters.crd],
    setup: (operator) => {
      registerStatefulSetController(operator);
      operator.register(scaleDownClaimsReconciler(variant), { resource: cassandraClusters.resource });
    },
    observe: [cassandraClusters.resource, configMap],
    workload: [
      {
        op: 'apply',
        resource: cassandraClusters.resource,
        object: { metadata: { name: 'cassandra-cluster' }, spec: { nodes: 2 } } as CassandraCluster,
      },
      { op: 'merge', resource: cassandraClusters.resource, name: 'cassandra-cluster', patch: { spec: { nodes: 1 } } },
    ],
  }),
};

// ---------------------------------------------------------------------------------------------
// 12. percona-server-mongodb-operator: the same two TLS Secrets as in 4, written by hand in the
//     reconciler: both are made only when `<name>-ssl` is missing. K8SPSMDB-578, Sieve
//     "intermediate state". Twin (the upstream fix): each Secret is checked and made on its own.

type PerconaServerMongoDB = Custom<{ replsets?: number }>;
const mongodbClusters = customKind('PerconaServerMongoDB', 'perconaservermongodbs', { replsets: { type: 'integer', minimum: 1 } });

function mongodbTlsReconciler(variant: Variant): Reconciler<PerconaServerMongoDB> {
  return {
    async reconcile(cluster, ctx) {
      const secrets = ctx.client.resource<V1Secret>(secret);
      const wanted = [tlsSecret(cluster, 'ssl'), tlsSecret(cluster, 'ssl-internal')];
      const { namespace } = idOf(cluster);
      const missing = async (object: V1Secret) => (await secrets.find({ name: object.metadata!.name!, namespace })) === undefined;
      const toCreate = variant === 'buggy' ? ((await missing(wanted[0])) ? wanted : []) : await filterAsync(wanted, missing);
      for (const object of toCreate) await secrets.create(object).catch(tolerate(409));
      return UpdateControl.patchStatus({ ...cluster, status: { tls: 'ready' } });
    },
  };
}

async function filterAsync<T>(items: readonly T[], keep: (item: T) => Promise<boolean>): Promise<T[]> {
  const kept: T[] = [];
  for (const item of items) if (await keep(item)) kept.push(item);
  return kept;
}

const mongodbSslInternalCrash: Subject = {
  name: 'mongodb-ssl-internal-crash',
  sieveClass: 'crash between writes',
  bug: 'percona-server-mongodb-operator never makes the ssl-internal Secret after a crash between the two TLS Secrets (K8SPSMDB-578)',
  options: (variant) => ({
    crds: [mongodbClusters.crd],
    setup: (operator) => {
      operator.register(mongodbTlsReconciler(variant), { resource: mongodbClusters.resource });
    },
    observe: [mongodbClusters.resource, secret],
    workload: [
      {
        op: 'apply',
        resource: mongodbClusters.resource,
        object: { metadata: { name: 'mongodb-cluster' }, spec: { replsets: 1 } } as PerconaServerMongoDB,
      },
    ],
  }),
};

export const blindSubjects: Subject[] = [
  recreatedDatacenter,
  staleScaleDown,
  pvcExpansionCrash,
  sslInternalCrash,
  missedTerminatingMember,
  replaceNodesWedge,
  startingNodeCrash,
  staleTerminatingMember,
  recreatedZookeeper,
  staleNodeSetCount,
  scaleDownClaimsCrash,
  mongodbSslInternalCrash,
];
