/**
 * The history of the observed resources as the server committed them: what a stale view is
 * served from. Each run's server is fresh, so a list and a watch from its resourceVersion see
 * every revision.
 */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { createKubeClient, openWatchStream, resolveDescriptor, resourcePath, apiVersionPath, type ResolvedDescriptor, type ResourceDescriptor } from '../../../kube/index.js';

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
  /** Events seen: the explorer waits for them to have arrived before it serves a view. */
  seen = 0;

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
        { path: resourcePath(resource), query: { resourceVersion: String(track.baseRv), timeoutSeconds: 3600 }, inactivityTimeoutMs: 3_600_000 },
        (type, object) => {
          if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
          const o = object as KubernetesObject;
          track.revisions.push({ rv: rvOf(o), type, object: o });
          mirror.seen++;
        },
        () => undefined,
      );
    }
    return mirror;
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

type Term = (labels: Record<string, string>) => boolean;

/**
 * A label selector of the list query as a predicate; undefined when it uses a form this parser
 * does not know (the list is then served fresh rather than wrongly).
 */
export function labelSelectorPredicate(text: string | null): Term | undefined {
  if (!text) return () => true;
  const terms: Term[] = [];
  for (const raw of text.match(/(?:[^,(]|\([^)]*\))+/g) ?? []) {
    const term = raw.trim();
    let m: RegExpMatchArray | null;
    if ((m = term.match(/^([\w./-]+)\s*(==|=|!=)\s*([\w.-]*)$/))) {
      const [, key = '', op, value] = m;
      terms.push(op === '!=' ? (l) => l[key] !== value : (l) => l[key] === value);
    } else if ((m = term.match(/^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$/))) {
      const [, key = '', op, list = ''] = m;
      const values = list.split(',').map((v) => v.trim());
      terms.push(op === 'in' ? (l) => values.includes(l[key] ?? '\0') : (l) => !values.includes(l[key] ?? '\0'));
    } else if ((m = term.match(/^(!?)([\w./-]+)$/))) {
      const [, not, key = ''] = m;
      terms.push(not ? (l) => !(key in l) : (l) => key in l);
    } else return undefined;
  }
  return (labels) => terms.every((t) => t(labels));
}

/** `metadata.name=x,metadata.namespace=y` (the only field selectors a stale view honours). */
export function fieldSelectorPredicate(text: string | null): ((o: KubernetesObject) => boolean) | undefined {
  if (!text) return () => true;
  const checks: ((o: KubernetesObject) => boolean)[] = [];
  for (const term of text.split(',')) {
    const m = term.trim().match(/^metadata\.(name|namespace)\s*(==|=|!=)\s*(.*)$/);
    if (!m) return undefined;
    const [, field, op, value] = m;
    const read = (o: KubernetesObject): string | undefined => (field === 'name' ? o.metadata?.name : o.metadata?.namespace);
    checks.push(op === '!=' ? (o) => read(o) !== value : (o) => read(o) === value);
  }
  return (o) => checks.every((c) => c(o));
}
