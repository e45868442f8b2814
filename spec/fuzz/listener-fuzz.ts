/**
 * A request fuzz for the toolkit's listeners (the webhook server, the health and metrics server):
 * seeded hostile cases over bare sockets — request lines no client sends, odd, huge and duplicate
 * headers, bodies that are huge, deep, truncated or of the wrong type, broken chunking, pipelined
 * requests, TLS handshakes that are garbage or abandoned, clients that never read — and after each
 * case the listener must still answer a good request correctly. No answer may be a 5xx.
 *
 * The seed comes from RXKUBE_FUZZ_SEED (CI pins one) or is drawn; it is printed, and a failing
 * run names it so that RXKUBE_FUZZ_SEED=<seed> sends the same cases again.
 */
import { randomInt } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { prng, type Rng } from '../../packages/apiserver/spec/fuzz-requests.js';
import { parseResponses, type ParsedResponse } from '../../packages/apiserver/spec/raw-http.js';

/** Where a listener is. */
export interface ListenerAddress {
  readonly host: string;
  readonly port: number;
  /** Set when the listener speaks TLS: HTTP cases go through a TLS connection, handshake cases over bare TCP. */
  readonly tls: boolean;
}

export interface FuzzedListener extends ListenerAddress {
  /** Paths it serves: the fuzz sends to them, and to mangled forms of them. */
  readonly paths: readonly string[];
  /** Good request bodies (POSTed to the paths) that cases mangle. */
  readonly bodies: readonly string[];
  /** Sends a good request and throws unless it is answered correctly. */
  check(): Promise<void>;
}

/** One hostile case: bytes written on one connection, then read to the close (or held open). */
interface FuzzCase {
  readonly category: string;
  /** The bytes, in writes; a write after the first waits a little (the server sees them apart). */
  readonly writes: readonly Buffer[];
  /** Over bare TCP even to a TLS listener (handshake attacks). */
  readonly raw?: boolean;
  /** Connections opened like this one and never read nor closed while the listener is checked. */
  readonly held?: number;
}

export interface FuzzReport {
  readonly seed: number;
  readonly cases: number;
  readonly byCategory: Readonly<Record<string, number>>;
  readonly byStatus: Readonly<Record<string, number>>;
  /** What went wrong, each with its case: empty when the listener held. */
  readonly problems: readonly string[];
}

/** The seed of this run: RXKUBE_FUZZ_SEED when set (CI), else drawn. */
export function fuzzSeed(): number {
  return process.env.RXKUBE_FUZZ_SEED !== undefined ? Number(process.env.RXKUBE_FUZZ_SEED) : randomInt(2 ** 31);
}

/** Runs `count` seeded cases (or for `seconds`, whichever ends first), checking the listener after each. */
export async function fuzzListener(
  listener: FuzzedListener,
  options: { seed: number; count: number; seconds: number },
): Promise<FuzzReport> {
  const r = prng(options.seed);
  const byCategory: Record<string, number> = {};
  const byStatus: Record<string, number> = {};
  const problems: string[] = [];
  const deadline = Date.now() + options.seconds * 1000;
  let cases = 0;
  for (; cases < options.count && Date.now() < deadline && problems.length < 10; cases++) {
    const c = fuzzCase(r, listener);
    byCategory[c.category] = (byCategory[c.category] ?? 0) + 1;
    const what = `case ${cases} (${c.category}): ${describe(c)}`;
    const held: Socket[] = [];
    try {
      if (c.held !== undefined) {
        for (let i = 0; i < c.held; i++) held.push(await holdOpen(listener, c));
      } else {
        for (const res of await exchange(listener, c)) {
          byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
          if (res.status >= 500) problems.push(`${what}\n        answered ${res.status}: ${res.body.toString('utf8').slice(0, 200)}`);
        }
      }
      await listener.check();
    } catch (err) {
      problems.push(`${what}\n        then a good request failed: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      for (const socket of held) socket.destroy();
    }
  }
  return { seed: options.seed, cases, byCategory, byStatus, problems };
}

function describe(c: FuzzCase): string {
  const text = JSON.stringify(Buffer.concat(c.writes).toString('latin1'));
  return `${c.raw ? 'raw ' : ''}${c.held ? `${c.held} held ` : ''}${text.length > 300 ? `${text.slice(0, 300)}... (${Buffer.concat(c.writes).length} bytes)` : text}`;
}

function open(listener: ListenerAddress, raw: boolean): Socket {
  return listener.tls && !raw
    ? tlsConnect({ host: listener.host, port: listener.port, rejectUnauthorized: false, servername: 'localhost' })
    : connect(listener.port, listener.host);
}

/**
 * Writes the bytes (over TLS to a TLS listener unless `raw`), half-closes, reads until the server
 * closes (8 s at most) and parses the answers: for requests no HTTP client sends.
 */
export function exchange(
  listener: ListenerAddress,
  c: { readonly writes: readonly Buffer[]; readonly raw?: boolean },
): Promise<ParsedResponse[]> {
  return new Promise((resolve) => {
    const socket = open(listener, c.raw === true);
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parseResponses(Buffer.concat(chunks)).responses);
    };
    const timer = setTimeout(finish, 8000);
    socket.once(listener.tls && !c.raw ? 'secureConnect' : 'connect', () => {
      void (async () => {
        for (const [i, bytes] of c.writes.entries()) {
          if (i > 0) await new Promise((r) => setTimeout(r, 20));
          if (socket.destroyed) return;
          socket.write(bytes);
        }
        socket.end();
      })();
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', finish);
    socket.on('error', finish);
  });
}

/** Opens a connection, writes the case and never reads: a client that leaves the server's answers unread. */
function holdOpen(listener: FuzzedListener, c: FuzzCase): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = open(listener, c.raw === true);
    socket.on('error', () => undefined);
    const ready = (): void => {
      for (const bytes of c.writes) socket.write(bytes);
      socket.pause();
      resolve(socket);
    };
    if (listener.tls && !c.raw) socket.once('secureConnect', ready);
    else socket.once('connect', ready);
    socket.once('close', () => resolve(socket));
  });
}

const REQUEST_LINES = [
  'GET //[ HTTP/1.1',
  'GET http://[ HTTP/1.1',
  'POST http://[::1 HTTP/1.1',
  'GET //a:b@[x]/ HTTP/1.1',
  'GET http://%zz/ HTTP/1.1',
  'GET http:// HTTP/1.1',
  'GET * HTTP/1.1',
  'OPTIONS * HTTP/1.1',
  'CONNECT localhost:443 HTTP/1.1',
  'GET HTTP/1.1',
  'GET / HTTP/9.9',
  'GET / HTTP/2.0',
  'GET /',
  'GET  / HTTP/1.1',
  'get / HTTP/1.1',
  'BREW / HTTP/1.1',
  'GET /\u0000 HTTP/1.1',
  'GET /\u00ff\u00fe HTTP/1.1',
  'GET %2F%2E%2E HTTP/1.1',
  '\u0016\u0003\u0001 / HTTP/1.1',
  ' ',
  '',
];

function mangledPath(r: Rng, path: string): string {
  switch (r.int(9)) {
    case 0:
      return `/${path}`;
    case 1:
      return `${path}/..`;
    case 2:
      return `${path}?${'a=b&'.repeat(r.pick([1, 2000]))}`;
    case 3:
      return `${path}%`;
    case 4:
      return `https://localhost${path}`;
    case 5:
      return `${path}/${'a'.repeat(r.pick([300, 9000, 70_000]))}`;
    case 6:
      return path.toUpperCase();
    case 7:
      return `${path}#x`;
    default:
      return path;
  }
}

function nested(depth: number): string {
  return `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"deep","operation":"CREATE","object":{"metadata":{"name":"deep"},"spec":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}}}`;
}

function mangledBody(r: Rng, body: string): string {
  switch (r.int(10)) {
    case 0:
      return body.slice(0, r.int(body.length));
    case 1:
      return nested(r.pick([100, 2_000, 10_001, 50_000]));
    case 2:
      return '['.repeat(r.pick([10, 20_000, 200_000]));
    case 3:
      return r.pick([
        'null',
        '[]',
        '"x"',
        '1',
        'true',
        '{}',
        '',
        ' ',
        '{"a":1,"a":2}',
        '\ufeff{}',
        '{"request":null}',
        '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"x","operation":"CREATE","object":null}}',
      ]);
    case 4:
      return body.replace(/"uid":"[^"]*"/, `"uid":${r.pick(['null', '""', '1', '{}', `"${'u'.repeat(5000)}"`])}`);
    case 5:
      return body.replace(/"object":/, `"object":${r.pick(['[]', '"x"', '7', 'null'])},"x":`);
    case 6:
      return body + body;
    case 7:
      return body.replace(/"operation":"[A-Z]+"/, `"operation":"${r.pick(['PATCH', '', 'create'])}"`);
    case 8:
      return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"c","desiredAPIVersion":${r.pick(['"x/v9"', 'null', '1'])},"objects":${r.pick(['[null]', '[1]', '[{}]', '{}', '[{"apiVersion":"example.com/v1","kind":"Greeting","metadata":{"name":"g"},"spec":{"message":7}}]'])}}}`;
    default:
      return body;
  }
}

function head(line: string, headers: readonly string[]): string {
  return `${line}\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`;
}

function request(r: Rng, listener: FuzzedListener, options: { path?: string; body?: string; extra?: string[] } = {}): Buffer {
  const path = options.path ?? r.pick(listener.paths);
  const body = Buffer.from(options.body ?? r.pick(listener.bodies));
  return Buffer.concat([
    Buffer.from(
      head(`POST ${path} HTTP/1.1`, [
        'Host: localhost',
        'Content-Type: application/json',
        `Content-Length: ${body.length}`,
        ...(options.extra ?? []),
      ]),
    ),
    body,
  ]);
}

/** One case, drawn. */
function fuzzCase(r: Rng, listener: FuzzedListener): FuzzCase {
  const path = r.pick(listener.paths);
  const body = r.pick(listener.bodies);
  switch (r.int(9)) {
    case 0:
      return {
        category: 'request line',
        writes: [Buffer.from(head(r.pick(REQUEST_LINES), ['Host: localhost', 'Connection: close']), 'latin1')],
      };
    case 1:
      return {
        category: 'request target',
        writes: [
          Buffer.from(
            head(`${r.pick(['GET', 'POST', 'HEAD', 'DELETE'])} ${mangledPath(r, path)} HTTP/1.1`, [
              'Host: localhost',
              'Content-Length: 0',
              'Connection: close',
            ]),
            'latin1',
          ),
        ],
      };
    case 2: {
      const extra = r.pick([
        [`X-Big: ${'x'.repeat(r.pick([8_000, 20_000, 100_000]))}`],
        Array.from({ length: r.pick([100, 3000]) }, (_, i) => `X-H${i}: v`),
        ['Content-Length: 5', 'Content-Length: 7'],
        ['Host: other'],
        ['Transfer-Encoding: chunked'],
        ['Transfer-Encoding: gzip, chunked'],
        ['X-Fold: a', ' folded'],
        ['Bad Header: x'],
        ['X-Ctl: a\u0000b'],
        ['Expect: 100-continue'],
        ['Expect: bogus'],
        ['Content-Type: text/plain'],
        ['Content-Type: application/json; charset=latin1'],
        [':: x'],
        ['Connection: keep-alive, Upgrade', 'Upgrade: websocket'],
      ]);
      return {
        category: 'headers',
        writes: [
          Buffer.from(
            request(r, listener, { path, body, extra })
              .toString('latin1')
              .replace('Host: localhost\r\n', r.chance(0.1) ? '' : 'Host: localhost\r\n'),
            'latin1',
          ),
        ],
      };
    }
    case 3:
      return { category: 'body', writes: [request(r, listener, { path, body: mangledBody(r, body) })] };
    case 4: {
      const big = Buffer.alloc(r.pick([7 * 1024 * 1024, 200 * 1024]), 'a');
      const declared = r.pick([big.length, 10, undefined]);
      return {
        category: 'huge body',
        writes: [
          Buffer.from(
            head(`POST ${path} HTTP/1.1`, [
              'Host: localhost',
              ...(declared === undefined ? ['Transfer-Encoding: chunked'] : [`Content-Length: ${declared}`]),
            ]),
          ),
          declared === undefined ? Buffer.concat([Buffer.from(`${big.length.toString(16)}\r\n`), big, Buffer.from('\r\n0\r\n\r\n')]) : big,
        ],
      };
    }
    case 5: {
      const bytes = Buffer.from(body);
      const chunked = r.pick([
        `${bytes.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
        `${bytes.length.toString(16)};ext=1\r\n${body}\r\n0\r\n\r\n`,
        `zz\r\n${body}\r\n0\r\n\r\n`,
        `ffffffffffffffff\r\n${body}`,
        `${bytes.length.toString(16)}\r\n${body}`,
        `${(bytes.length + 10).toString(16)}\r\n${body}\r\n0\r\n\r\n`,
        `1\r\n{\r\n${'1\r\n \r\n'.repeat(r.pick([10, 5000]))}0\r\n\r\n`,
        `0\r\nX-Trailer: ${'t'.repeat(20_000)}\r\n\r\n`,
        `-1\r\n\r\n`,
      ]);
      return {
        category: 'chunked',
        writes: [
          Buffer.from(head(`POST ${path} HTTP/1.1`, ['Host: localhost', 'Content-Type: application/json', 'Transfer-Encoding: chunked'])),
          Buffer.from(chunked),
        ],
      };
    }
    case 6: {
      const n = 2 + r.int(6);
      const requests = Array.from({ length: n }, () =>
        r.chance(0.8) ? request(r, listener) : Buffer.from(head(`GET ${r.pick(listener.paths)} HTTP/1.1`, ['Host: localhost'])),
      );
      return { category: 'pipelined', writes: [Buffer.concat(requests)] };
    }
    case 7: {
      const hello = Buffer.concat([
        Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]),
        Buffer.from(Array.from({ length: r.int(64) }, () => r.int(256))),
      ]);
      const garbage = Buffer.from(Array.from({ length: 1 + r.int(2000) }, () => r.int(256)));
      const plain = Buffer.from(head(`GET ${path} HTTP/1.1`, ['Host: localhost', 'Connection: close']));
      const pick = r.pick(['hello', 'garbage', 'plain', 'hello-held'] as const);
      if (pick === 'hello-held') return { category: 'handshake', raw: true, held: 1 + r.int(20), writes: [hello] };
      return { category: 'handshake', raw: true, writes: [pick === 'hello' ? hello : pick === 'garbage' ? garbage : plain] };
    }
    default: {
      // Clients that ask and never read: many answers queued towards a socket nobody drains.
      const asks = Buffer.concat(Array.from({ length: r.pick([50, 400]) }, () => request(r, listener, { path, body })));
      const dribble = Buffer.from(`POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n`);
      return { category: 'slow client', held: 1 + r.int(16), writes: [r.chance(0.7) ? asks : dribble] };
    }
  }
}
