/** Snapshots of the observed resources, their comparison without volatile fields, and the diff a failure shows. */
import type { KubernetesObject } from '@kubernetes/client-node';
import { resolveDescriptor, type KubeClient, type ResourceDescriptor } from '../../kube/index.js';
import type { ClusterState, VolatilePath } from './types.js';

export type Snapshot = ReadonlyMap<string, unknown>;

/** Fields that differ between two correct runs: identities, versions, times, bookkeeping. */
const VOLATILE_METADATA = ['uid', 'resourceVersion', 'creationTimestamp', 'managedFields', 'generation', 'selfLink'];

export async function readState(
  client: KubeClient,
  observe: readonly ResourceDescriptor[],
): Promise<ClusterState & { objects: KubernetesObject[] }> {
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

/**
 * Objects keyed by kind and name, volatile fields left out, and every name made with
 * `generateName` compared by its prefix wherever it appears: an object's own name, references,
 * status lists and maps, annotation values (`run-<generated>`). `generated` adds the names of
 * objects that are gone (a status may still name them); the objects' own are always known.
 */
export function snapshot(
  objects: readonly KubernetesObject[],
  volatile: readonly VolatilePath[] = [],
  generated: ReadonlyMap<string, string> = new Map(),
): Snapshot {
  const names = new Map(generated);
  for (const o of objects) {
    const { name, generateName } = o.metadata ?? {};
    if (name && generateName && name.startsWith(generateName) && name.length > generateName.length) names.set(name, generateName);
  }
  const mask = generatedNameMask(names);
  const entries = objects.map((o) => {
    const meta = o.metadata ?? {};
    const own = meta.generateName && meta.name?.startsWith(meta.generateName) ? `${meta.generateName}<generated>` : (meta.name ?? '');
    return { key: `${o.kind} ${meta.namespace ? `${meta.namespace}/` : ''}${own}`, value: mask(normalize(o, volatile)) };
  });
  return new Map(numbered(entries).sort(([a], [b]) => a.localeCompare(b)));
}

/** Entries whose keys collide after masking get `#1`, `#2`… in the order of their values, not of the names that were masked. */
function numbered(entries: readonly { key: string; value: unknown }[]): [string, unknown][] {
  const byKey = new Map<string, unknown[]>();
  for (const { key, value } of entries) byKey.set(key, [...(byKey.get(key) ?? []), value]);
  const result: [string, unknown][] = [];
  for (const [key, values] of byKey) {
    if (values.length === 1 && !key.endsWith('<generated>')) result.push([key, values[0]]);
    else for (const [i, value] of sortedByJson(values).entries()) result.push([`${key}#${i + 1}`, value]);
  }
  return result;
}

const sortedByJson = <T>(values: readonly T[]): T[] => [...values].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

/**
 * Replaces each generated name inside strings, map keys and list items by `<prefix><generated>`.
 * A list or map that held one is put in an order of its masked contents, since the operator's
 * order of random suffixes is no behaviour.
 */
function generatedNameMask(names: ReadonlyMap<string, string>): (value: unknown) => unknown {
  if (names.size === 0) return (value) => value;
  const escaped = [...names.keys()].sort((a, b) => b.length - a.length).map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const pattern = new RegExp(escaped.join('|'), 'g');
  const maskString = (text: string): string => text.replace(pattern, (found) => `${names.get(found) ?? ''}<generated>`);
  const mask = (value: unknown): unknown => {
    if (typeof value === 'string') return maskString(value);
    if (Array.isArray(value)) {
      const items = value.map(mask);
      return items.some((item, i) => JSON.stringify(item) !== JSON.stringify(value[i])) ? sortedByJson(items) : items;
    }
    if (value && typeof value === 'object') {
      const entries = Object.entries(value as Record<string, unknown>).map(([key, v]) => ({ key: maskString(key), value: mask(v) }));
      if (entries.every(({ key }, i) => key === Object.keys(value)[i]))
        return Object.fromEntries(entries.map(({ key, value: v }) => [key, v]));
      return Object.fromEntries(numbered(entries).sort(([a], [b]) => a.localeCompare(b)));
    }
    return value;
  };
  return mask;
}

/** The keys of a volatile path. */
function volatileKeys(path: VolatilePath): string[] {
  if (typeof path !== 'string') return [...path];
  return path.split(/(?<!\\)\./).map((key) => key.replace(/\\\./g, '.'));
}

/** Values the server allocates in the order objects are created, which a perturbation may change: a Service's IPs and node ports. */
function dropServerAllocated(copy: Record<string, unknown>): void {
  if (copy['kind'] !== 'Service' || copy['apiVersion'] !== 'v1') return;
  const spec = copy['spec'] as Record<string, unknown> | undefined;
  if (!spec) return;
  for (const field of ['clusterIP', 'clusterIPs', 'healthCheckNodePort']) delete spec[field];
  if (Array.isArray(spec['ports'])) for (const port of spec['ports'] as Record<string, unknown>[]) delete port['nodePort'];
}

function normalize(o: KubernetesObject, volatile: readonly VolatilePath[]): unknown {
  const copy = JSON.parse(JSON.stringify(o)) as Record<string, unknown> & {
    metadata?: Record<string, unknown>;
    status?: Record<string, unknown>;
  };
  dropServerAllocated(copy);
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
    if (Array.isArray(conditions))
      for (const c of conditions as Record<string, unknown>[]) {
        delete c['lastTransitionTime'];
        delete c['observedGeneration'];
      }
  }
  for (const path of volatile) deletePath(copy, volatileKeys(path));
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
    for (const field of new Set([...Object.keys(ra), ...Object.keys(rb)].sort()))
      diffValues(key, path ? `${path}.${field}` : field, ra[field], rb[field], lines);
    return;
  }
  lines.push(`~ ${key} ${path}: ${show(a)} → ${show(b)}`);
}

function show(value: unknown): string {
  return value === undefined ? '(absent)' : JSON.stringify(value);
}
