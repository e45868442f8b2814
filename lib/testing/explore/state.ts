/** Snapshots of the observed resources, their comparison without volatile fields, and the diff a failure shows. */
import type { KubernetesObject } from '@kubernetes/client-node';
import { resolveDescriptor, type KubeClient, type ResourceDescriptor } from '../../kube/index.js';
import type { ClusterState } from './types.js';

export type Snapshot = ReadonlyMap<string, unknown>;

/** Fields that differ between two correct runs: identities, versions, times, bookkeeping. */
const VOLATILE_METADATA = ['uid', 'resourceVersion', 'creationTimestamp', 'managedFields', 'generation', 'selfLink'];

export async function readState(client: KubeClient, observe: readonly ResourceDescriptor[]): Promise<ClusterState & { objects: KubernetesObject[] }> {
  const byKind = new Map<string, KubernetesObject[]>();
  const objects: KubernetesObject[] = [];
  for (const r of observe) {
    const d = resolveDescriptor(r);
    const items = (await client.resource(d).list({})).items.map((o) => ({ ...o, apiVersion: d.apiVersion, kind: d.kind }));
    byKind.set(`${d.apiVersion}/${d.kind}`, items);
    objects.push(...items);
  }
  const of = (r: ResourceDescriptor, namespace?: string): KubernetesObject[] =>
    (byKind.get(`${r.apiVersion}/${r.kind}`) ?? []).filter((o) => namespace === undefined || o.metadata?.namespace === namespace);
  return {
    objects,
    list: of,
    get: (r, name, namespace) => of(r, namespace).find((o) => o.metadata?.name === name),
  };
}

/** Objects keyed by kind and name, generated names masked (`run-<generated>#1`), volatile fields left out. */
export function snapshot(objects: readonly KubernetesObject[], volatile: readonly string[] = []): Snapshot {
  const result = new Map<string, unknown>();
  const generated = new Map<string, number>();
  const sorted = [...objects].sort((a, b) => identity(a).localeCompare(identity(b)));
  for (const o of sorted) {
    const meta = o.metadata ?? {};
    let name = meta.name ?? '';
    if (meta.generateName && name.startsWith(meta.generateName)) {
      const base = `${o.kind} ${meta.namespace ?? ''}/${meta.generateName}`;
      const n = (generated.get(base) ?? 0) + 1;
      generated.set(base, n);
      name = `${meta.generateName}<generated>#${n}`;
    }
    result.set(`${o.kind} ${meta.namespace ? `${meta.namespace}/` : ''}${name}`, normalize(o, volatile));
  }
  return result;
}

function identity(o: KubernetesObject): string {
  return `${o.kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.generateName ? `${o.metadata.generateName}` : ''}${o.metadata?.creationTimestamp ?? ''}${o.metadata?.name ?? ''}`;
}

function normalize(o: KubernetesObject, volatile: readonly string[]): unknown {
  const copy = JSON.parse(JSON.stringify(o)) as Record<string, unknown> & { metadata?: Record<string, unknown>; status?: Record<string, unknown> };
  const meta = copy.metadata ?? {};
  for (const field of VOLATILE_METADATA) delete meta[field];
  if (meta['deletionTimestamp'] !== undefined) meta['deletionTimestamp'] = '<set>';
  if (meta['generateName'] !== undefined) delete meta['name'];
  const owners = meta['ownerReferences'];
  if (Array.isArray(owners)) for (const ref of owners as Record<string, unknown>[]) delete ref['uid'];
  const status = copy.status;
  if (status) {
    delete status['observedGeneration'];
    const conditions = status['conditions'];
    if (Array.isArray(conditions)) for (const c of conditions as Record<string, unknown>[]) {
      delete c['lastTransitionTime'];
      delete c['observedGeneration'];
    }
  }
  for (const path of volatile) deletePath(copy, path.split('.'));
  return copy;
}

function deletePath(target: Record<string, unknown>, path: string[]): void {
  const [head, ...rest] = path;
  if (head === undefined) return;
  if (rest.length === 0) {
    delete target[head];
    return;
  }
  const next = target[head];
  if (next && typeof next === 'object') deletePath(next as Record<string, unknown>, rest);
}

/** Lines naming each difference: `- ConfigMap default/x` only in `expected`, `+` only in `actual`, `~` a field that differs. */
export function diffSnapshots(expected: Snapshot, actual: Snapshot): string[] {
  const lines: string[] = [];
  for (const [key, value] of expected) {
    if (!actual.has(key)) lines.push(`- ${key} (missing in this run)`);
    else diffValues(key, '', value, actual.get(key), lines);
  }
  for (const key of actual.keys()) if (!expected.has(key)) lines.push(`+ ${key} (not in the reference)`);
  return lines;
}

function diffValues(key: string, path: string, a: unknown, b: unknown, lines: string[]): void {
  if (JSON.stringify(a) === JSON.stringify(b)) return;
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const ra = a as Record<string, unknown>;
    const rb = b as Record<string, unknown>;
    for (const field of new Set([...Object.keys(ra), ...Object.keys(rb)].sort())) diffValues(key, path ? `${path}.${field}` : field, ra[field], rb[field], lines);
    return;
  }
  lines.push(`~ ${key} ${path}: ${show(a)} → ${show(b)}`);
}

function show(value: unknown): string {
  return value === undefined ? '(absent)' : JSON.stringify(value);
}
