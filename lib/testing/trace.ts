/**
 * Record and replay of what an operator saw and did: the lists, reads and watch events it got
 * and the writes it made, in a versioned trace file. Recording works against any cluster (it
 * wraps the KubeConfig's connections, TLS and authentication untouched); replay runs the
 * operator against the trace alone, without a cluster and in virtual time, and checks that it
 * writes what it wrote.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig, type KubernetesObject, type RequestContext } from '@kubernetes/client-node';
import { getGlobalDispatcher, type Dispatcher } from 'undici';
import type { Operator } from '../controller/index.js';
import { shareConnections } from '../kube/index.js';
import { EVENTS_PATH, harnessOperator } from './harness.js';
import { testScheduler } from './marbles.js';
import { runsOwed } from './idle.js';

/** The `format` of a trace file; `version` changes when a field changes meaning. */
export const TRACE_FORMAT = 'rxkube.dev/trace';
export const TRACE_VERSION = 1;

/**
 * One thing the operator saw or did, `at` milliseconds after recording started (replay delivers a
 * watch event at its `at` in virtual time, never waiting for it in real time). Paths are the request's, query included for lists.
 */
export type TraceEntry =
  | { readonly at: number; readonly type: 'list'; readonly path: string; readonly status: number; readonly body: unknown }
  | { readonly at: number; readonly type: 'read'; readonly path: string; readonly status: number; readonly body: unknown }
  | { readonly at: number; readonly type: 'event'; readonly path: string; readonly event: string; readonly object: KubernetesObject }
  | {
      readonly at: number;
      readonly type: 'write';
      readonly method: string;
      readonly path: string;
      readonly request: unknown;
      readonly status: number;
      readonly body: unknown;
    };

export interface TraceFile {
  readonly format: typeof TRACE_FORMAT;
  readonly version: typeof TRACE_VERSION;
  readonly recordedAt: string;
  readonly entries: readonly TraceEntry[];
}

export interface TraceRecorder {
  /** Give this to the operator (`new Operator({ kubeConfig })`): what it sends and gets is recorded. */
  readonly kubeConfig: KubeConfig;
  /** The trace so far. */
  trace(): TraceFile;
}

/** The self reviews of the operator's RBAC check at start are questions, not writes: not recorded, and a replay makes none (`checkRbac: false`). */
const SELF_REVIEWS_PATH = /\/apis\/authorization\.k8s\.io\/v1\/selfsubject(?:access|rules)reviews(?:\?|$)/;
const WATCH_QUERY = /[?&]watch=true(?:&|$)/;
/** A watch-list: its initial events are the list it streams, recorded and replayed as a list of that path. */
const WATCH_LIST_QUERY = /[?&]sendInitialEvents=true(?:&|$)/;
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/** A copy of `kubeConfig` whose every request and watch is recorded. */
export function recordTrace(kubeConfig: KubeConfig): TraceRecorder {
  const copy = new KubeConfig();
  copy.loadFromString(kubeConfig.exportConfig());
  shareConnections(copy);
  const entries: TraceEntry[] = [];
  const started = Date.now();
  const authenticate = copy.applySecurityAuthentication.bind(copy);
  copy.applySecurityAuthentication = async (ctx: RequestContext) => {
    await authenticate(ctx);
    const base = ctx.getDispatcher() ?? getGlobalDispatcher();
    ctx.setDispatcher(base.compose((dispatch) => (opts, handler) => dispatch(opts, observe(opts, handler, entries, started))));
  };
  return {
    kubeConfig: copy,
    trace: () => ({ format: TRACE_FORMAT, version: TRACE_VERSION, recordedAt: new Date(started).toISOString(), entries: [...entries] }),
  };
}

/** Wraps an undici handler (either handler API) to see the answer as it passes. */
function observe(
  opts: Dispatcher.DispatchOptions,
  handler: Dispatcher.DispatchHandler,
  entries: TraceEntry[],
  started: number,
): Dispatcher.DispatchHandler {
  const method = String(opts.method);
  const path = opts.path;
  const watch = method === 'GET' && WATCH_QUERY.test(path);
  // A watch-list's initial state, gathered until its closing bookmark.
  let initial: KubernetesObject[] | undefined = watch && WATCH_LIST_QUERY.test(path) ? [] : undefined;
  let status = 0;
  let text = '';
  const onStatus = (code: number): void => {
    status = code;
  };
  const onChunk = (chunk: Buffer): void => {
    text += chunk.toString('utf8');
    if (!watch) return;
    let newline: number;
    while ((newline = text.indexOf('\n')) >= 0) {
      const line = text.slice(0, newline);
      text = text.slice(newline + 1);
      try {
        const { type, object } = JSON.parse(line) as { type: string; object: KubernetesObject };
        if (initial && type === 'ADDED') {
          initial.push(object);
          continue;
        }
        if (initial && type === 'BOOKMARK' && object.metadata?.annotations?.[INITIAL_EVENTS_END] === 'true') {
          const body = { kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: object.metadata.resourceVersion }, items: initial };
          entries.push({ at: Date.now() - started, type: 'list', path, status, body });
          initial = undefined;
          continue;
        }
        if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED')
          entries.push({ at: Date.now() - started, type: 'event', path: path.split('?')[0] ?? path, event: type, object });
      } catch {
        // not JSON: the informer reports it; nothing to replay
      }
    }
  };
  const onEnd = (): void => {
    if (watch || EVENTS_PATH.test(path) || SELF_REVIEWS_PATH.test(path)) return;
    const body = parse(text);
    const at = Date.now() - started;
    if (method === 'GET')
      entries.push({ at, type: body && typeof body === 'object' && 'items' in body ? 'list' : 'read', path, status, body });
    else
      entries.push({
        at,
        type: 'write',
        method,
        path,
        request: parse(typeof opts.body === 'string' ? opts.body : Buffer.isBuffer(opts.body) ? opts.body.toString('utf8') : ''),
        status,
        body,
      });
  };
  const h = handler as Record<string, unknown>;
  return new Proxy(handler, {
    get(target, prop, receiver) {
      const original = Reflect.get(target, prop, receiver) as unknown;
      if (typeof original !== 'function') return original;
      const call = (...args: unknown[]): unknown => (original as (...a: unknown[]) => unknown).apply(h, args);
      switch (prop) {
        case 'onResponseStart':
          return (...args: unknown[]) => (onStatus(args[1] as number), call(...args));
        case 'onHeaders':
          return (...args: unknown[]) => (onStatus(args[0] as number), call(...args));
        case 'onResponseData':
          return (...args: unknown[]) => (onChunk(args[1] as Buffer), call(...args));
        case 'onData':
          return (...args: unknown[]) => (onChunk(args[0] as Buffer), call(...args));
        case 'onResponseEnd':
        case 'onComplete':
          return (...args: unknown[]) => (onEnd(), call(...args));
        default:
          return original;
      }
    },
  });
}

function parse(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** A trace file's text as a TraceFile; an error naming what is wrong otherwise. */
export function parseTrace(text: string): TraceFile {
  const data = parse(text) as Partial<TraceFile> | undefined;
  if (!data || typeof data !== 'object') throw new TypeError('parseTrace: not a JSON object');
  if (data.format !== TRACE_FORMAT) throw new TypeError(`parseTrace: format must be '${TRACE_FORMAT}', got ${JSON.stringify(data.format)}`);
  if (data.version !== TRACE_VERSION)
    throw new TypeError(`parseTrace: version ${String(data.version)} is not supported (this rxkube reads version ${TRACE_VERSION})`);
  if (!Array.isArray(data.entries)) throw new TypeError('parseTrace: entries must be an array');
  for (const [i, e] of data.entries.entries()) {
    const entry = e as Partial<TraceEntry> | undefined;
    if (!entry || !['list', 'read', 'event', 'write'].includes(String(entry.type)) || typeof entry.path !== 'string') {
      throw new TypeError(`parseTrace: entries[${i}] is not a list, read, event or write with a path`);
    }
  }
  return data as TraceFile;
}

export interface TraceReplayOptions {
  /** Real time to wait for the operator's next recorded write before it counts as missing (default 5000 ms). */
  readonly timeoutMs?: number;
  /** Virtual time the operator runs on after the last entry, its timers included (default 0). */
  readonly horizonMs?: number;
}

export interface TraceReplay {
  /** True when the operator made the recorded writes, and no others. */
  readonly passed: boolean;
  /** What differed: a missing, unexpected or different write. */
  readonly mismatches: readonly string[];
  /** The writes the operator made during the replay (method and path). */
  readonly writes: readonly string[];
  /** The virtual time the replay ended at, in ms from the start of the trace. */
  readonly virtualMs: number;
}

/** Polls in a row on which the operator was idle: the turns of the event loop between them let bytes already written be read. */
const IDLE_POLLS = 3;
/** Timers run in a row while waiting for recorded writes, at most. */
const MAX_TICKS = 1000;

/**
 * Runs a fresh operator (made by `setup`, as in your `main`) against the trace, in virtual time:
 * every controller's scheduling (retries, reschedules, rate limits) runs on an RxJS TestScheduler
 * whose clock moves only while the operator is idle (no request in flight, no run in progress or
 * waiting), to the next timer due or to the recorded time of the next watch event. Lists and
 * reads are answered as recorded, watch events delivered in the recorded order (each once the
 * writes recorded before it have been made), writes answered as they were. The operator must make
 * the recorded writes (method, path and body; writes between two events in any order) and no
 * others. A retry recorded a minute after its failure replays in milliseconds.
 */
export async function replayTrace(
  trace: TraceFile,
  setup: (operator: Operator) => unknown,
  options: TraceReplayOptions = {},
): Promise<TraceReplay> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const horizonMs = options.horizonMs ?? 0;
  const entries = trace.entries;
  const mismatches: string[] = [];
  const writes: string[] = [];
  const watches = new Map<string, Set<ServerResponse>>();
  const listsServed = new Map<string, number>();
  const clock = testScheduler();
  let position = 0;
  let inFlight = 0;
  let wake: () => void = () => undefined;
  /** Recorded writes due now: those before the next event to deliver, not yet made. */
  const due = (): number[] => {
    const found: number[] = [];
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i];
      if (i >= position && e.type === 'event') break;
      if (e.type === 'write' && !made.has(i)) found.push(i);
    }
    return found;
  };
  const made = new Set<number>();

  // A client that goes away mid-request fails that request alone, never the test process.
  const server = createServer(
    (req, res) =>
      void answer(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      }),
  );
  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const watch = method === 'GET' && WATCH_QUERY.test(path);
    if (!watch) inFlight++;
    try {
      await respond(req, res, method, path, watch);
    } finally {
      if (!watch) inFlight--;
      wake();
    }
  };
  /** The n-th answer recorded for a GET of `path` at its n-th request (the last one again after that). */
  const recordedAnswer = (path: string): Extract<TraceEntry, { type: 'list' | 'read' }> | undefined => {
    const recorded = entries.filter(
      (e): e is Extract<TraceEntry, { type: 'list' | 'read' }> => (e.type === 'list' || e.type === 'read') && e.path === path,
    );
    const n = listsServed.get(path) ?? 0;
    listsServed.set(path, n + 1);
    return recorded[Math.min(n, recorded.length - 1)];
  };
  const respond = async (req: IncomingMessage, res: ServerResponse, method: string, path: string, watch: boolean): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const pathname = path.split('?')[0] ?? path;
    if (watch) {
      let initialEvents = '';
      if (WATCH_LIST_QUERY.test(path)) {
        // The list it streamed when recorded; a trace recorded with paged lists has none: refused as a server
        // before watch-lists refuses it (422), so the operator lists, and gets the lists recorded.
        const list = recordedAnswer(path);
        if (list?.type !== 'list')
          return send(
            res,
            422,
            JSON.stringify({
              kind: 'Status',
              apiVersion: 'v1',
              status: 'Failure',
              reason: 'Invalid',
              code: 422,
              message: `the trace has no watch-list for ${path}`,
            }),
          );
        const { items = [], metadata } = list.body as { items?: KubernetesObject[]; metadata?: { resourceVersion?: string } };
        const end = { metadata: { resourceVersion: metadata?.resourceVersion ?? '', annotations: { [INITIAL_EVENTS_END]: 'true' } } };
        initialEvents = [...items.map((object) => ({ type: 'ADDED', object })), { type: 'BOOKMARK', object: end }]
          .map((e) => `${JSON.stringify(e)}\n`)
          .join('');
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      if (initialEvents) res.write(initialEvents);
      let set = watches.get(pathname);
      if (!set) watches.set(pathname, (set = new Set()));
      set.add(res);
      res.on('close', () => set?.delete(res));
      return;
    }
    if (EVENTS_PATH.test(path))
      return send(res, method === 'POST' ? 201 : 200, chunks.length ? Buffer.concat(chunks).toString('utf8') : '{}');
    if (method === 'GET') {
      const entry = recordedAnswer(path);
      if (!entry)
        return send(
          res,
          404,
          JSON.stringify({
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            reason: 'NotFound',
            code: 404,
            message: `the trace has no answer for GET ${path}`,
          }),
        );
      return send(res, entry.status, JSON.stringify(entry.body));
    }
    const request = parse(Buffer.concat(chunks).toString('utf8'));
    writes.push(`${method} ${path}`);
    const candidates = due();
    const exact = candidates.find((i) => {
      const e = entries[i] as Extract<TraceEntry, { type: 'write' }>;
      return e.method === method && e.path === path;
    });
    if (exact === undefined) {
      mismatches.push(
        `unexpected write ${method} ${path}${candidates.length ? ` (expected one of: ${candidates.map((i) => describeWrite(entries[i])).join(', ')})` : ''}`,
      );
      return send(
        res,
        500,
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'InternalError',
          code: 500,
          message: `the trace has no write ${method} ${path} here`,
        }),
      );
    }
    const e = entries[exact] as Extract<TraceEntry, { type: 'write' }>;
    if (JSON.stringify(normalize(e.request)) !== JSON.stringify(normalize(request)))
      mismatches.push(
        `write ${method} ${path} sent another body than recorded:\n  recorded ${JSON.stringify(e.request)}\n  replayed ${JSON.stringify(request)}`,
      );
    made.add(exact);
    send(res, e.status, JSON.stringify(e.body));
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'trace', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'trace' }],
    contexts: [{ name: 'trace', cluster: 'trace', user: 'trace', namespace: 'default' }],
    currentContext: 'trace',
  });
  // Every controller's scheduling runs on the virtual clock, unless the setup gives one of its own.
  const { operator, registry } = harnessOperator(kubeConfig, {
    stopTimeoutMs: 200,
    checkRbac: false,
    adjust: (config) => (config.scheduler === undefined ? { ...config, scheduler: clock } : config),
  });

  /** Waits (in real time) until the operator is idle: nothing in flight, no run in progress or waiting. */
  const idle = async (): Promise<boolean> => {
    const deadline = Date.now() + timeoutMs;
    for (let held = 0; held < IDLE_POLLS;) {
      held = inFlight === 0 && (await runsOwed(registry)) === 0 ? held + 1 : 0;
      if (Date.now() > deadline) return false;
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, held > 0 ? 1 : 5);
      });
    }
    return true;
  };
  /** Moves the virtual clock to the next timer due (at most to `until`) and runs the timers due then; false when none is. */
  const tick = (until: number): boolean => {
    const next = clock.actions[0]?.delay;
    if (next === undefined || next > until) return false;
    clock.maxFrames = next;
    clock.flush();
    clock.maxFrames = Number.POSITIVE_INFINITY;
    return true;
  };
  /** Runs the timers due up to `until`, each once the operator is idle, then sets the clock to `until`. */
  const advanceTo = async (until: number): Promise<void> => {
    for (let ticks = 0; (await idle()) && tick(until); ticks++) {
      if (ticks >= MAX_TICKS) return void mismatches.push(`the operator's timers fired ${MAX_TICKS} times before ${until} ms`);
    }
    if (clock.frame < until) clock.frame = until;
  };
  /**
   * Waits until `what` holds. With `timers`, an operator idle before then has its next timer run
   * (a retry, a reschedule): in virtual time, at once; idle with no timer left, it never will.
   */
  const fail = (mismatch: string): false => {
    mismatches.push(mismatch);
    return false;
  };
  const waitFor = async (what: () => boolean, description: () => string, timers: boolean): Promise<boolean> => {
    const deadline = Date.now() + timeoutMs;
    for (let idlePolls = 0, ticks = 0; !what();) {
      if (Date.now() > deadline) return fail(description());
      idlePolls = timers && inFlight === 0 && (await runsOwed(registry)) === 0 ? idlePolls + 1 : 0;
      if (idlePolls >= IDLE_POLLS) {
        idlePolls = 0;
        // A timer that re-arms itself forever (a periodic resync) must not hide a missing write.
        if (ticks++ >= MAX_TICKS || !tick(Number.POSITIVE_INFINITY)) return fail(description());
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, idlePolls > 0 ? 1 : 5);
      });
    }
    return true;
  };
  const missing = (when: string): string =>
    `missing write${due().length > 1 ? 's' : ''} ${when}: ${due()
      .map((i) => describeWrite(entries[i]))
      .join(', ')}`;

  try {
    await setup(operator);
    await operator.start();
    for (;;) {
      while (position < entries.length && entries[position].type !== 'event') position++;
      const e = entries[position];
      if (e?.type !== 'event') break;
      if (
        !(await waitFor(
          () => due().length === 0,
          () => missing(`before ${e.event} ${e.object.kind ?? ''} ${e.object.metadata?.name ?? ''}`),
          true,
        ))
      )
        break;
      if (
        !(await waitFor(
          () => (watches.get(e.path)?.size ?? 0) > 0,
          () => `the operator never watched ${e.path}`,
          false,
        ))
      )
        break;
      // The timers due before the event's recorded time fire first.
      for (let ticks = 0; tick(e.at) && ticks < MAX_TICKS; ticks++);
      if (clock.frame < e.at) clock.frame = e.at;
      for (const res of watches.get(e.path) ?? []) res.write(`${JSON.stringify({ type: e.event, object: e.object })}\n`);
      position++;
    }
    if (
      mismatches.length === 0 &&
      (await waitFor(
        () => due().length === 0,
        () => missing('at the end'),
        true,
      ))
    ) {
      // Then the operator's timers up to the horizon: nothing more may be written.
      await advanceTo(Math.max(clock.frame, (entries.at(-1)?.at ?? 0) + horizonMs));
    }
  } finally {
    for (const set of watches.values()) for (const res of set) res.end();
    await operator.stop().catch(() => undefined);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return { passed: mismatches.length === 0, mismatches, writes, virtualMs: clock.frame };
}

function describeWrite(e: TraceEntry): string {
  return e.type === 'write' ? `${e.method} ${e.path}` : e.type;
}

/** Times the operator stamps anew on every run are not compared. */
function normalize(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value ?? null, (key, v: unknown) =>
      key === 'lastTransitionTime' || key === 'eventTime' || key === 'renewTime' ? undefined : v,
    ),
  ) as unknown;
}

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(body);
}
