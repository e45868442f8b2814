/**
 * The workload's steps as the server sees them: the namespaces and actors they need, each step
 * made by the admin or its actor, and the answer the run compares with the reference's.
 */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import {
  builtinResources,
  createKubeClient,
  resolveDescriptor,
  statusCodeOf,
  type KubeClient,
  type ResolvedDescriptor,
} from '../../kube/index.js';
import type { Action, Actor, Selection } from './types.js';

const FIELD_MANAGER = 'rxkube-explore';
const ALL: Actor['rules'] = [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }];
const CLUSTER_ROLES = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', plural: 'clusterroles', namespaced: false };
const CLUSTER_ROLE_BINDINGS = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRoleBinding',
  plural: 'clusterrolebindings',
  namespaced: false,
};
const SERVICE_ACCOUNT_USER = /^system:serviceaccount:([^:]+):([^:]+)$/;

/** How the server answered a step: the status code, the revision it made, and the objects it wrote. */
export interface StepAnswer {
  readonly code: number;
  readonly rv: number | undefined;
  /** An object the step wrote is held by a finalizer (not for a delete). */
  readonly deleting: boolean;
  /** What the server answered each write (the mirror waits to have seen them); none for a code step. */
  readonly written: readonly {
    readonly resource: ResolvedDescriptor;
    readonly method: 'PATCH' | 'DELETE';
    readonly object: KubernetesObject;
  }[];
}

/** The clients the steps are made with: the admin's, and one per actor. */
export interface StepClients {
  readonly admin: KubeClient;
  readonly actors: ReadonlyMap<string, KubeClient>;
}

/** The namespaces the workload's objects name, made before the operator starts. */
export async function createNamespaces(admin: KubeClient, actions: readonly Action[]): Promise<void> {
  const names = new Set<string>();
  for (const a of actions) {
    const ns = a.op === 'run' ? undefined : 'object' in a ? a.object.metadata?.namespace : a.namespace;
    if (ns && ns !== 'default') names.add(ns);
  }
  for (const name of names) await admin.resource(builtinResources.namespace).create({ metadata: { name } });
}

/**
 * A client per actor of the workload: the admin impersonating the actor's user, which RBAC grants
 * the actor's rules cluster-wide (a ClusterRole and a ClusterRoleBinding).
 */
export async function actorClients(admin: KubeClient, kubeConfig: () => KubeConfig, actions: readonly Action[]): Promise<StepClients> {
  const actors = new Map<string, KubeClient>();
  for (const actor of actions.flatMap((a) => (a.as ? [a.as] : []))) {
    if (actors.has(actor.user)) continue;
    const name = `rxkube-explore-actor-${actors.size + 1}`;
    await admin.resource(CLUSTER_ROLES).create({
      apiVersion: CLUSTER_ROLES.apiVersion,
      kind: CLUSTER_ROLES.kind,
      metadata: { name },
      rules: actor.rules ?? ALL,
    } as KubernetesObject);
    const sa = SERVICE_ACCOUNT_USER.exec(actor.user);
    const subject = sa
      ? { kind: 'ServiceAccount', name: sa[2], namespace: sa[1] }
      : { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: actor.user };
    await admin.resource(CLUSTER_ROLE_BINDINGS).create({
      apiVersion: CLUSTER_ROLE_BINDINGS.apiVersion,
      kind: CLUSTER_ROLE_BINDINGS.kind,
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [subject],
    } as KubernetesObject);
    const config = kubeConfig();
    config.loadFromOptions({
      clusters: config.clusters,
      users: config.users.map((u) => ({ ...u, impersonateUser: actor.user })),
      contexts: config.contexts,
      currentContext: config.currentContext,
    });
    actors.set(actor.user, createKubeClient(config));
  }
  return { admin, actors };
}

/** Makes one step; a status code the server answered is the step's answer, not an error. */
export async function performStep(clients: StepClients, action: Action): Promise<StepAnswer> {
  const client = action.as ? clients.actors.get(action.as.user) : clients.admin;
  if (!client) throw new Error(`no client for the actor ${action.as?.user ?? ''}`);
  try {
    if (action.op === 'run') {
      await action.run(client);
      return { code: 200, rv: undefined, deleting: false, written: [] };
    }
    const d = resolveDescriptor(action.resource);
    const objects = client.resource(d);
    const namespace =
      (action.op === 'apply' || action.op === 'create' ? action.object.metadata?.namespace : action.namespace) ??
      (d.namespaced ? 'default' : undefined);
    if (action.op === 'apply' || action.op === 'create') {
      const body = {
        apiVersion: d.apiVersion,
        kind: d.kind,
        ...action.object,
        metadata: { ...action.object.metadata, namespace },
      } as KubernetesObject;
      const answer =
        action.op === 'create'
          ? await objects.create(body)
          : action.subresource === 'status'
            ? await objects.applyStatus(body, { fieldManager: FIELD_MANAGER, force: true })
            : await objects.apply(body, { fieldManager: FIELD_MANAGER, force: true });
      return answered(d, 'PATCH', [answer]);
    }
    const names = action.name !== undefined ? [action.name] : await selected(clients.admin, d, namespace, action.select);
    if (names.length === 0) return { code: 404, rv: undefined, deleting: false, written: [] };
    const answers: KubernetesObject[] = [];
    for (const name of names) {
      const ref = { name, namespace };
      if (action.op === 'delete') {
        const gone = await objects.delete(ref);
        if (gone) answers.push(gone);
      } else if (action.subresource === 'scale') {
        await objects.patch(ref, action.patch, { type: 'merge', subresource: 'scale', fieldManager: FIELD_MANAGER });
        answers.push(await clients.admin.resource(d).get(ref));
      } else if (action.subresource === 'status')
        answers.push(await objects.mergePatchStatus(ref, action.patch, { fieldManager: FIELD_MANAGER }));
      else answers.push(await objects.mergePatch(ref, action.patch, { fieldManager: FIELD_MANAGER }));
    }
    return {
      ...answered(d, action.op === 'delete' ? 'DELETE' : 'PATCH', answers),
      deleting: action.op !== 'delete' && answers.some((a) => a.metadata?.deletionTimestamp),
    };
  } catch (err) {
    const code = statusCodeOf(err);
    if (code === undefined) throw err;
    return { code, rv: undefined, deleting: false, written: [] };
  }
}

function answered(resource: ResolvedDescriptor, method: 'PATCH' | 'DELETE', objects: readonly KubernetesObject[]): StepAnswer {
  const rvs = objects.map((o) => Number(o.metadata?.resourceVersion)).filter((rv) => Number.isFinite(rv) && rv > 0);
  return {
    code: 200,
    rv: rvs.length > 0 ? Math.max(...rvs) : undefined,
    deleting: method === 'PATCH' && objects.some((o) => o.metadata?.deletionTimestamp),
    written: objects.map((object) => ({ resource, method, object })),
  };
}

/** The names a selection picks, in name order: the admin reads them fresh. */
async function selected(
  admin: KubeClient,
  resource: ResolvedDescriptor,
  namespace: string | undefined,
  select: Selection,
): Promise<string[]> {
  const listed = await admin.resource(resource).list({ namespace, ...(select.labels ? { labelSelector: select.labels } : {}) });
  return listed.items
    .map((o) => o.metadata?.name ?? '')
    .filter((name) => select.namePrefix === undefined || name.startsWith(select.namePrefix))
    .sort();
}

export function describeAction(action: Action): string {
  const by = action.as ? ` as ${action.as.user}` : '';
  if (action.op === 'run') return `run ${action.name}${by}`;
  const kind = action.resource.kind;
  const sub = 'subresource' in action && action.subresource ? `/${action.subresource}` : '';
  switch (action.op) {
    case 'apply':
    case 'create':
      return `${action.op} ${kind}${sub} ${action.object.metadata?.name ?? ''}${action.op === 'apply' && action.input?.revertOf !== undefined ? ` (revert to step ${action.input.revertOf})` : ''}${by}`;
    case 'merge':
      return `merge ${kind}${sub} ${describeTarget(action)} ${JSON.stringify(action.patch)}${by}`;
    case 'delete':
      return `delete ${kind} ${describeTarget(action)}${by}`;
  }
}

function describeTarget(target: { readonly name?: string | undefined; readonly select?: Selection | undefined }): string {
  if (target.name !== undefined) return target.name;
  const labels = Object.entries(target.select?.labels ?? {}).map(([k, v]) => `${k}=${v}`);
  return `[${[...labels, ...(target.select?.namePrefix !== undefined ? [`${target.select.namePrefix}*`] : [])].join(',')}]`;
}
