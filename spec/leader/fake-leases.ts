import { KubeConfig, type V1Lease } from '@kubernetes/client-node';
import type { TestScheduler } from 'rxjs/testing';
import { KubeApiError } from '../../lib/kube/index.js';
import type { LeaseClient } from '../../lib/leader/index.js';

/** How one instance's connection to the fake server behaves: 'dead' is a killed process or a cut network. */
export type Link = 'up' | 'dead' | 'failing';

/**
 * One Lease on a fake API server living in virtual time: every request takes `latencyMs`, writes
 * are conditional on resourceVersion (409 otherwise), and watchers get each stored version after
 * `latencyMs`. `writes` records every stored version with the virtual time it was stored.
 */
export class FakeLeaseServer {
  readonly writes: Array<{ at: number; holder: string; lease: V1Lease }> = [];
  requests = 0;
  private lease: V1Lease | undefined;
  private version = 0;
  private readonly watchers = new Set<{ link: () => Link; onLease: (lease: V1Lease) => void; zombie?: boolean }>();

  constructor(
    private readonly scheduler: TestScheduler,
    private readonly latencyMs = 5,
  ) {}

  /** A client for one instance; `link()` is asked on every request and event. */
  client(link: () => Link): LeaseClient {
    const call = <T>(signal: AbortSignal, work: () => T): Promise<T> =>
      new Promise<T>((resolve, reject) => {
        this.requests++;
        const onAbort = () => {
          timer.unsubscribe();
          reject(signal.reason);
        };
        const timer = this.scheduler.schedule(() => {
          const state = link();
          if (state === 'dead') return; // never answers; only the abort ends it
          signal.removeEventListener('abort', onAbort);
          if (state === 'failing') return reject(apiError(500, 'InternalError'));
          try {
            resolve(work());
          } catch (err) {
            reject(err);
          }
        }, this.latencyMs);
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      });
    return {
      read: (signal) => call(signal, () => this.copy()),
      create: (lease, signal) =>
        call(signal, () => {
          if (this.lease) throw apiError(409, 'AlreadyExists');
          return this.store(lease);
        }),
      replace: (lease, signal) =>
        call(signal, () => {
          if (lease.metadata?.resourceVersion !== this.lease?.metadata?.resourceVersion) throw apiError(409, 'Conflict');
          return this.store(lease);
        }),
      watch: async (onLease) => {
        const watcher = { link, onLease };
        this.watchers.add(watcher);
        const current = this.copy();
        if (current) this.scheduler.schedule(() => link() === 'up' && onLease(current), this.latencyMs);
        return () => this.watchers.delete(watcher);
      },
    };
  }

  /** The open watches stay open but never deliver again: dead connections no one noticed. */
  silenceWatches(): void {
    for (const w of this.watchers) w.zombie = true;
  }

  get holder(): string {
    return this.lease?.spec?.holderIdentity ?? '';
  }

  private store(lease: V1Lease): V1Lease {
    this.lease = { ...structuredClone(lease), metadata: { ...lease.metadata, resourceVersion: String(++this.version) } };
    const stored = this.copy() as V1Lease;
    this.writes.push({ at: this.scheduler.now(), holder: this.holder, lease: stored });
    for (const w of this.watchers) this.scheduler.schedule(() => w.link() === 'up' && !w.zombie && w.onLease(structuredClone(stored)), this.latencyMs);
    return structuredClone(stored);
  }

  private copy(): V1Lease | undefined {
    return this.lease && structuredClone(this.lease);
  }
}

function apiError(code: number, reason: string): KubeApiError {
  return new KubeApiError(code, { kind: 'Status', code, reason, message: reason }, {}, { method: 'PUT', path: '/leases' });
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
