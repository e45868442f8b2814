/**
 * The watch hub: open watches per resource, fed synchronously from the store's event stream, so
 * every watcher sees events in resourceVersion order with nothing missed between its initial
 * state and its first change. Serialized event lines are shared between watchers.
 */
import { expired } from '../base/errors.js';
import type { ObjectFilter } from './filter.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { namespaceOf } from '../base/meta.js';
import { present } from './present.js';
import type { ResourceType } from './registry.js';
import type { EventType, Store, StoreEvent } from '../storage/store.js';

/** Where a watch writes its lines (an HTTP response, in the server). */
export interface WatchSink {
  write(chunk: string): void;
  end(): void;
  /** Closes the connection without ending the stream properly (a network failure). */
  destroy(): void;
  /**
   * Ends the stream now, dropping what still waits to be sent (a watcher too slow to keep up):
   * the client sees the watch end and watches again.
   */
  cut(): void;
  /** Bytes written to the sink and not yet taken by the client, events awaiting conversion included. */
  readonly bufferedBytes: number;
  /** Events written to the sink and not yet handed to the connection (awaiting conversion). */
  readonly queuedEvents: number;
}

export interface WatchSpec {
  type: ResourceType;
  apiVersion: string;
  /** The schema custom resources are presented with in `apiVersion` (see present.ts). */
  schema?: JsonValue;
  /** Only this namespace; undefined for cluster-scoped types and all-namespace watches. */
  namespace?: string;
  filter: ObjectFilter;
  bookmarks: boolean;
  /** The request path, for fault patterns. */
  path: string;
  /** Turns an object into what this client asked to see (e.g. a Table row); identity by default. */
  render?: (obj: JsonObject, type: EventType | 'BOOKMARK') => JsonObject;
  /** Close the stream after this many milliseconds. */
  timeoutMs?: number;
}

export type WatchStart = { kind: 'initial'; initialEventsEnd: boolean } | { kind: 'from'; rv: number };

export interface WatchHubOptions {
  /** How often watches that allow bookmarks get one. The real server sends about one a minute. */
  bookmarkIntervalMs?: number;
  /** A watcher whose unsent output grows past this is closed (a too-slow client). */
  maxBufferedBytes?: number;
  /**
   * A watcher with more live events than this waiting to be sent (e.g. for a conversion webhook)
   * is closed, as the real server's cacher closes a watcher whose channel stays full.
   */
  maxQueuedEvents?: number;
}

export class Watch {
  private stalled = false;
  private readonly stallBuffer: string[] = [];
  /** Lines waiting for this turn's flush: one socket write per watcher per event-loop turn. */
  private pending: string[] = [];
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  /** While silenced: nothing is sent and the timeout waits; `timeoutDue` closes it afterwards. */
  private silenceTimer: NodeJS.Timeout | undefined;
  private timeoutDue = false;
  /** Events delivered (for tests and benchmarks). */
  delivered = 0;
  /** Events of the initial state: they may all wait at once, beyond `maxQueuedEvents`. */
  private initialEvents = 0;

  constructor(
    readonly id: number,
    readonly spec: WatchSpec,
    private readonly sink: WatchSink,
    private readonly hub: WatchHub,
  ) {
    if (spec.timeoutMs !== undefined) {
      this.timer = setTimeout(() => {
        if (this.silenceTimer) this.timeoutDue = true;
        else this.close();
      }, spec.timeoutMs);
      this.timer.unref();
    }
  }

  get isClosed(): boolean {
    return this.closed;
  }

  get isStalled(): boolean {
    return this.stalled;
  }

  /** The watch event (if any) this store event means for this watcher, as a JSON line. */
  lineFor(e: StoreEvent): string | undefined {
    const { spec } = this;
    const inScope = (o: JsonObject | undefined): boolean =>
      o !== undefined && (spec.namespace === undefined || namespaceOf(o) === spec.namespace) && spec.filter.matches(o);
    const now = e.type !== 'DELETED' && inScope(e.object);
    const before = e.type !== 'ADDED' && inScope(e.prev);
    if (!now && !before) return undefined;
    if (now) return this.line(e, before ? 'MODIFIED' : 'ADDED', e.object);
    // An object that leaves the selection is DELETED for this watcher, with its previous content at the event's resourceVersion.
    if (e.type === 'DELETED') return this.line(e, 'DELETED', e.object);
    const prev = e.prev as JsonObject;
    return this.line(e, 'DELETED', { ...prev, metadata: { ...(prev.metadata as JsonObject), resourceVersion: String(e.rv) } });
  }

  private line(e: StoreEvent, type: EventType, obj: JsonObject): string {
    const { spec } = this;
    const key = `${type}|${spec.apiVersion}|${spec.render ? this.id : ''}|${obj === e.object ? 'o' : 'p'}`;
    const cache = (e.lines ??= new Map<string, string>());
    let line = cache.get(key);
    if (line === undefined) {
      line = eventLine(type, this.render(obj, type));
      cache.set(key, line);
    }
    return line;
  }

  private render(obj: JsonObject, type: EventType | 'BOOKMARK'): JsonObject {
    const presented = present(obj, this.spec.apiVersion, this.spec.schema);
    return this.spec.render ? this.spec.render(presented, type) : presented;
  }

  /** Sends an event for a current object (initial state). */
  sendObject(type: EventType, obj: JsonObject): void {
    this.initialEvents++;
    this.send(eventLine(type, this.render(obj, type)));
  }

  deliver(e: StoreEvent): void {
    const line = this.lineFor(e);
    if (line !== undefined) this.send(line);
  }

  bookmark(rv: number, annotations?: Record<string, string>): void {
    if (this.stalled || this.closed) return;
    const metadata: JsonObject = { resourceVersion: String(rv) };
    if (annotations) metadata.annotations = annotations;
    const obj: JsonObject = { kind: this.spec.type.kind, apiVersion: this.spec.apiVersion, metadata };
    this.send(eventLine('BOOKMARK', this.spec.render ? this.spec.render(obj, 'BOOKMARK') : obj));
  }

  sendError(status: JsonObject): void {
    this.send(JSON.stringify({ type: 'ERROR', object: status }) + '\n');
  }

  private send(line: string): void {
    if (this.closed) return;
    if (this.stalled) {
      this.stallBuffer.push(line);
      return;
    }
    this.delivered++;
    this.pending.push(line);
    if (this.pending.length === 1) this.hub.scheduleFlush(this);
  }

  /** Writes what this turn produced in one chunk (events stay in order, sent without waiting for more). */
  flush(): void {
    if (this.pending.length === 0 || this.closed) return;
    const chunk = this.pending.length === 1 ? this.pending[0] : this.pending.join('');
    this.pending = [];
    this.sink.write(chunk);
    if (this.sink.bufferedBytes > this.hub.maxBufferedBytes || this.sink.queuedEvents > this.hub.maxQueuedEvents + this.initialEvents)
      this.cut();
  }

  /** Ends a watcher that cannot keep up, dropping what it has not sent (its client watches again). */
  private cut(): void {
    this.pending = [];
    this.finish('cut');
  }

  /** Stops sending (the connection stays open); events are held until `resume`. */
  stall(): void {
    this.stalled = true;
  }

  resume(): void {
    if (!this.stalled) return;
    this.stalled = false;
    for (const line of this.stallBuffer.splice(0)) this.send(line);
  }

  /**
   * Holds the watch silent for `forMs`: no events, no bookmarks, and no close at its timeout
   * (a hung server or a black-holed connection). Afterwards the held events are sent, and a
   * timeout that passed meanwhile closes the stream.
   */
  silence(forMs: number): void {
    if (this.closed) return;
    this.stall();
    if (this.silenceTimer) clearTimeout(this.silenceTimer);
    this.silenceTimer = setTimeout(() => this.unsilence(), forMs);
    this.silenceTimer.unref();
  }

  unsilence(): void {
    if (!this.silenceTimer) return;
    clearTimeout(this.silenceTimer);
    this.silenceTimer = undefined;
    this.resume();
    if (this.timeoutDue) this.close();
  }

  get isSilenced(): boolean {
    return this.silenceTimer !== undefined;
  }

  /** Ends the stream; `abrupt` resets the connection instead. */
  close(abrupt = false): void {
    this.finish(abrupt ? 'destroy' : 'end');
  }

  /** Ends the stream: after what is pending (`end`), dropping what waits (`cut`), or resetting the connection (`destroy`). */
  private finish(how: 'end' | 'cut' | 'destroy'): void {
    if (this.closed) return;
    const abrupt = how === 'destroy';
    this.closed = true;
    if (this.silenceTimer) clearTimeout(this.silenceTimer);
    this.silenceTimer = undefined;
    if (!abrupt && this.pending.length > 0) this.sink.write(this.pending.join(''));
    this.pending = [];
    if (this.timer) clearTimeout(this.timer);
    this.hub.forget(this);
    this.sink[how]();
  }
}

export function eventLine(type: string, obj: JsonObject): string {
  return `{"type":"${type}","object":${JSON.stringify(obj)}}\n`;
}

export class WatchHub {
  private readonly byResource = new Map<string, Set<Watch>>();
  private seq = 0;
  private bookmarkTimer: NodeJS.Timeout | undefined;
  private readonly toFlush = new Set<Watch>();
  private flushScheduled: NodeJS.Immediate | undefined;
  readonly bookmarkIntervalMs: number;
  readonly maxBufferedBytes: number;
  /** Live events a watcher may have waiting to be sent (see WatchHubOptions). */
  readonly maxQueuedEvents: number;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: Store,
    options: WatchHubOptions = {},
  ) {
    this.bookmarkIntervalMs = options.bookmarkIntervalMs ?? 60_000;
    this.maxBufferedBytes = options.maxBufferedBytes ?? 32 * 1024 * 1024;
    // The real cacher's watcher channel without an index holds 100 events.
    this.maxQueuedEvents = options.maxQueuedEvents ?? 100;
    this.unsubscribe = store.onEvent((e) => this.dispatch(e));
  }

  /** The store's current resourceVersion. */
  get resourceVersion(): number {
    return this.store.resourceVersion;
  }

  private dispatch(e: StoreEvent): void {
    const set = this.byResource.get(e.resource);
    if (!set) return;
    for (const w of set) w.deliver(e);
  }

  /**
   * Opens a watch: sends the initial state or the history since `start.rv`, then live events.
   * All of it happens synchronously, so no event can slip in between. Throws ApiError 410 when
   * the history needed was compacted away (callers send it as an ERROR event).
   */
  open(spec: WatchSpec, sink: WatchSink, start: WatchStart): Watch {
    let replay: StoreEvent[] | undefined;
    if (start.kind === 'from') {
      replay = this.store.eventsSince(spec.type.key, start.rv);
      if (!replay) {
        throw expired(`too old resource version: ${start.rv} (${this.store.compactedResourceVersion})`);
      }
    }
    const w = new Watch(++this.seq, spec, sink, this);
    if (start.kind === 'initial') {
      const items = this.store.list(spec.type.key, spec.namespace);
      for (const obj of items) if (spec.filter.matches(obj)) w.sendObject('ADDED', obj);
      if (start.initialEventsEnd) w.bookmark(this.store.resourceVersion, { 'k8s.io/initial-events-end': 'true' });
    } else if (replay) {
      for (const e of replay) w.deliver(e);
    }
    let set = this.byResource.get(spec.type.key);
    if (!set) this.byResource.set(spec.type.key, (set = new Set()));
    set.add(w);
    if (spec.bookmarks) this.ensureBookmarkTimer();
    return w;
  }

  scheduleFlush(w: Watch): void {
    this.toFlush.add(w);
    this.flushScheduled ??= setImmediate(() => {
      this.flushScheduled = undefined;
      const batch = [...this.toFlush];
      this.toFlush.clear();
      for (const x of batch) x.flush();
    });
  }

  forget(w: Watch): void {
    this.toFlush.delete(w);
    const set = this.byResource.get(w.spec.type.key);
    set?.delete(w);
    if (set?.size === 0) this.byResource.delete(w.spec.type.key);
  }

  watches(): Watch[] {
    const out: Watch[] = [];
    for (const set of this.byResource.values()) out.push(...set);
    return out;
  }

  closeResource(key: string): void {
    for (const w of [...(this.byResource.get(key) ?? [])]) w.close();
  }

  close(): void {
    this.unsubscribe();
    if (this.flushScheduled) clearImmediate(this.flushScheduled);
    if (this.bookmarkTimer) clearInterval(this.bookmarkTimer);
    this.bookmarkTimer = undefined;
    for (const w of this.watches()) w.close(true);
  }

  private ensureBookmarkTimer(): void {
    if (this.bookmarkTimer) return;
    this.bookmarkTimer = setInterval(() => {
      let any = false;
      for (const w of this.watches()) {
        if (!w.spec.bookmarks) continue;
        any = true;
        w.bookmark(this.store.resourceVersion);
      }
      if (!any && this.bookmarkTimer) {
        clearInterval(this.bookmarkTimer);
        this.bookmarkTimer = undefined;
      }
    }, this.bookmarkIntervalMs);
    this.bookmarkTimer.unref();
  }
}
