/** Inbound sources: triggers pushed from outside, and the caching variant that emits only on change. */
import { isDeepStrictEqual } from 'node:util';
import { Observable, Subject } from 'rxjs';
import { resourceKey, type ResourceEvent, type ResourceID } from '../core/index.js';
import { requireResourceID as checkId, trigger } from './polling.js';

/** ES5: events pushed from outside (webhook, queue): `push(id)` triggers the primary `id`. */
export class InboundSource<R = unknown> {
  private readonly triggers = new Subject<ResourceEvent<R>>();

  constructor(readonly name: string) {
    if (typeof name !== 'string' || name === '') throw new Error('inboundSource: name is required');
  }

  get events$(): Observable<ResourceEvent<R>> {
    return this.triggers.asObservable();
  }

  push(id: ResourceID, payload?: R): void {
    checkId(this.name, id);
    this.triggers.next(trigger(this.name, id, payload));
  }

  complete(): void {
    this.triggers.complete();
  }
}

/**
 * ES5: pushed resources with state: `put(id, resource)` caches it and triggers the primary only
 * when it changed; `remove(id)` forgets it and triggers; `get(id)` reads the cache.
 */
export class CachingInboundSource<R> {
  private readonly cache = new Map<string, R>();
  private readonly triggers = new Subject<ResourceEvent<R>>();

  constructor(
    readonly name: string,
    private readonly equals: (a: R, b: R) => boolean = isDeepStrictEqual,
  ) {
    if (typeof name !== 'string' || name === '') throw new Error('cachingInboundSource: name is required');
  }

  get events$(): Observable<ResourceEvent<R>> {
    return this.triggers.asObservable();
  }

  get(id: ResourceID): R | undefined {
    return this.cache.get(resourceKey(id));
  }

  put(id: ResourceID, resource: R): void {
    checkId(this.name, id);
    const key = resourceKey(id);
    const before = this.cache.get(key);
    if (before !== undefined && this.equals(before, resource)) return;
    this.cache.set(key, resource);
    this.triggers.next(trigger(this.name, id, resource, before));
  }

  remove(id: ResourceID): void {
    checkId(this.name, id);
    const key = resourceKey(id);
    const before = this.cache.get(key);
    if (before === undefined) return;
    this.cache.delete(key);
    this.triggers.next(trigger(this.name, id, undefined, before));
  }

  complete(): void {
    this.triggers.complete();
  }
}

export function inboundSource<R = unknown>(name: string): InboundSource<R> {
  return new InboundSource<R>(name);
}

export function cachingInboundSource<R>(name: string, equals?: (a: R, b: R) => boolean): CachingInboundSource<R> {
  return new CachingInboundSource<R>(name, equals);
}
