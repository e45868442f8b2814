/**
 * A scripted list+watch client and a virtual clock for testing the reflector, informers and the
 * informer pool in virtual time: every list and watch is recorded with the (virtual) time it was
 * made, answers come from the test, and `clock.advance(ms)` runs the timers due in between in
 * order, letting the promise callbacks each one causes settle before the next.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { TestScheduler } from 'rxjs/testing';
import type { ResourceID } from '../../lib/core/index.js';
import { KubeApiError } from '../../lib/kube/index.js';
import type { ListAnswer, ListRequest, ListWatchClient, ListWatchScope, WatchRequest } from '../../lib/cache/index.js';

export interface VirtualClock {
  readonly scheduler: TestScheduler;
  now(): number;
  /** Runs every timer due within `ms`, in time order, settling promises after each. */
  advance(ms: number): Promise<void>;
  /** Lets pending promise callbacks run (no time passes). */
  settle(): Promise<void>;
}

export function virtualClock(): VirtualClock {
  const scheduler = new TestScheduler(() => undefined);
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  };
  const runUntil = (frame: number): void => {
    scheduler.maxFrames = frame;
    scheduler.flush();
  };
  return {
    scheduler,
    now: () => scheduler.now(),
    settle,
    advance: async (ms) => {
      const target = scheduler.frame + ms;
      await settle();
      for (;;) {
        const next = scheduler.actions[0];
        if (!next || next.delay > target) break;
        runUntil(next.delay);
        await settle();
      }
      // Time reaches the target even when nothing was due then.
      scheduler.schedule(() => undefined, target - scheduler.frame);
      runUntil(target);
      await settle();
    },
  };
}

export type ListScript = ListAnswer<KubernetesObject> | Error | 'hang';
export type WatchScript = 'open' | Error | 'hang';

export interface FakeWatch {
  readonly at: number;
  readonly request: WatchRequest;
  /** Whether the client side closed it (the reflector gave up on it) or it ended. */
  closed: boolean;
  closedAt: number | undefined;
  event(type: string, object: unknown): void;
  /** The server ends the stream (no error) or the connection breaks (an error). */
  end(error?: unknown): void;
}

/**
 * A ListWatchClient whose answers are scripted: `lists` and `watches` are queues consumed in
 * order (an empty queue answers an empty list at `defaultResourceVersion`, and opens the watch).
 */
export class FakeListWatch implements ListWatchClient<KubernetesObject> {
  readonly listCalls: { at: number; scope: ListWatchScope }[] = [];
  readonly watchCalls: FakeWatch[] = [];
  readonly lists: ListScript[] = [];
  readonly watches: WatchScript[] = [];
  defaultResourceVersion = '1';
  objects: KubernetesObject[] = [];
  /** Whether the reflector may ask this client for watch-lists (ES9). */
  watchList = false;

  /**
   * With a page size, a list whose caller takes its pages (`onPage`) hands them over one by one,
   * each but the first when the test calls `releasePage()`, and answers no items.
   */
  pageSize: number | undefined;
  private readonly heldPages: (() => void)[] = [];

  constructor(private readonly clock: VirtualClock) {}

  list(scope: ListWatchScope, request: ListRequest<KubernetesObject> = {}): Promise<ListAnswer<KubernetesObject>> {
    this.listCalls.push({ at: this.clock.now(), scope });
    const script = this.lists.shift() ?? {
      items: this.objects.filter((o) => inScope(o, scope)),
      resourceVersion: this.defaultResourceVersion,
    };
    if (script === 'hang') return new Promise(() => undefined);
    if (script instanceof Error) return Promise.reject(script);
    const { pageSize } = this;
    const { onPage } = request;
    if (pageSize === undefined || !onPage) return Promise.resolve(script);
    return (async () => {
      for (let at = 0; at === 0 || at < script.items.length; at += pageSize) {
        if (at > 0) await new Promise<void>((release) => this.heldPages.push(release));
        onPage(script.items.slice(at, at + pageSize));
      }
      return { items: [], resourceVersion: script.resourceVersion };
    })();
  }

  /** Hands over the next page of a paged list in flight. */
  releasePage(): void {
    this.heldPages.shift()?.();
  }

  watch(request: WatchRequest, onEvent: (type: string, object: unknown) => void, onClose: (error?: unknown) => void): Promise<() => void> {
    const clock = this.clock;
    const watch: FakeWatch = {
      at: clock.now(),
      request,
      closed: false,
      closedAt: undefined,
      event: (type, object) => {
        if (!watch.closed) onEvent(type, object);
      },
      end: (error) => {
        if (watch.closed) return;
        watch.closed = true;
        watch.closedAt = clock.now();
        onClose(error);
      },
    };
    this.watchCalls.push(watch);
    const script = this.watches.shift() ?? 'open';
    if (script === 'hang') return new Promise(() => undefined);
    if (script instanceof Error) return Promise.reject(script);
    return Promise.resolve(() => {
      watch.closed = true;
      watch.closedAt ??= clock.now();
    });
  }

  find(id: ResourceID): Promise<KubernetesObject | undefined> {
    return Promise.resolve(this.objects.find((o) => o.metadata?.name === id.name && o.metadata?.namespace === id.namespace));
  }

  /** The watch opened last (fails the test when none was). */
  get lastWatch(): FakeWatch {
    const watch = this.watchCalls.at(-1);
    if (!watch) throw new Error('no watch was opened');
    return watch;
  }
}

function inScope(object: KubernetesObject, scope: ListWatchScope): boolean {
  return scope.namespace === undefined || object.metadata?.namespace === scope.namespace;
}

/** An HTTP error answer as the real client reports it (e.g. 500, or 410 Gone). */
export function httpError(code: number, message = `answer ${code}`): KubeApiError {
  return new KubeApiError(
    code,
    { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, message, reason: code === 410 ? 'Expired' : 'InternalError' },
    {},
    { method: 'GET', path: '/api/v1/configmaps' },
  );
}

/** The ERROR event a server sends on a watch whose resourceVersion is too old. */
export const GONE_EVENT = {
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  code: 410,
  reason: 'Expired',
  message: 'too old resource version',
};

export function configMapAt(namespace: string, name: string, resourceVersion: string): KubernetesObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, resourceVersion, uid: `uid-${namespace}-${name}` } };
}
