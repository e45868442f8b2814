import { KubeConfig, type V1Lease } from '@kubernetes/client-node';
import type { TestScheduler } from 'rxjs/testing';
import { KubeApiError, type ObjectRef } from '../../lib/kube/index.js';
import type { LeaseClient } from '../../lib/leader/index.js';
import type { ListWatchScope, WatchRequest } from '../../lib/cache/index.js';

/** How one instance's connection to the fake server behaves: 'dead' is a killed process or a cut network. */
export type Link = 'up' | 'dead' | 'failing';

/** The Lease an elector's client reads and writes unless told another. */
const LEADER_LEASE = 'op';

interface Watcher {
  readonly link: () => Link;
  readonly matches: (lease: V1Lease) => boolean;
  readonly onEvent: (type: 'ADDED' | 'MODIFIED' | 'DELETED', lease: V1Lease) => void;
  zombie?: boolean;
}

/** One stored change, with the virtual time it was stored; `deleted` for a delete. */
export interface LeaseWrite {
  readonly at: number;
  readonly name: string;
  readonly holder: string;
  readonly lease: V1Lease;
  readonly deleted?: boolean;
}

/**
 * Leases on a fake API server living in virtual time (one namespace): every request takes
 * `latencyMs`, writes are conditional on resourceVersion (409 otherwise), and watchers get each
 * stored version after `latencyMs`. `writes` records every stored version with the virtual time it
 * was stored. Electors and shards take the same client (`client`), as they do in production.
 */
export class FakeLeaseServer {
  readonly writes: LeaseWrite[] = [];
  requests = 0;
  private readonly leases = new Map<string, V1Lease>();
  private version = 0;
  private readonly watchers = new Set<Watcher>();

  constructor(
    private readonly scheduler: TestScheduler,
    private readonly latencyMs = 5,
  ) {}

  /**
   * One instance's client (an elector's or a shard's); `link()` is asked on every request and
   * event. A watch from a resourceVersion (an informer's) opens after `latencyMs` and sends what
   * was stored after it; a watch from none (the elector's) opens at once and sends the current
   * Leases first.
   */
  client(link: () => Link): LeaseClient {
    const call = this.caller(link);
    const notFound = (ref: ObjectRef) => apiError(404, 'NotFound', `leases "${ref.name}" not found`);
    return {
      create: (lease, options) => call(options?.signal, () => this.create(lease)),
      replace: (lease, options) => call(options?.signal, () => this.replace(lease)),
      get: (ref, options) =>
        call(options?.signal, () => {
          const lease = this.copy(ref.name);
          if (!lease) throw notFound(ref);
          return lease;
        }),
      find: (ref, options) => call(options?.signal, () => this.copy(ref.name)),
      delete: (ref, options) =>
        call(options?.signal, () => {
          const lease = this.leases.get(ref.name);
          if (!lease) throw notFound(ref);
          const expected = options?.preconditions?.resourceVersion;
          if (expected !== undefined && expected !== lease.metadata?.resourceVersion) throw apiError(409, 'Conflict');
          this.leases.delete(ref.name);
          this.stored('DELETED', { ...lease, metadata: { ...lease.metadata, resourceVersion: String(++this.version) } });
          return structuredClone(lease);
        }),
      listWatch: {
        list: (scope, request) =>
          call(request?.signal, () => ({
            items: [...this.leases.values()].filter(selectedBy(scope)).map((lease) => structuredClone(lease)),
            resourceVersion: String(this.version),
          })),
        // The fake never ends a watch: onClose is not called.
        watch: (request: WatchRequest, onEvent) => {
          const watcher: Watcher = { link, matches: selectedBy(request), onEvent };
          if (request.resourceVersion === '') {
            this.watchers.add(watcher);
            for (const lease of this.leases.values()) {
              const current = structuredClone(lease);
              if (watcher.matches(current))
                this.scheduler.schedule(() => link() === 'up' && watcher.onEvent('ADDED', current), this.latencyMs);
            }
            return Promise.resolve(() => void this.watchers.delete(watcher));
          }
          return call(undefined, () => {
            // What was stored after the list the watch starts from, then every change as it is stored.
            for (const write of this.writes.filter((w) => Number(w.lease.metadata?.resourceVersion) > Number(request.resourceVersion))) {
              if (watcher.matches(write.lease))
                this.scheduler.schedule(
                  () => link() === 'up' && onEvent(write.deleted ? 'DELETED' : 'MODIFIED', structuredClone(write.lease)),
                  this.latencyMs,
                );
            }
            this.watchers.add(watcher);
            return () => void this.watchers.delete(watcher);
          });
        },
        find: (id) => call(undefined, () => this.copy(id.name)),
      },
    };
  }

  /** The open watches (of the client on `link`, else every one) stay open but never deliver again: dead connections no one noticed. */
  silenceWatches(link?: () => Link): void {
    for (const w of this.watchers) if (link === undefined || w.link === link) w.zombie = true;
  }

  /** The leader Lease's holder. */
  get holder(): string {
    return this.leases.get(LEADER_LEASE)?.spec?.holderIdentity ?? '';
  }

  /** The Lease `name` as stored now. */
  lease(name: string): V1Lease | undefined {
    return this.copy(name);
  }

  /** Every Lease stored now. */
  list(): V1Lease[] {
    return [...this.leases.values()].map((lease) => structuredClone(lease));
  }

  /** Each request answers after `latencyMs` unless the link is dead (then only an abort ends it) or failing (500). */
  private caller(link: () => Link) {
    return <T>(signal: AbortSignal | undefined, work: () => T): Promise<T> =>
      new Promise<T>((resolve, reject) => {
        this.requests++;
        const onAbort = () => {
          timer.unsubscribe();
          reject(signal?.reason);
        };
        const timer = this.scheduler.schedule(() => {
          const state = link();
          if (state === 'dead') return; // never answers; only the abort ends it
          signal?.removeEventListener('abort', onAbort);
          if (state === 'failing') return reject(apiError(500, 'InternalError'));
          try {
            resolve(work());
          } catch (err) {
            reject(err);
          }
        }, this.latencyMs);
        if (signal?.aborted) onAbort();
        else signal?.addEventListener('abort', onAbort, { once: true });
      });
  }

  private create(lease: V1Lease): V1Lease {
    const name = lease.metadata?.name ?? '';
    if (this.leases.has(name)) throw apiError(409, 'AlreadyExists');
    return this.store(lease);
  }

  private replace(lease: V1Lease): V1Lease {
    const current = this.leases.get(lease.metadata?.name ?? '');
    if (!current) throw apiError(404, 'NotFound');
    if (lease.metadata?.resourceVersion !== current.metadata?.resourceVersion) throw apiError(409, 'Conflict');
    return this.store(lease);
  }

  private store(lease: V1Lease): V1Lease {
    const name = lease.metadata?.name ?? '';
    const type = this.leases.has(name) ? 'MODIFIED' : 'ADDED';
    const stored: V1Lease = { ...structuredClone(lease), metadata: { ...lease.metadata, name, resourceVersion: String(++this.version) } };
    this.leases.set(name, stored);
    this.stored(type, stored);
    return structuredClone(stored);
  }

  private stored(type: 'ADDED' | 'MODIFIED' | 'DELETED', lease: V1Lease): void {
    const copy = structuredClone(lease);
    this.writes.push({
      at: this.scheduler.now(),
      name: lease.metadata?.name ?? '',
      holder: lease.spec?.holderIdentity ?? '',
      lease: copy,
      ...(type === 'DELETED' ? { deleted: true } : {}),
    });
    for (const w of this.watchers) {
      if (w.matches(copy))
        this.scheduler.schedule(() => w.link() === 'up' && !w.zombie && w.onEvent(type, structuredClone(copy)), this.latencyMs);
    }
  }

  private copy(name: string): V1Lease | undefined {
    const lease = this.leases.get(name);
    return lease && structuredClone(lease);
  }
}

/** Whether a Lease is in a list or watch's scope: `key=value` label selectors, as the Shard asks, and the elector's `metadata.name=` field selector. */
function selectedBy(scope: ListWatchScope): (lease: V1Lease) => boolean {
  const terms = (scope.labelSelector ?? '')
    .split(',')
    .filter(Boolean)
    .map((term) => term.split('='));
  const name = /^metadata\.name=(.*)$/.exec(scope.fieldSelector ?? '')?.[1];
  return (lease) =>
    (name === undefined || lease.metadata?.name === name) && terms.every(([key, value]) => lease.metadata?.labels?.[key ?? ''] === value);
}

function apiError(code: number, reason: string, message = reason): KubeApiError {
  return new KubeApiError(code, { kind: 'Status', code, reason, message }, {}, { method: 'PUT', path: '/leases' });
}

/** A KubeConfig the electors never use (their leaseClient is the fake). */
export const unusedKubeConfig = new KubeConfig();

/**
 * Advances a TestScheduler by `ms`, one due frame at a time, letting promise continuations run
 * between frames so async code (the elector's loop) schedules its next timers in order.
 */
export async function advance(scheduler: TestScheduler, ms: number): Promise<void> {
  const until = scheduler.now() + ms;
  for (;;) {
    await new Promise((resolve) => setImmediate(resolve));
    const next = scheduler.actions[0];
    if (!next || next.delay > until) break;
    scheduler.maxFrames = next.delay;
    scheduler.flush();
  }
  scheduler.frame = until;
}
