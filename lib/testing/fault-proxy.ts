/**
 * The fault proxy of our tests and benchmarks (the explorer, the leader elector's spec, the soak):
 * an HTTP proxy on loopback, aware of watches, that a client's KubeConfig points at, between it
 * and an unchanged server. Each client incarnation gets its own URL prefix, so that a killed one
 * can be cut off (its connections reset, its later requests refused) while the next one talks to
 * the same cluster. It breaks the link (`link`: failing, hanging or cut, then `restore`), injects
 * answers and crashes at a write (`hooks`), and, with the committed history of the observed
 * resources, serves stale views and holds, drops or expires watch events.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Agent } from 'undici';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ApiServerModule } from './cluster/apiserver.js';
import type { Mirror } from './explore/mirror.js';
import { EVENTS_PATH } from './harness.js';

/**
 * How the link to the server behaves for every request of every incarnation: `fail` answers 503,
 * `hang` accepts and never answers, `cut` is a partition (nothing new is answered, and what the
 * server sends on open answers and watches is lost, until `restore` resets the connections).
 */
export type LinkState = 'pass' | 'fail' | 'hang' | 'cut';

/** The answer to inject instead of forwarding (a status), or forward and answer 504 (timeout). */
export type InjectedAnswer = { readonly status: 409 | 429 | 500 } | 'timeout';

export interface ProxyHooks {
  /** Before the operator's `n`-th write is forwarded. */
  beforeWrite(n: number, method: string, path: string): InjectedAnswer | undefined;
  /** After it committed (2xx), before the operator gets the answer: 'crash' kills the incarnation there. */
  afterWrite(n: number, method: string, path: string): Promise<'crash' | undefined>;
}

interface WatchConnection {
  readonly res: ServerResponse;
  readonly path: string;
  /** Which watch this is, across reconnects: the collection and its selectors (an informer's). */
  readonly key: string;
  readonly namespace: string | undefined;
  readonly selects: ((o: KubernetesObject) => boolean) | undefined;
  /** The newest revision the server has sent on this watch (forwarded, held or dropped). */
  lastRv: number;
  /** A watch-list still sending its initial state: the informer is listing, and no perturbation touches a list. */
  listing: boolean;
  readonly held: string[];
  upstreamEnded: boolean;
  abort(): void;
}

export interface Incarnation {
  readonly id: number;
  alive: boolean;
  /** While set, lists of observed resources show this revision and watch events are held. */
  staleRv: number | undefined;
  /** The stale view, or a coalesced watch that holds events, catches up once the operator has made this many writes on it, whatever their answers. */
  readonly catchUpAfterWrites: number;
  staleWrites: number;
  /** Writes the operator made while a watch of it held events, since that watch last delivered them. */
  heldWrites: number;
  readonly sockets: Set<Socket>;
  readonly watches: Set<WatchConnection>;
  /** Collections this incarnation has watched: one without an open watch is between a list and its watch. */
  readonly watched: Set<string>;
}

/** Between the held events of two watches: enough for the operator to read one socket before the next. */
const RELEASE_SPACING_MS = 10;
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** What the proxy reads of the committed history of the observed resources (the explorer's mirror). */
export type CommittedHistory = Pick<Mirror, 'match' | 'matchWrite' | 'expect' | 'pendingFor' | 'latestRv' | 'stateAt'>;

/** A collection the history tracks, as a request's path names it. */
type Collection = NonNullable<ReturnType<CommittedHistory['match']>>;

export interface FaultProxyOptions {
  /** The history that stale views are served from and watch deliveries counted against; without it, neither. */
  readonly history?: CommittedHistory;
  /** Where the writes go as they commit (the explorer's run log). */
  readonly log?: string[];
  readonly hooks?: ProxyHooks;
  /** Selectors of stale lists are read as the server reads them (with `history`). */
  readonly selectors?: SelectorGrammar;
}

const NO_HOOKS: ProxyHooks = { beforeWrite: () => undefined, afterWrite: () => Promise.resolve(undefined) };

export class FaultProxy {
  private server: Server | undefined;
  private readonly agent = new Agent({ connections: 64 });
  private readonly incarnations = new Map<number, Incarnation>();
  private nextId = 1;
  private base = '';
  /** How the current incarnation's watches deliver: as they come, held for later, or dropped. */
  watchMode: 'pass' | 'hold' | 'drop' = 'pass';
  /** When set, `watchMode` holds or drops only the watch with this key: one informer misses or merges what the others see. */
  watchOnly: string | undefined;
  /** The keys of the watches the operator opened in this run. */
  readonly watchKeys = new Set<string>();
  writes = 0;
  inFlight = 0;
  eventsDropped = 0;
  link: LinkState = 'pass';
  private readonly history: CommittedHistory | undefined;
  private readonly log: string[];
  private readonly hooks: ProxyHooks;
  private readonly selectors: SelectorGrammar | undefined;

  constructor(
    private readonly target: string,
    options: FaultProxyOptions = {},
  ) {
    this.history = options.history;
    this.log = options.log ?? [];
    this.hooks = options.hooks ?? NO_HOOKS;
    this.selectors = options.selectors;
  }

  async listen(): Promise<void> {
    // A request that fails before its own handling (a target that is no URL) fails alone, never the test process.
    this.server = createServer(
      (req, res) =>
        void this.handle(req, res).catch(() => {
          if (!res.headersSent) res.writeHead(400);
          res.end();
        }),
    );
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  incarnation(staleRv?: number, catchUpAfterWrites = Number.POSITIVE_INFINITY): { incarnation: Incarnation; url: string } {
    const incarnation: Incarnation = {
      id: this.nextId++,
      alive: true,
      staleRv,
      catchUpAfterWrites,
      staleWrites: 0,
      heldWrites: 0,
      sockets: new Set(),
      watches: new Set(),
      watched: new Set(),
    };
    this.incarnations.set(incarnation.id, incarnation);
    return { incarnation, url: `${this.base}/i${incarnation.id}` };
  }

  /** The process dies: connections reset mid-answer, nothing it sends later arrives. */
  kill(incarnation: Incarnation): void {
    incarnation.alive = false;
    for (const w of incarnation.watches) w.abort();
    for (const s of incarnation.sockets) s.destroy();
    incarnation.watches.clear();
  }

  /**
   * Delivers what the watches of `incarnation` hold, ending its stale view: each watch's events in
   * one write, the watches in the order of their first held revision, a moment apart, so that a
   * replay sees them arrive in the same order. A watch not released yet keeps holding what arrives
   * meanwhile, so that no event overtakes an older one of its watch.
   */
  async release(incarnation: Incarnation): Promise<void> {
    incarnation.staleRv = undefined;
    const firstRv = (w: WatchConnection): number => {
      try {
        return Number(
          (JSON.parse(w.held[0] ?? '{}') as { object?: { metadata?: { resourceVersion?: string } } }).object?.metadata?.resourceVersion ??
            0,
        );
      } catch {
        return 0;
      }
    };
    const watches = [...incarnation.watches].sort((a, b) => firstRv(a) - firstRv(b));
    for (const w of watches) {
      if (w.held.length > 0) {
        w.res.write(w.held.join(''));
        w.held.length = 0;
        await new Promise((resolve) => setTimeout(resolve, RELEASE_SPACING_MS));
      }
      if (w.upstreamEnded) w.res.end();
    }
  }

  /** Ends the watches of `incarnation` (only the one with key `only`, when given) with 410 Expired: the informers relist. */
  expire(incarnation: Incarnation, only?: string): void {
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'Expired',
      code: 410,
      message: 'too old resource version (injected: events were missed)',
    };
    for (const w of [...incarnation.watches]) {
      if (only !== undefined && w.key !== only) continue;
      w.held.length = 0;
      w.res.end(`${JSON.stringify({ type: 'ERROR', object: status })}\n`);
      w.abort();
      incarnation.watches.delete(w);
    }
  }

  /**
   * Watch events the server has committed that have not come through the watches of
   * `incarnation` yet, plus one per watched collection whose watch is not open (a relist): zero is
   * a fact the explorer settles on, not a quiet period. Collections outside `observe` are not counted.
   */
  pendingDeliveries(incarnation: Incarnation): number {
    let pending = 0;
    const open = new Set<string>();
    for (const w of incarnation.watches) {
      open.add(w.path);
      const found = this.history?.match(w.path);
      if (found && w.selects) pending += this.history?.pendingFor(found.resource, found.namespace, w.selects, w.lastRv) ?? 0;
    }
    for (const path of incarnation.watched) if (!open.has(path)) pending++;
    // A watch-list still streaming its initial state is an informer between its list and its watch.
    for (const w of incarnation.watches) if (w.listing) pending++;
    return pending;
  }

  /** Whether the link is cut now (read afresh after each wait: a cut comes at any moment). */
  get isCut(): boolean {
    return this.link === 'cut';
  }

  /** The link passes again; the connections that lived through a hang or a cut are reset, as after a partition, and their clients reconnect. */
  restore(): void {
    const broken = this.link === 'hang' || this.link === 'cut';
    this.link = 'pass';
    if (broken) for (const incarnation of this.incarnations.values()) for (const socket of incarnation.sockets) socket.resetAndDestroy();
  }

  async close(): Promise<void> {
    for (const i of this.incarnations.values()) this.kill(i);
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
    this.server?.closeAllConnections();
    await this.agent.close().catch(() => undefined);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const m = /^\/i(\d+)(\/.*)$/.exec(req.url ?? '');
    const incarnation = m ? this.incarnations.get(Number(m[1])) : undefined;
    if (!m || !incarnation || !incarnation.alive) {
      req.socket.destroy();
      return;
    }
    track(incarnation, req.socket);
    const url = new URL(m[2] ?? '/', 'http://proxy');
    const method = req.method ?? 'GET';
    // Accepted, never answered: the client waits for its own timeouts, as across a partition.
    if (this.link === 'hang' || this.link === 'cut') return;
    if (this.link === 'fail') return void send(res, 503, failure(503, method, url.pathname, 'the fault proxy'));
    const isWatch = method === 'GET' && url.searchParams.get('watch') === 'true';
    if (isWatch) return this.watch(incarnation, req, res, url);
    this.inFlight++;
    try {
      const body = await readBody(req);
      if (!incarnation.alive || this.isCut) return;
      if (body === 'too large') {
        res.setHeader('connection', 'close');
        const message = `the body of ${method} ${url.pathname} is over 3 MiB, the API server's limit`;
        return void send(
          res,
          413,
          JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'RequestEntityTooLarge', code: 413, message }),
        );
      }
      const stale = incarnation.staleRv !== undefined && method === 'GET' ? this.staleList(incarnation.staleRv, url) : undefined;
      if (stale) return void send(res, 200, stale);
      const isWrite = WRITE_METHODS.has(method) && !EVENTS_PATH.test(url.pathname);
      const n = isWrite ? ++this.writes : 0;
      const injected = isWrite ? this.hooks.beforeWrite(n, method, url.pathname) : undefined;
      if (injected && injected !== 'timeout') return void send(res, injected.status, failure(injected.status, method, url.pathname));
      const answer = await this.forward(method, url, req, body);
      // Across a cut the answer is lost: the client hears nothing until its connection is reset.
      if (!incarnation.alive || this.isCut) return;
      if (isWrite && answer.status >= 200 && answer.status < 300) {
        const resource = this.history?.matchWrite(url.pathname);
        if (resource) this.history?.expect(resource, method, parseJson(answer.text));
        this.log.push(`write #${n} ${method} ${url.pathname} → ${answer.status}`);
        if ((await this.hooks.afterWrite(n, method, url.pathname)) === 'crash') {
          this.kill(incarnation);
          return;
        }
      } else if (isWrite) this.log.push(`write #${n} ${method} ${url.pathname} → ${answer.status}`);
      if (!incarnation.alive) return;
      if (isWrite && incarnation.staleRv !== undefined && ++incarnation.staleWrites >= incarnation.catchUpAfterWrites) {
        // As a lagging watch cache does whatever the operator does; before the answer, so that a replay sees the same order.
        this.log.push(`the stale view catches up after ${incarnation.staleWrites} writes of the operator on it`);
        await this.release(incarnation);
        if (!incarnation.alive) return;
      } else if (
        isWrite &&
        this.watchMode === 'hold' &&
        [...incarnation.watches].some((w) => w.held.length > 0) &&
        ++incarnation.heldWrites >= incarnation.catchUpAfterWrites
      ) {
        // A coalesced watch lags behind, as a real one does, and catches up whatever the operator does:
        // held until the step settles, an operator that keeps writing on what it has not seen would never settle.
        this.log.push(
          `the coalesced watch events are delivered after ${incarnation.heldWrites} writes of the operator while they were held`,
        );
        incarnation.heldWrites = 0;
        await this.release(incarnation);
        if (!incarnation.alive) return;
      }
      if (injected === 'timeout') return void send(res, 504, failure(504, method, url.pathname));
      res.writeHead(answer.status, { 'content-type': answer.contentType });
      res.end(answer.text);
    } catch {
      if (!res.headersSent) req.socket.destroy();
    } finally {
      this.inFlight--;
    }
  }

  private staleList(rv: number, url: URL): string | undefined {
    const found = this.history?.match(url.pathname);
    if (!found) return undefined;
    const { labels, fields } = this.selection(url);
    if (!labels || !fields) return undefined;
    const items = this.staleItems(found, rv, (o) => labels(o.metadata?.labels ?? {}) && fields(o));
    return JSON.stringify({
      apiVersion: found.resource.apiVersion,
      kind: `${found.resource.kind}List`,
      metadata: { resourceVersion: String(rv) },
      items,
    });
  }

  /** A watch-list's initial events at revision `rv`: the stale list as ADDED events, then the bookmark that closes them. */
  private staleInitialEvents(found: Collection, rv: number, selects: ((o: KubernetesObject) => boolean) | undefined): string {
    const lines = this.staleItems(found, rv, selects ?? (() => true)).map((object) => `${JSON.stringify({ type: 'ADDED', object })}\n`);
    const end = {
      kind: found.resource.kind,
      apiVersion: found.resource.apiVersion,
      metadata: { resourceVersion: String(rv), annotations: { 'k8s.io/initial-events-end': 'true' } },
    };
    return `${lines.join('')}${JSON.stringify({ type: 'BOOKMARK', object: end })}\n`;
  }

  /** The objects of a collection at revision `rv` that a list with these selectors shows. */
  private staleItems(found: Collection, rv: number, selects: (o: KubernetesObject) => boolean): KubernetesObject[] {
    return (this.history?.stateAt(found.resource, rv) ?? []).filter(
      (o) => (found.namespace === undefined || o.metadata?.namespace === found.namespace) && selects(o),
    );
  }

  private async forward(
    method: string,
    url: URL,
    req: IncomingMessage,
    body: Buffer | undefined,
  ): Promise<{ status: number; contentType: string; text: string }> {
    const answer = await this.agent.request({
      origin: this.target,
      path: `${url.pathname}${url.search}`,
      method,
      headers: forwardedHeaders(req),
      body,
    });
    const text = await answer.body.text();
    const contentType = answer.headers['content-type'];
    return { status: answer.statusCode, contentType: typeof contentType === 'string' ? contentType : 'application/json', text };
  }

  /** The selectors of a list or watch query, read as the server reads them; undefined where it would refuse them (or without a grammar). */
  private selection(url: URL): {
    labels: ((labels: Record<string, string>) => boolean) | undefined;
    fields: ((o: KubernetesObject) => boolean) | undefined;
  } {
    if (!this.selectors) return { labels: undefined, fields: undefined };
    return {
      labels: labelSelectorPredicate(this.selectors, url.searchParams.get('labelSelector')),
      fields: fieldSelectorPredicate(this.selectors, url.searchParams.get('fieldSelector')),
    };
  }

  private async watch(incarnation: Incarnation, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const abort = new AbortController();
    const { labels, fields } = this.selection(url);
    const found = this.history?.match(url.pathname);
    const streamsList = url.searchParams.get('sendInitialEvents') === 'true';
    // A watch-list under a stale view is the stale list, streamed, then the watch from that revision.
    const staleList = streamsList && incarnation.staleRv !== undefined && found && labels && fields ? incarnation.staleRv : undefined;
    if (staleList !== undefined) {
      for (const name of ['sendInitialEvents', 'resourceVersionMatch']) url.searchParams.delete(name);
      url.searchParams.set('resourceVersion', String(staleList));
    }
    const from = Number(url.searchParams.get('resourceVersion') ?? 0);
    const key = watchKey(url);
    this.watchKeys.add(key);
    const connection: WatchConnection = {
      res,
      path: url.pathname,
      key,
      namespace: found?.namespace,
      selects: labels && fields ? (o) => labels(o.metadata?.labels ?? {}) && fields(o) : undefined,
      lastRv: from > 0 ? from : found ? (this.history?.latestRv(found.resource) ?? 0) : 0,
      listing: streamsList && staleList === undefined,
      held: [],
      upstreamEnded: false,
      abort: () => abort.abort(),
    };
    incarnation.watches.add(connection);
    incarnation.watched.add(url.pathname);
    res.on('close', () => {
      abort.abort();
      incarnation.watches.delete(connection);
    });
    try {
      const answer = await this.agent.request({
        origin: this.target,
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        headers: forwardedHeaders(req),
        signal: abort.signal,
      });
      res.writeHead(answer.statusCode, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
      res.flushHeaders();
      if (staleList !== undefined && found && answer.statusCode === 200)
        res.write(this.staleInitialEvents(found, staleList, connection.selects));
      let partial = '';
      for await (const chunk of answer.body) {
        partial += (chunk as Buffer).toString('utf8');
        let newline: number;
        while ((newline = partial.indexOf('\n')) >= 0) {
          const line = partial.slice(0, newline + 1);
          partial = partial.slice(newline + 1);
          if (!incarnation.alive || !incarnation.watches.has(connection)) return;
          // Across a cut what the server sends is lost; the watch is reset when the link is restored.
          if (this.isCut) continue;
          if (connection.listing) {
            // The initial state of a watch-list is the list: delivered as it comes, up to its closing bookmark.
            if (endsInitialEvents(line)) {
              connection.listing = false;
              // The state it streamed is the server's at the bookmark's revision: every change up to it has come through.
              connection.lastRv = Math.max(connection.lastRv, revisionOf(line));
            }
            res.write(line);
            continue;
          }
          connection.lastRv = Math.max(connection.lastRv, revisionOf(line));
          // Behind events this watch still holds, a newer one waits its turn: a watch delivers in revision order.
          const perturbed = this.watchOnly === undefined || this.watchOnly === connection.key;
          if (incarnation.staleRv !== undefined || (this.watchMode === 'hold' && perturbed) || connection.held.length > 0)
            connection.held.push(line);
          else if (this.watchMode === 'drop' && perturbed) this.eventsDropped++;
          else {
            res.write(line);
          }
        }
      }
      connection.upstreamEnded = true;
      if (connection.held.length === 0) res.end();
    } catch {
      if (!res.headersSent) req.socket.destroy();
      else res.end();
    }
  }
}

/** The bookmark that closes a watch-list's initial events. */
function endsInitialEvents(line: string): boolean {
  const event = parseJson(line) as { type?: string; object?: KubernetesObject } | undefined;
  return event?.type === 'BOOKMARK' && event.object?.metadata?.annotations?.['k8s.io/initial-events-end'] === 'true';
}

/** A watch's identity across reconnects: its collection and selectors, not its resourceVersion. */
function watchKey(url: URL): string {
  const selectors = ['labelSelector', 'fieldSelector'].flatMap((name) =>
    url.searchParams.get(name) ? [`${name}=${url.searchParams.get(name)}`] : [],
  );
  return selectors.length > 0 ? `${url.pathname}?${selectors.join('&')}` : url.pathname;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The resourceVersion a watch line carries (an event's object, a bookmark), or 0. */
function revisionOf(line: string): number {
  const event = parseJson(line) as { object?: KubernetesObject } | undefined;
  const rv = Number(event?.object?.metadata?.resourceVersion ?? 0);
  return Number.isFinite(rv) ? rv : 0;
}

/** A socket of `incarnation`, reset or destroyed with it, forgotten once closed. */
function track(incarnation: Incarnation, socket: Socket): void {
  if (incarnation.sockets.has(socket)) return;
  incarnation.sockets.add(socket);
  socket.once('close', () => incarnation.sockets.delete(socket));
}

function forwardedHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of ['accept', 'content-type', 'authorization', 'user-agent']) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
}

/** The API server's own limit on a request body (kube-apiserver's, and the embedded server's). */
const MAX_BODY_BYTES = 3 * 2 ** 20;

/** A request's body, or 'too large' once it passes MAX_BODY_BYTES (the rest is not read). */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined | 'too large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return 'too large';
    chunks.push(chunk as Buffer);
  }
  return chunks.length === 0 ? undefined : Buffer.concat(chunks);
}

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', ...(status === 429 ? { 'retry-after': '0' } : {}) });
  res.end(body);
}

const REASONS: Record<number, string> = {
  409: 'Conflict',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

function failure(code: number, method: string, path: string, by = 'the explorer'): string {
  const reason = REASONS[code] ?? 'InternalError';
  return JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    reason,
    code,
    message: `injected by ${by}: ${reason} (${code}) for ${method} ${path}`,
  });
}

/**
 * The server's selector grammar, from `@rxkube/apiserver` as the run loaded it: importing
 * `rxkube/testing/cluster` does not load the server.
 */
export type SelectorGrammar = Pick<
  ApiServerModule,
  'parseLabelSelector' | 'matchesLabelSelector' | 'parseFieldSelector' | 'matchesFieldSelector' | 'SelectorError'
>;

/**
 * A label selector of a list or watch query as a predicate, parsed by the server's own grammar;
 * undefined when the server would refuse it (the request is then forwarded, to be refused there).
 */
export function labelSelectorPredicate(
  grammar: SelectorGrammar,
  text: string | null,
): ((labels: Record<string, string>) => boolean) | undefined {
  if (!text) return () => true;
  const { parseLabelSelector, matchesLabelSelector, SelectorError } = grammar;
  try {
    const selector = parseLabelSelector(text);
    return (labels) => matchesLabelSelector(selector, labels);
  } catch (err) {
    if (err instanceof SelectorError) return undefined;
    throw err;
  }
}

/** A field selector on `metadata.name` and `metadata.namespace` (the only fields a stale view serves) as a predicate, or undefined. */
export function fieldSelectorPredicate(grammar: SelectorGrammar, text: string | null): ((o: KubernetesObject) => boolean) | undefined {
  if (!text) return () => true;
  const { parseFieldSelector, matchesFieldSelector, SelectorError } = grammar;
  try {
    const selector = parseFieldSelector(text, ['metadata.name', 'metadata.namespace']);
    return (o) =>
      matchesFieldSelector(selector, { 'metadata.name': o.metadata?.name ?? '', 'metadata.namespace': o.metadata?.namespace ?? '' });
  } catch (err) {
    if (err instanceof SelectorError) return undefined;
    throw err;
  }
}
