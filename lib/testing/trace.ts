/**
 * Record and replay of what an operator saw and did: the lists, reads and watch events it got
 * and the writes it made, in a versioned trace file. Recording works against any cluster (it
 * wraps the KubeConfig's connections, TLS and authentication untouched); replay runs the
 * operator against the trace alone, without a cluster, and checks that it writes what it wrote.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig, type KubernetesObject, type RequestContext } from '@kubernetes/client-node';
import { getGlobalDispatcher, type Dispatcher } from 'undici';
import { Operator } from '../controller/index.js';
import { shareConnections } from '../kube/index.js';
import { createLogger } from '../observe/index.js';

/** The `format` of a trace file; `version` changes when a field changes meaning. */
export const TRACE_FORMAT = 'rxkube.dev/trace';
export const TRACE_VERSION = 1;

/**
 * One thing the operator saw or did, `at` milliseconds after recording started (kept for
 * reading; replay does not wait for it). Paths are the request's, query included for lists.
 */
export type TraceEntry =
  | { readonly at: number; readonly type: 'list'; readonly path: string; readonly status: number; readonly body: unknown }
  | { readonly at: number; readonly type: 'read'; readonly path: string; readonly status: number; readonly body: unknown }
  | { readonly at: number; readonly type: 'event'; readonly path: string; readonly event: string; readonly object: KubernetesObject }
  | { readonly at: number; readonly type: 'write'; readonly method: string; readonly path: string; readonly request: unknown; readonly status: number; readonly body: unknown };

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

/** Events are written asynchronously and rate-limited: they are neither recorded nor checked. */
const EVENTS_PATH = /\/events(?:\/|\?|$)/;
const WATCH_QUERY = /[?&]watch=true(?:&|$)/;

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
    ctx.setDispatcher(base.compose((dispatch) => (opts, handler) => dispatch(opts, observe(opts, handler, entries, started))) as unknown as Dispatcher);
  };
  return { kubeConfig: copy, trace: () => ({ format: TRACE_FORMAT, version: TRACE_VERSION, recordedAt: new Date(started).toISOString(), entries: [...entries] }) };
}

/** Wraps an undici handler (either handler API) to see the answer as it passes. */
function observe(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler, entries: TraceEntry[], started: number): Dispatcher.DispatchHandler {
  const method = String(opts.method);
  const path = opts.path;
  const watch = method === 'GET' && WATCH_QUERY.test(path);
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
        if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') entries.push({ at: Date.now() - started, type: 'event', path: path.split('?')[0] ?? path, event: type, object });
      } catch {
        // not JSON: the informer reports it; nothing to replay
      }
    }
  };
  const onEnd = (): void => {
    if (watch || EVENTS_PATH.test(path)) return;
    const body = parse(text);
    const at = Date.now() - started;
    if (method === 'GET') entries.push({ at, type: body && typeof body === 'object' && 'items' in body ? 'list' : 'read', path, status, body });
    else entries.push({ at, type: 'write', method, path, request: parse(typeof opts.body === 'string' ? opts.body : Buffer.isBuffer(opts.body) ? opts.body.toString('utf8') : ''), status, body });
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
  if (data.version !== TRACE_VERSION) throw new TypeError(`parseTrace: version ${String(data.version)} is not supported (this rxkube reads version ${TRACE_VERSION})`);
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
  /** How long to wait for the operator's next recorded write (default 5000 ms). */
  readonly timeoutMs?: number;
  /** How long the operator must stay silent after the last entry (default 200 ms). */
  readonly quietMs?: number;
}

export interface TraceReplay {
  /** True when the operator made the recorded writes, and no others. */
  readonly passed: boolean;
  /** What differed: a missing, unexpected or different write. */
  readonly mismatches: readonly string[];
  /** The writes the operator made during the replay (method and path). */
  readonly writes: readonly string[];
}

/**
 * Runs a fresh operator (made by `setup`, as in your `main`) against the trace: lists and reads
 * answered as recorded, watch events delivered in the recorded order, each as soon as the writes
 * recorded before it have been made (no recorded delay is waited for), writes answered as they
 * were. The operator must make the recorded writes (method, path and body; writes between two
 * events in any order) and no others.
 */
export async function replayTrace(trace: TraceFile, setup: (operator: Operator) => unknown, options: TraceReplayOptions = {}): Promise<TraceReplay> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const quietMs = options.quietMs ?? 200;
  const entries = trace.entries;
  const mismatches: string[] = [];
  const writes: string[] = [];
  const watches = new Map<string, Set<ServerResponse>>();
  const listsServed = new Map<string, number>();
  let position = 0;
  let lastWriteAt = Date.now();
  let wake: () => void = () => undefined;
  /** Recorded writes due now: those before the next event to deliver, not yet made. */
  const due = (): number[] => {
    const found: number[] = [];
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i] as TraceEntry;
      if (i >= position && e.type === 'event') break;
      if (e.type === 'write' && !made.has(i)) found.push(i);
    }
    return found;
  };
  const made = new Set<number>();

  const server = createServer((req, res) => void answer(req, res));
  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const pathname = path.split('?')[0] ?? path;
    if (method === 'GET' && WATCH_QUERY.test(path)) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      let set = watches.get(pathname);
      if (!set) watches.set(pathname, (set = new Set()));
      set.add(res);
      res.on('close', () => set?.delete(res));
      wake();
      return;
    }
    if (EVENTS_PATH.test(path)) return send(res, method === 'POST' ? 201 : 200, chunks.length ? Buffer.concat(chunks).toString('utf8') : '{}');
    if (method === 'GET') {
      const recorded = entries.filter((e): e is Extract<TraceEntry, { type: 'list' | 'read' }> => (e.type === 'list' || e.type === 'read') && e.path === path);
      const n = listsServed.get(path) ?? 0;
      listsServed.set(path, n + 1);
      const entry = recorded[Math.min(n, recorded.length - 1)];
      if (!entry) return send(res, 404, JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: `the trace has no answer for GET ${path}` }));
      return send(res, entry.status, JSON.stringify(entry.body));
    }
    const request = parse(Buffer.concat(chunks).toString('utf8'));
    writes.push(`${method} ${path}`);
    lastWriteAt = Date.now();
    const candidates = due();
    const exact = candidates.find((i) => {
      const e = entries[i] as Extract<TraceEntry, { type: 'write' }>;
      return e.method === method && e.path === path;
    });
    if (exact === undefined) {
      mismatches.push(`unexpected write ${method} ${path}${candidates.length ? ` (expected one of: ${candidates.map((i) => describeWrite(entries[i] as TraceEntry)).join(', ')})` : ''}`);
      return send(res, 500, JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'InternalError', code: 500, message: `the trace has no write ${method} ${path} here` }));
    }
    const e = entries[exact] as Extract<TraceEntry, { type: 'write' }>;
    if (JSON.stringify(normalize(e.request)) !== JSON.stringify(normalize(request))) mismatches.push(`write ${method} ${path} sent another body than recorded:\n  recorded ${JSON.stringify(e.request)}\n  replayed ${JSON.stringify(request)}`);
    made.add(exact);
    send(res, e.status, JSON.stringify(e.body));
    wake();
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'trace', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'trace' }],
    contexts: [{ name: 'trace', cluster: 'trace', user: 'trace', namespace: 'default' }],
    currentContext: 'trace',
  });
  const operator = new Operator({ kubeConfig, logger: createLogger({ level: 'silent' }), stopTimeoutMs: 200 });
  try {
    await setup(operator);
    const started = operator.start();
    const waitFor = async (what: () => boolean, description: () => string): Promise<boolean> => {
      const deadline = Date.now() + timeoutMs;
      while (!what()) {
        if (Date.now() > deadline) {
          mismatches.push(description());
          return false;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 10);
        });
      }
      return true;
    };
    for (;;) {
      while (position < entries.length && (entries[position] as TraceEntry).type !== 'event') position++;
      const e = entries[position];
      if (e?.type !== 'event') break;
      const ok = await waitFor(
        () => due().length === 0 && (watches.get(e.path)?.size ?? 0) > 0,
        () => (due().length > 0 ? `missing write${due().length > 1 ? 's' : ''} before ${e.event} ${e.object.kind ?? ''} ${e.object.metadata?.name ?? ''}: ${due().map((i) => describeWrite(entries[i] as TraceEntry)).join(', ')}` : `the operator never watched ${e.path}`),
      );
      if (!ok) break;
      for (const res of watches.get(e.path) ?? []) res.write(`${JSON.stringify({ type: e.event, object: e.object })}\n`);
      position++;
    }
    if (mismatches.length === 0) {
      await started;
      // The writes recorded after the last event, then silence.
      await waitFor(() => due().length === 0, () => `missing writes at the end: ${due().map((i) => describeWrite(entries[i] as TraceEntry)).join(', ')}`);
      lastWriteAt = Date.now();
      await waitFor(() => Date.now() - lastWriteAt >= quietMs, () => 'the operator kept writing');
    }
  } finally {
    for (const set of watches.values()) for (const res of set) res.end();
    await operator.stop().catch(() => undefined);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return { passed: mismatches.length === 0, mismatches, writes };
}

function describeWrite(e: TraceEntry): string {
  return e.type === 'write' ? `${e.method} ${e.path}` : e.type;
}

/** Times the operator stamps anew on every run are not compared. */
function normalize(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value ?? null, (key, v: unknown) => (key === 'lastTransitionTime' || key === 'eventTime' || key === 'renewTime' ? undefined : v))) as unknown;
}

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(body);
}
