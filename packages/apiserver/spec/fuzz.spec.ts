/**
 * Issue 13: a fuzz test over the request surface. Random and mutated requests (fuzz-requests.ts)
 * go over bare sockets to one server holding fixtures; every answer must be a well-formed HTTP
 * response (a Kubernetes Status for every error), no 5xx but the injected faults, and afterwards
 * the server answers, the fixtures are unchanged and the resourceVersion never went back.
 *
 * The seed is printed; RXKUBE_FUZZ_SEED=<seed> sends the same sequence of requests again (the
 * interleaving of the concurrent ones may differ). RXKUBE_FUZZ_COUNT and RXKUBE_FUZZ_SECONDS
 * bound the run (default 2,000 requests or 30 s, whichever comes first).
 */
import { expect } from 'chai';
import { randomInt } from 'node:crypto';
import { request } from 'node:http';
import * as k8s from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from '../src/index.js';
import { generate, prng, serialize, type FuzzRequest, type FuzzTarget } from './fuzz-requests.js';
import { exchange, type Exchange, type ParsedResponse } from './raw-http.js';

const TOKEN = 'fuzz-token';
const KEEP = 'fuzz-keep';
const PIPE = 'fuzz-pipe';
const INJECTED = 'injected by the fuzz test';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

const FIXTURES = [
  `/api/v1/namespaces/${KEEP}`,
  `/api/v1/namespaces/${KEEP}/configmaps/keep-cm`,
  `/api/v1/namespaces/${KEEP}/secrets/keep-secret`,
  `/apis/apps/v1/namespaces/${KEEP}/deployments/keep-deploy`,
  `/apis/fuzz.rxkube.dev/v1/namespaces/${KEEP}/widgets/keep-widget`,
  `${CRDS}/widgets.fuzz.rxkube.dev`,
];

function widgetCrd(): unknown {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.fuzz.rxkube.dev' },
    spec: {
      group: 'fuzz.rxkube.dev',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    size: { type: 'integer', minimum: 0 },
                    word: { type: 'string', pattern: '^(a+)+$', maxLength: 40 },
                    replicas: { type: 'integer' },
                    text: {
                      type: 'string',
                      maxLength: 8000,
                      'x-kubernetes-validations': [{ rule: "self.replace('a', self).matches('^(a|b)*c$') == false" }],
                    },
                  },
                },
                status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              },
            },
          },
        },
      ],
    },
  };
}

/** One request with a well-formed body and the token, for the fixtures and the checks. */
async function call(server: ApiServer, method: string, path: string, body?: unknown): Promise<ParsedResponse> {
  const url = new URL(server.url);
  const payload = body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(body));
  const head = `${method} ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${payload.length}\r\nConnection: close\r\n\r\n`;
  const ex = await exchange(url.hostname, Number(url.port), Buffer.concat([Buffer.from(head), payload]));
  const res = ex.responses[0];
  if (!res) throw new Error(`${method} ${path}: no answer (${ex.ending} ${ex.error ?? ''})`);
  return res;
}

function json(res: ParsedResponse): Record<string, unknown> {
  return JSON.parse(res.body.toString('utf8')) as Record<string, unknown>;
}

/**
 * The real server's answer to a resourceVersion it has not reached after waiting for it (504,
 * cause ResourceVersionTooLarge): right for a request that names a version past the server's.
 */
function tooLargeResourceVersion(req: FuzzRequest, res: ParsedResponse): boolean {
  if (res.status !== 504 || !/[?&]resourceVersion=\d/.test(req.target)) return false;
  try {
    const status = JSON.parse(res.body.toString('utf8')) as { details?: { causes?: { reason?: string }[] } };
    return status.details?.causes?.some((c) => c.reason === 'ResourceVersionTooLarge') === true;
  } catch {
    return false;
  }
}

/** What was wrong with one answer, or undefined when it is well-formed. */
function problemWith(req: FuzzRequest, res: ParsedResponse, ex: Exchange): string | undefined {
  const head = req.method.toUpperCase() === 'HEAD' && res === ex.responses[0] && res.body.length === 0;
  if (res.status >= 500 && !tooLargeResourceVersion(req, res)) {
    const text = res.body.toString('utf8');
    // A HEAD answer has no body to name the fault: the request must have named a faulty object.
    if (head ? !req.injected : !text.includes(INJECTED)) return `${res.status} that is not an injected fault: ${text.slice(0, 300)}`;
  }
  if (head) return undefined;
  const type = res.headers['content-type'] ?? '';
  const text = res.body.toString('utf8');
  if (res.status >= 400) {
    if (!type.startsWith('application/json')) return `${res.status} with content-type ${JSON.stringify(type)}, not a Status`;
    let status: Record<string, unknown>;
    try {
      status = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return `${res.status} whose body is not JSON: ${text.slice(0, 200)}`;
    }
    if (status.kind !== 'Status' || status.apiVersion !== 'v1' || status.status !== 'Failure')
      return `${res.status} whose body is not a Status: ${text.slice(0, 200)}`;
    if (status.code !== res.status) return `Status code ${String(status.code)} in a ${res.status} answer`;
    if (typeof status.message !== 'string' || status.message === '' || typeof status.reason !== 'string')
      return `Status without message or reason: ${text.slice(0, 200)}`;
    return undefined;
  }
  if (type.startsWith('application/json')) {
    if (res.headers['transfer-encoding'] === 'chunked') {
      // A watch stream: each complete line is an event.
      const lines = text.split('\n');
      if (res.truncated || !text.endsWith('\n')) lines.pop();
      for (const line of lines.filter((l) => l !== '')) {
        let event: Record<string, unknown>;
        try {
          event = JSON.parse(line) as Record<string, unknown>;
        } catch {
          return `watch line that is not JSON: ${line.slice(0, 200)}`;
        }
        if (typeof event.type !== 'string' || typeof event.object !== 'object')
          return `watch line that is not an event: ${line.slice(0, 200)}`;
        if (event.type === 'ERROR' && (event.object as Record<string, unknown>).kind !== 'Status')
          return `watch ERROR without a Status: ${line.slice(0, 200)}`;
      }
      return undefined;
    }
    if (res.truncated) return `${res.status} body cut short`;
    try {
      JSON.parse(text);
    } catch {
      return `${res.status} JSON answer that does not parse: ${text.slice(0, 200)}`;
    }
  }
  return undefined;
}

/** What was wrong with the answers to a pipelined batch: one per request, in order, each the one its request must get. */
function pipelineProblems(req: FuzzRequest, ex: Exchange): string[] {
  const steps = req.pipeline ?? [];
  const problems: string[] = [];
  if (ex.responses.length !== steps.length)
    problems.push(`${ex.responses.length} answers to ${steps.length} pipelined requests (${ex.ending} ${ex.error ?? ''})`);
  steps.forEach(({ request, expect: want }, i) => {
    const res = ex.responses[i];
    if (!res) return;
    const what = `pipelined request ${i + 1} of ${steps.length} (${request.method} ${request.target})`;
    const text = res.body.toString('utf8');
    if (res.status !== want.status) {
      problems.push(`${what}: ${res.status} where ${want.status} was due: ${text.slice(0, 200)}`);
      return;
    }
    let body: { metadata?: { name?: string }; details?: { name?: string }; data?: { v?: string }; items?: unknown[] };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      problems.push(`${what}: an answer that is not JSON: ${text.slice(0, 200)}`);
      return;
    }
    const name = res.status >= 400 ? body.details?.name : body.metadata?.name;
    if (want.name !== undefined && name !== want.name) problems.push(`${what}: an answer for ${JSON.stringify(name)}, not ${want.name}`);
    if (want.value !== undefined && body.data?.v !== want.value)
      problems.push(`${what}: data.v ${JSON.stringify(body.data?.v)} where the writes before it left ${want.value}`);
    if (want.items !== undefined && body.items?.length !== want.items)
      problems.push(`${what}: ${body.items?.length} items where ${want.items} were due`);
  });
  if (ex.junk.length > 0)
    problems.push(`bytes after the pipelined answers: ${JSON.stringify(ex.junk.subarray(0, 200).toString('latin1'))}`);
  return problems;
}

function resourceVersionsIn(value: unknown, out: number[]): void {
  if (typeof value !== 'object' || value === null) return;
  const meta = (value as { metadata?: { resourceVersion?: unknown } }).metadata;
  if (typeof meta?.resourceVersion === 'string' && /^\d+$/.test(meta.resourceVersion)) out.push(Number(meta.resourceVersion));
  const items = (value as { items?: unknown }).items;
  if (Array.isArray(items)) for (const item of items) resourceVersionsIn(item, out);
}

function requestText(req: FuzzRequest): string {
  const wire = serialize(req).toString('latin1');
  const limit = req.pipeline ? 4000 : 400;
  const cut = wire.length > limit ? `${wire.slice(0, limit)}... (${wire.length} bytes)` : wire;
  return JSON.stringify(cut);
}

describe('apiserver: fuzz over the request surface (issue 13)', function () {
  this.timeout(120_000);
  const seed = process.env.RXKUBE_FUZZ_SEED !== undefined ? Number(process.env.RXKUBE_FUZZ_SEED) : randomInt(2 ** 31);
  const count = Number(process.env.RXKUBE_FUZZ_COUNT ?? 2000);
  const seconds = Number(process.env.RXKUBE_FUZZ_SECONDS ?? 30);
  let server: ApiServer;
  const fixturesBefore: Record<string, unknown> = {};

  before(async () => {
    server = await startApiServer({ token: TOKEN, bodyTimeoutMs: 300, minRequestTimeoutSeconds: 5 });
    const created = async (path: string, body: unknown): Promise<void> => {
      const res = await call(server, 'POST', path, body);
      expect(res.status, `${path}: ${res.body.toString()}`).to.equal(201);
    };
    await created(CRDS, widgetCrd());
    for (const ns of [KEEP, 'fuzz', PIPE]) await created('/api/v1/namespaces', { metadata: { name: ns } });
    for (let i = 0; i < 200 && (await call(server, 'GET', '/apis/fuzz.rxkube.dev/v1/widgets')).status !== 200; i++)
      await new Promise((r) => setTimeout(r, 10));
    for (const ns of [KEEP, 'fuzz', 'default']) {
      const prefix = ns === KEEP ? 'keep' : 'fz-a';
      await created(`/api/v1/namespaces/${ns}/configmaps`, {
        metadata: { name: prefix === 'keep' ? 'keep-cm' : 'fz-a', labels: { fuzz: 'yes' } },
        data: { a: 'b' },
      });
      await created(`/api/v1/namespaces/${ns}/secrets`, {
        metadata: { name: prefix === 'keep' ? 'keep-secret' : 'fz-a' },
        stringData: { token: 'fixture' },
      });
      await created(`/apis/apps/v1/namespaces/${ns}/deployments`, {
        metadata: { name: prefix === 'keep' ? 'keep-deploy' : 'fz-a' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'fz' } },
          template: { metadata: { labels: { app: 'fz' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        },
      });
      await created(`/apis/fuzz.rxkube.dev/v1/namespaces/${ns}/widgets`, {
        apiVersion: 'fuzz.rxkube.dev/v1',
        kind: 'Widget',
        metadata: { name: prefix === 'keep' ? 'keep-widget' : 'fz-a' },
        spec: { size: 1, word: 'aa', replicas: 1 },
      });
    }
    for (const path of FIXTURES) fixturesBefore[path] = json(await call(server, 'GET', path));
    server.faults.failRequests({ name: 'fz-faulty', status: 500, message: INJECTED });
    server.faults.failRequests({ path: /\/widgets\/fz-b/, status: 503, message: INJECTED, fraction: 0.5 });
  });
  after(async () => {
    await server?.close();
  });

  it(`answers ${count} random and mutated requests (seeded) with well-formed responses: a Status for every error, no 5xx but injected faults, no connection closed unanswered`, async () => {
    console.log(`      fuzz seed ${seed} (RXKUBE_FUZZ_SEED=${seed} repeats this sequence of requests)`);
    const r = prng(seed);
    const url = new URL(server.url);
    const target: FuzzTarget = {
      host: url.host,
      token: TOKEN,
      keepNamespace: KEEP,
      pipelineNamespace: PIPE,
      faultyNames: ['fz-faulty', 'fz-b'],
      continueTokens: [],
      resourceVersion: () => server.stats().resourceVersion,
    };
    const requests: FuzzRequest[] = [];
    for (let i = 0; i < count; i++) requests.push(generate(r, target));

    const problems: string[] = [];
    const unanswered: Record<string, number> = {};
    const byStatus: Record<string, number> = {};
    const byCategory: Record<string, number> = {};
    let maxSeen = 0;
    let lastStat = server.stats().resourceVersion;
    let sent = 0;
    const deadline = Date.now() + seconds * 1000;
    const started = Date.now();

    const one = async (req: FuzzRequest): Promise<void> => {
      if (req.pipeline) {
        // Read until the server closes after the last answer: every answer must come.
        const ex = await exchange(url.hostname, Number(url.port), serialize(req), { streamMs: 20_000, timeoutMs: 20_000 });
        sent++;
        byCategory[req.category] = (byCategory[req.category] ?? 0) + 1;
        for (const res of ex.responses) byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
        for (const problem of pipelineProblems(req, ex)) problems.push(`${problem}\n        requests: ${requestText(req)}`);
        return;
      }
      const ex = await exchange(url.hostname, Number(url.port), serialize(req), { head: req.method.toUpperCase() === 'HEAD' });
      sent++;
      byCategory[req.category] = (byCategory[req.category] ?? 0) + 1;
      const stat = server.stats().resourceVersion;
      if (stat < lastStat) problems.push(`server resourceVersion went back from ${lastStat} to ${stat}`);
      lastStat = stat;
      if (ex.responses.length === 0) {
        const key = `${req.category}: ${ex.ending}${ex.error ? ` ${ex.error}` : ''}`;
        unanswered[key] = (unanswered[key] ?? 0) + 1;
        problems.push(`no answer (${ex.ending} ${ex.error ?? ''}) to ${requestText(req)}`);
        return;
      }
      for (const res of ex.responses) {
        byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
        const problem = problemWith(req, res, ex);
        if (problem) problems.push(`${problem}\n        request: ${requestText(req)}`);
        if (
          res.status < 300 &&
          res.headers['content-type']?.startsWith('application/json') &&
          res.headers['transfer-encoding'] !== 'chunked' &&
          !res.truncated
        ) {
          try {
            const value = JSON.parse(res.body.toString('utf8')) as { metadata?: { continue?: string } };
            const seen: number[] = [];
            resourceVersionsIn(value, seen);
            maxSeen = Math.max(maxSeen, ...seen);
            if (value.metadata?.continue && target.continueTokens.length < 20) target.continueTokens.push(value.metadata.continue);
          } catch {
            // reported by problemWith
          }
        }
      }
      if (ex.junk.length > 0)
        problems.push(
          `bytes after the answers that are no response: ${JSON.stringify(ex.junk.subarray(0, 200).toString('latin1'))}\n        request: ${requestText(req)}`,
        );
    };

    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < requests.length && Date.now() < deadline) await one(requests[next++]);
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    const elapsed = (Date.now() - started) / 1000;

    const summary = {
      seed,
      sent,
      seconds: Number(elapsed.toFixed(1)),
      byCategory,
      byStatus,
      unanswered,
      problems: problems.length,
    };

    console.log(`      fuzz: ${JSON.stringify(summary)}`);
    expect(sent, 'requests sent within the time budget').to.be.at.least(Math.min(count, 300));
    expect(problems.slice(0, 10), `${problems.length} problems (seed ${seed})`).to.deep.equal([]);

    // The server still answers, through the real client too, and its resourceVersion is past all it showed.
    const kc = server.kubeConfig();
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const list = await core.listNamespacedConfigMap({ namespace: KEEP });
    expect(Number(list.metadata?.resourceVersion)).to.be.at.least(maxSeen);
    expect(server.stats().resourceVersion).to.be.at.least(maxSeen);
    const made = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: `after-fuzz-${seed}` }, data: { ok: 'yes' } },
    });
    expect(Number(made.metadata?.resourceVersion)).to.be.greaterThan(maxSeen);
    await core.deleteNamespacedConfigMap({ name: `after-fuzz-${seed}`, namespace: 'default' });

    // Objects made before the fuzz are as they were (same resourceVersion: not even touched).
    for (const path of FIXTURES) expect(json(await call(server, 'GET', path)), path).to.deep.equal(fixturesBefore[path]);
  });
});

describe('apiserver: the fuzz generator (issue 22)', () => {
  it('never sends a DELETE that the server resolves to the collection of namespaces or CRDs, which would take the fixtures with it (was: a mutated path such as customresourcedefinitions/x/.. deleted every CRD, and the fixtures answered 404)', () => {
    const target: FuzzTarget = {
      host: '127.0.0.1:1',
      token: TOKEN,
      keepNamespace: KEEP,
      pipelineNamespace: PIPE,
      faultyNames: [],
      continueTokens: [],
      resourceVersion: () => 100,
    };
    const collection = /\/(namespaces|customresourcedefinitions)$/;
    const resolved = (t: string): string => {
      const url = /^[a-z]+:\/\//i.test(t) ? new URL(t) : new URL(t.replace(/\/+/g, '/'), 'http://x.invalid');
      return url.pathname.replace(/\/+/g, '/').replace(/\/$/, '');
    };
    const found: string[] = [];
    for (let seed = 0; seed < 30; seed++) {
      const r = prng(seed);
      for (let i = 0; i < 2000; i++) {
        const req = generate(r, target);
        if (req.method === 'DELETE' && collection.test(resolved(req.target)))
          found.push(`seed ${seed}: DELETE ${req.target.slice(0, 120)}`);
      }
    }
    expect(found.slice(0, 5), `${found.length} collection deletes`).to.deep.equal([]);
  });
});

/**
 * What Node's HTTP layer refuses before the handler sees it. Node's defaults answered these with a
 * bare 400, 417 or 431 (no body, so no Status) or, for CONNECT, closed the connection unanswered
 * ("socket hang up"); with a request body still on its way, its 400-then-destroy reset the
 * connection before the client read the answer (also "socket hang up").
 */
describe("apiserver: answers with a Status what Node's HTTP parser refuses (issue 13, fuzz findings)", () => {
  let server: ApiServer;
  let host: string;
  let port: number;

  before(async () => {
    server = await startApiServer({ clientNode: false, bodyTimeoutMs: 300 });
    const url = new URL(server.url);
    host = url.host;
    port = Number(url.port);
  });
  after(async () => {
    await server.close();
  });

  const statusOf = (res: ParsedResponse | undefined): { code?: number; reason?: string; message?: string } => {
    expect(res, 'an answer').to.not.equal(undefined);
    expect(res?.headers['content-type']).to.equal('application/json');
    return JSON.parse((res as ParsedResponse).body.toString('utf8')) as { code?: number; reason?: string; message?: string };
  };

  const cases: Array<{ what: string; wire: (host: string) => string; code: number; reason: string; message: RegExp }> = [
    {
      what: 'an unknown method (FOO), 405 as the real server answers',
      wire: (h) => `FOO /api/v1/namespaces HTTP/1.1\r\nHost: ${h}\r\n\r\n`,
      code: 405,
      reason: 'MethodNotAllowed',
      message: /does not allow this method/,
    },
    {
      what: 'CONNECT (was: connection closed unanswered)',
      wire: (h) => `CONNECT ${h} HTTP/1.1\r\nHost: ${h}\r\n\r\n`,
      code: 405,
      reason: 'MethodNotAllowed',
      message: /does not allow this method/,
    },
    {
      what: 'a path starting with // and a query (seed 2037134357, was: 500 Invalid URL)',
      wire: (h) => `POST //?a=b HTTP/1.1\r\nHost: ${h}\r\nContent-Length: 0\r\n\r\n`,
      code: 404,
      reason: 'NotFound',
      message: /could not find the requested resource/,
    },
    {
      what: 'a request line with spaces in the path',
      wire: (h) => `GET /a b c HTTP/1.1\r\nHost: ${h}\r\n\r\n`,
      code: 400,
      reason: 'BadRequest',
      message: /malformed HTTP request/,
    },
    {
      what: 'TLS bytes sent to the plain HTTP port',
      wire: () => '\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03',
      code: 400,
      reason: 'BadRequest',
      message: /malformed HTTP request/,
    },
    {
      what: 'headers over 16 KiB',
      wire: (h) => `GET /api HTTP/1.1\r\nHost: ${h}\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`,
      code: 431,
      reason: 'RequestHeaderFieldsTooLarge',
      message: /exceed 16384 bytes/,
    },
    {
      what: 'an Expect other than 100-continue',
      wire: (h) => `GET /api HTTP/1.1\r\nHost: ${h}\r\nExpect: magic\r\n\r\n`,
      code: 417,
      reason: 'ExpectationFailed',
      message: /unsupported Expect header "magic"/,
    },
    {
      what: 'HTTP/1.1 without Host',
      wire: () => 'GET /api HTTP/1.1\r\nConnection: close\r\n\r\n',
      code: 400,
      reason: 'BadRequest',
      message: /missing required Host header/,
    },
    {
      what: 'Content-Length and Transfer-Encoding together',
      wire: (h) =>
        `POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: ${h}\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}`,
      code: 400,
      reason: 'BadRequest',
      message: /can't be present with/,
    },
    {
      what: 'a Content-Length that is not a number',
      wire: (h) => `POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: ${h}\r\nContent-Length: 12abc\r\n\r\n{}`,
      code: 400,
      reason: 'BadRequest',
      message: /malformed HTTP request/,
    },
    {
      what: 'a chunked body broken in the middle (answered through the request in flight)',
      wire: (h) =>
        `POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: ${h}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\nzz\r\n`,
      code: 400,
      reason: 'BadRequest',
      message: /malformed HTTP request/,
    },
  ];
  for (const c of cases) {
    it(`answers ${c.code} ${c.reason} with a Status for ${c.what}`, async () => {
      const ex = await exchange('127.0.0.1', port, Buffer.from(c.wire(host), 'latin1'));
      expect(ex.responses.map((r) => r.status)).to.deep.equal([c.code]);
      const status = statusOf(ex.responses[0]);
      expect(status).to.include({ code: c.code, reason: c.reason });
      expect(status.message).to.match(c.message);
      expect(ex.junk.length).to.equal(0);
    });
  }

  it('answers a request, then answers the bytes a short Content-Length left over with a Status (was: a bare 400 in place of the answer)', async () => {
    const body = '{"metadata":{"name":"cl-short"}}';
    const wire = `POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}GARBAGE / HTTP/1.1\r\n\r\n`;
    const ex = await exchange('127.0.0.1', port, Buffer.from(wire));
    expect(ex.responses.map((r) => r.status)).to.deep.equal([201, 405]);
    expect(statusOf(ex.responses[1]).reason).to.equal('MethodNotAllowed');
  });

  it('lets a client that is still sending its body read the answer to an unknown method (no reset: "socket hang up" before)', async () => {
    const url = new URL(server.url);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          method: 'FOO',
          path: '/api/v1/namespaces/default/configmaps',
          agent: false,
          headers: { 'content-type': 'application/json' },
        },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(Buffer.alloc(2 * 1024 * 1024, 0x20));
    });
    expect(answer.status).to.equal(405);
    expect(JSON.parse(answer.body)).to.include({ kind: 'Status', reason: 'MethodNotAllowed' });
  });
});
