/**
 * The history of the observed resources as the server committed them: what a stale view is
 * served from. Each run's server is fresh, so a list and a watch from its resourceVersion see
 * every revision.
 */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import {
  createKubeClient,
  openWatchStream,
  resolveDescriptor,
  resourcePath,
  apiVersionPath,
  type KubeClient,
  type ResolvedDescriptor,
  type ResourceDescriptor,
} from '../../kube/index.js';

interface Revision {
  readonly rv: number;
  readonly type: string;
  readonly object: KubernetesObject;
}

interface Track {
  readonly resource: ResolvedDescriptor;
  readonly base: KubernetesObject[];
  readonly baseRv: number;
  readonly revisions: Revision[];
  close?: () => void;
}

const rvOf = (o: KubernetesObject): number => Number(o.metadata?.resourceVersion ?? 0);
const keyOf = (o: KubernetesObject): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

export class Mirror {
  private readonly tracks: Track[] = [];
  private expected: { readonly resource: ResolvedDescriptor; readonly key: string; readonly rv: number | undefined }[] = [];

  static async start(kubeConfig: KubeConfig, resources: readonly ResourceDescriptor[]): Promise<Mirror> {
    const mirror = new Mirror();
    const client = createKubeClient(kubeConfig);
    for (const r of resources) {
      const resource = resolveDescriptor(r);
      const listed = await client.resource(resource).list({});
      const track: Track = { resource, base: listed.items, baseRv: Number(listed.metadata?.resourceVersion ?? 0), revisions: [] };
      mirror.tracks.push(track);
      track.close = await openWatchStream(
        kubeConfig,
        {
          path: resourcePath(resource),
          query: { resourceVersion: String(track.baseRv), timeoutSeconds: 3600 },
          inactivityTimeoutMs: 3_600_000,
        },
        (type, object) => {
          if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
          const o = object as KubernetesObject;
          track.revisions.push({ rv: rvOf(o), type, object: o });
        },
        () => undefined,
      );
    }
    return mirror;
  }

  /** The observed resource an object's path (or a collection's, for a create) names. */
  matchWrite(path: string): ResolvedDescriptor | undefined {
    for (const { resource } of this.tracks) {
      const base = apiVersionPath(resource.apiVersion);
      if (!path.startsWith(`${base}/`)) continue;
      const rest = path.slice(base.length + 1).split('/');
      const parts = resource.namespaced && rest[0] === 'namespaces' ? rest.slice(2) : rest;
      if (parts[0] === resource.plural) return resource;
    }
    return undefined;
  }

  /** The observed resource a collection path names, and the namespace it is limited to. */
  match(path: string): { resource: ResolvedDescriptor; namespace: string | undefined } | undefined {
    for (const { resource } of this.tracks) {
      if (path === resourcePath(resource)) return { resource, namespace: undefined };
      const prefix = `${apiVersionPath(resource.apiVersion)}/namespaces/`;
      if (resource.namespaced && path.startsWith(prefix)) {
        const [namespace, plural, extra] = path.slice(prefix.length).split('/');
        if (plural === resource.plural && extra === undefined && namespace) return { resource, namespace: decodeURIComponent(namespace) };
      }
    }
    return undefined;
  }

  /**
   * What the server answered a committed write of an observed resource (the operator's or the
   * workload's): the mirror has caught up once it has seen that revision, or for a deletion the
   * object gone (or marked for deletion).
   */
  expect(resource: ResolvedDescriptor, method: string, answer: unknown): void {
    const o = answer as KubernetesObject | undefined;
    if (!o?.metadata?.name) return;
    const key = keyOf(o);
    const rv = rvOf(o);
    if (method === 'DELETE' && !o.metadata.deletionTimestamp) this.expected.push({ resource, key, rv: undefined });
    else if (rv > 0) this.expected.push({ resource, key, rv });
  }

  /**
   * After a step that does not say what it wrote (a code step): every observed object as the
   * server has it now, and every one gone, must have arrived before the mirror has caught up.
   */
  async expectCurrent(client: KubeClient): Promise<void> {
    for (const track of this.tracks) {
      const present = new Set<string>();
      for (const o of (await client.resource(track.resource).list({})).items) {
        present.add(keyOf(o));
        this.expect(track.resource, 'PATCH', o);
      }
      for (const o of this.stateAt(track.resource, Number.POSITIVE_INFINITY))
        if (!present.has(keyOf(o))) this.expected.push({ resource: track.resource, key: keyOf(o), rv: undefined });
    }
  }

  /** Whether every expected revision has arrived (those that have are forgotten). */
  caughtUp(): boolean {
    this.expected = this.expected.filter((e) => {
      const track = this.tracks.find((t) => t.resource === e.resource);
      if (!track) return false;
      if (e.rv !== undefined) return (track.revisions.at(-1)?.rv ?? track.baseRv) < e.rv;
      const latest = [...track.revisions].reverse().find((r) => keyOf(r.object) === e.key);
      return latest !== undefined
        ? latest.type !== 'DELETED' && !latest.object.metadata?.deletionTimestamp
        : track.base.some((o) => keyOf(o) === e.key);
    });
    return this.expected.length === 0;
  }

  /** The newest revision of `resource` the mirror has seen. */
  latestRv(resource: ResolvedDescriptor): number {
    const track = this.tracks.find((t) => t.resource === resource);
    return track ? (track.revisions.at(-1)?.rv ?? track.baseRv) : 0;
  }

  /**
   * Revisions after `afterRv` that a watch of `resource` (in `namespace`, through `selects`) has
   * to deliver: those of an object it selects, before or after the change.
   */
  pendingFor(
    resource: ResolvedDescriptor,
    namespace: string | undefined,
    selects: (o: KubernetesObject) => boolean,
    afterRv: number,
  ): number {
    const track = this.tracks.find((t) => t.resource === resource);
    if (!track) return 0;
    const previous = new Map<string, KubernetesObject>();
    for (const o of track.base) previous.set(keyOf(o), o);
    let pending = 0;
    for (const r of track.revisions) {
      const key = keyOf(r.object);
      const before = previous.get(key);
      previous.set(key, r.object);
      if (r.rv <= afterRv || (namespace !== undefined && r.object.metadata?.namespace !== namespace)) continue;
      if (selects(r.object) || (before !== undefined && selects(before))) pending++;
    }
    return pending;
  }

  /** Every name made with `generateName` an observed object has had in this run, and its prefix: a status may name one that is gone. */
  generatedNames(): Map<string, string> {
    const names = new Map<string, string>();
    for (const track of this.tracks) {
      for (const o of [...track.base, ...track.revisions.map((r) => r.object)]) {
        const { name, generateName } = o.metadata ?? {};
        if (name && generateName && name.startsWith(generateName) && name.length > generateName.length) names.set(name, generateName);
      }
    }
    return names;
  }

  /** The objects of `resource` as they were at revision `rv`. */
  stateAt(resource: ResolvedDescriptor, rv: number): KubernetesObject[] {
    const track = this.tracks.find((t) => t.resource === resource);
    if (!track) return [];
    const objects = new Map<string, KubernetesObject>();
    for (const o of track.base) objects.set(keyOf(o), o);
    for (const r of track.revisions) {
      if (r.rv > rv) break;
      if (r.type === 'DELETED') objects.delete(keyOf(r.object));
      else objects.set(keyOf(r.object), r.object);
    }
    return [...objects.values()].sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
  }

  close(): void {
    for (const t of this.tracks) t.close?.();
  }
}
