/**
 * Issue 13, the request surface: parsing limits, RE2 patterns, request hygiene and the guards
 * that keep a web page out. Each test is one finding of the issue.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { startApiServer, type ApiServer } from '../src/index.js';
import { raw, type RawResponse } from './helpers.js';

const CMS = '/api/v1/namespaces/default/configmaps';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const THINGS = '/apis/limits.rxkube.dev/v1/namespaces/default/things';

interface Status {
  code: number;
  reason: string;
  message: string;
  details?: { causes?: { reason?: string; message?: string; field?: string }[]; retryAfterSeconds?: number };
}

const statusOf = (res: RawResponse): Status => res.json as Status;

function thingCrd(name: string, pattern: string): string {
  return JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${name}.limits.rxkube.dev` },
    spec: {
      group: 'limits.rxkube.dev',
      scope: 'Namespaced',
      names: { plural: name, singular: name.slice(0, -1), kind: name === 'things' ? 'Thing' : 'Other' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  'x-kubernetes-preserve-unknown-fields': true,
                  properties: { word: { type: 'string', pattern }, end: { type: 'string', pattern: '^\\z' } },
                },
              },
            },
          },
        },
      ],
    },
  });
}

function thing(name: string, spec: Record<string, unknown>): string {
  return JSON.stringify({ apiVersion: 'limits.rxkube.dev/v1', kind: 'Thing', metadata: { name }, spec });
}

function nested(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** A watch over raw HTTP: its lines as they come, and whether the server ended it. */
function rawWatch(server: ApiServer, path: string): { lines: string[]; ended: () => boolean; close: () => void; ready: Promise<number> } {
  const lines: string[] = [];
  let ended = false;
  let buffered = '';
  const req = request(new URL(path, server.url));
  const ready = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      resolve(res.statusCode ?? 0);
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffered += chunk;
        const parts = buffered.split('\n');
        buffered = parts.pop() ?? '';
        lines.push(...parts.filter((l) => l !== ''));
      });
      res.on('end', () => (ended = true));
      res.on('error', () => (ended = true));
    });
    req.on('error', reject);
  });
  req.end();
  return { lines, ended: () => ended, close: () => req.destroy(), ready };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('apiserver: limits and request guards (issue 13)', () => {
  let server: ApiServer;

  before(async () => {
    server = await startApiServer({ clientNode: false, bodyTimeoutMs: 300 });
    const crd = await raw(server, 'POST', CRDS, thingCrd('things', '^(a+)+$'));
    expect(crd.status, crd.text).to.equal(201);
    for (let i = 0; i < 100; i++) {
      if ((await raw(server, 'GET', THINGS)).status === 200) break;
      await new Promise((r) => setTimeout(r, 10));
    }
  });
  after(async () => {
    await server.close();
  });

  describe('parsing', () => {
    it('refuses a 530-byte YAML alias bomb with 400 and keeps serving', async function () {
      this.timeout(5000);
      const bomb = [
        'apiVersion: v1',
        'kind: ConfigMap',
        'metadata: {name: bomb}',
        'data:',
        '  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
        '  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
        '  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
        '  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
        '  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
        '  f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
        '  g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]',
        '  h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]',
        '  i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]',
        '  j: &j [*i,*i,*i,*i,*i,*i,*i,*i,*i]',
        '  k: &k [*j,*j,*j,*j,*j,*j,*j,*j,*j]',
        '  l: &l [*k,*k,*k,*k,*k,*k,*k,*k,*k]',
      ].join('\n');
      expect(Buffer.byteLength(bomb)).to.equal(530);
      const res = await raw(server, 'PATCH', `${CMS}/bomb?fieldManager=fuzz`, bomb, { 'content-type': 'application/apply-patch+yaml' });
      expect(res.status, res.text).to.equal(400);
      expect(statusOf(res).message).to.contain('excessive aliasing');
      expect((await raw(server, 'GET', '/version')).status).to.equal(200);
      expect((await raw(server, 'GET', `${CMS}/bomb`)).status).to.equal(404);
    });

    it('refuses a smaller alias bomb (once 25 s of work and a 69 MB object) at once, storing nothing', async function () {
      this.timeout(5000);
      const levels = 'abcdefghi'.split('');
      const bomb = [
        'apiVersion: v1',
        'kind: ConfigMap',
        'metadata: {name: small-bomb}',
        'data:',
        `  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]`,
        ...levels.slice(1).map((l, i) => `  ${l}: &${l} [${Array(9).fill(`*${levels[i]}`).join(',')}]`),
      ].join('\n');
      expect(Buffer.byteLength(bomb)).to.be.below(440);
      const res = await raw(server, 'POST', CMS, bomb, { 'content-type': 'application/yaml' });
      expect(res.status, res.text).to.equal(400);
      expect(statusOf(res).message).to.contain('excessive aliasing');
      expect((await raw(server, 'GET', `${CMS}/small-bomb`)).status).to.equal(404);
    });

    it('refuses an anchor whose value holds an alias to itself with 400, at once (fuzz seed 962469064; was: the copy to JSON followed the cycle until the process ran out of memory)', async function () {
      this.timeout(30_000);
      const cyclic = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cyclic}\ndata: &x\n  a: *x\n';
      // Parsed in a child with a small heap first: before the fix this never returned, and in
      // this process it would have taken the whole test run with it.
      const parser = fileURLToPath(new URL('../src/http/http.ts', import.meta.url));
      const code = `const { loadYaml } = await import(${JSON.stringify(parser)}); try { loadYaml(${JSON.stringify(cyclic)}); console.log('parsed'); } catch (e) { console.log(e.message); }`;
      const child = await new Promise<{ out: string; failed: boolean }>((resolve) => {
        execFile(
          process.execPath,
          ['--import=tsx', '--max-old-space-size=96', '--input-type=module', '-e', code],
          { timeout: 20_000 },
          (err, out) => resolve({ out: out.trim(), failed: err !== null }),
        );
      });
      expect(child).to.deep.equal({
        out: "the request body could not be decoded as YAML: yaml: anchor 'x' value contains itself",
        failed: false,
      });
      const res = await raw(server, 'POST', CMS, cyclic, { 'content-type': 'application/yaml' });
      expect(res.status, res.text).to.equal(400);
      expect(statusOf(res).message).to.equal("the request body could not be decoded as YAML: yaml: anchor 'x' value contains itself");
      expect((await raw(server, 'GET', `${CMS}/cyclic`)).status).to.equal(404);
    });

    it('accepts a few aliases, as YAML with anchors is legitimate', async () => {
      const yaml = [
        'apiVersion: v1',
        'kind: ConfigMap',
        'metadata: {name: anchors, labels: &l {app: x}, annotations: *l}',
        'data: {k: v}',
      ].join('\n');
      const res = await raw(server, 'POST', CMS, yaml, { 'content-type': 'application/yaml' });
      expect(res.status, res.text).to.equal(201);
    });

    it('accepts nesting up to the limit and answers 400 beyond it, for JSON and YAML, never 500', async () => {
      const ok = await raw(server, 'POST', THINGS, thing('deep-ok', { x: JSON.parse(nested(900)) as unknown }));
      expect(ok.status, ok.text.slice(0, 200)).to.equal(201);
      for (const depth of [1001, 3000, 20000]) {
        const body = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"x":${nested(depth)}}`;
        const res = await raw(server, 'POST', CMS, body);
        expect(res.status, `${depth}: ${res.text.slice(0, 200)}`).to.equal(400);
        expect(statusOf(res).message).to.match(/invalid character '\{' exceeded max depth/);
      }
      const yamlFlow = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\nx: ${'['.repeat(5000)}${']'.repeat(5000)}\n`;
      const flow = await raw(server, 'POST', CMS, yamlFlow, { 'content-type': 'application/yaml' });
      expect(flow.status, flow.text.slice(0, 200)).to.equal(400);
      const yamlBlock = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\nx:\n${'- '.repeat(5000)}1\n`;
      const block = await raw(server, 'POST', CMS, yamlBlock, { 'content-type': 'application/yaml' });
      expect(block.status, block.text.slice(0, 200)).to.equal(400);
      for (const [kind, body] of [
        ['application/merge-patch+json', `{"spec":${nested(3000)}}`],
        ['application/json-patch+json', `[{"op":"add","path":"/spec/x","value":${nested(3000)}}]`],
        ['application/strategic-merge-patch+json', `{"spec":${nested(3000)}}`],
        [
          'application/apply-patch+yaml',
          `{"apiVersion":"limits.rxkube.dev/v1","kind":"Thing","metadata":{"name":"deep-ok"},"spec":${nested(3000)}}`,
        ],
      ] as const) {
        const res = await raw(server, 'PATCH', `${THINGS}/deep-ok?fieldManager=m`, body, { 'content-type': kind });
        expect(res.status, kind).to.be.within(400, 499);
      }
    });
  });

  describe('CRD patterns with Go regexp semantics (RE2)', () => {
    it('answers a ReDoS value for ^(a+)+$ at once with 422', async function () {
      this.timeout(5000);
      const res = await raw(server, 'POST', THINGS, thing('redos', { word: `${'a'.repeat(29)}!` }));
      expect(res.status, res.text).to.equal(422);
      expect(statusOf(res).message).to.contain("spec.word in body should match '^(a+)+$'");
      expect((await raw(server, 'POST', THINGS, thing('plain', { word: 'aaaa' }))).status).to.equal(201);
    });

    it('refuses at CRD creation a pattern Go cannot compile (^(?=a)a$), with the real server message', async () => {
      const res = await raw(server, 'POST', CRDS, thingCrd('others', '^(?=a)a$'));
      expect(res.status, res.text).to.equal(422);
      const cause = statusOf(res).details?.causes?.[0];
      expect(cause?.field).to.equal('spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[word].pattern');
      expect(cause?.message).to.equal(
        'Invalid value: "^(?=a)a$": must be a valid regular expression, but isn\'t: error parsing regexp: invalid or unsupported Perl syntax: `(?=`',
      );
    });

    it('matches ^\\z as Go does: only the empty string', async () => {
      expect((await raw(server, 'POST', THINGS, thing('z-empty', { end: '' }))).status).to.equal(201);
      const res = await raw(server, 'POST', THINGS, thing('z-text', { end: 'x' }));
      expect(res.status, res.text).to.equal(422);
      expect(statusOf(res).message).to.contain("should match '^\\z'");
    });
  });

  describe('request hygiene', () => {
    it('keeps a watch open for timeoutSeconds=2147484 (beyond Node timers) instead of closing it at once', async () => {
      const w = rawWatch(server, `${CMS}?watch=true&timeoutSeconds=2147484`);
      expect(await w.ready).to.equal(200);
      await raw(server, 'POST', CMS, JSON.stringify({ metadata: { name: 'long-watch' } }));
      await until(() => w.lines.some((l) => l.includes('"long-watch"')) || w.ended(), 'the event or the end of the watch');
      expect(w.ended(), 'the watch ended early').to.equal(false);
      w.close();
    });

    it('answers a watch from a future resourceVersion with Too large resource version (504, ResourceVersionTooLarge, retry after 1 s)', async function () {
      this.timeout(10_000);
      const current = server.stats().resourceVersion;
      const w = rawWatch(server, `${CMS}?watch=true&resourceVersion=${current + 1000}`);
      await until(() => w.ended(), 'the watch to end');
      expect(w.lines).to.have.length(1);
      const event = JSON.parse(w.lines[0]) as { type: string; object: Status };
      expect(event.type).to.equal('ERROR');
      expect(event.object).to.deep.include({
        code: 504,
        reason: 'Timeout',
        message: `Timeout: Too large resource version: ${current + 1000}, current: ${current}`,
      });
      expect(event.object.details).to.deep.equal({
        causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
        retryAfterSeconds: 1,
      });
    });

    it('a watch from a resourceVersion reached while it waits delivers only later events', async function () {
      this.timeout(10_000);
      const current = server.stats().resourceVersion;
      const w = rawWatch(server, `${CMS}?watch=true&resourceVersion=${current + 1}`);
      await raw(server, 'POST', CMS, JSON.stringify({ metadata: { name: 'soon-1' } }));
      await raw(server, 'POST', CMS, JSON.stringify({ metadata: { name: 'soon-2' } }));
      await until(() => w.lines.length > 0 || w.ended(), 'an event');
      const events = w.lines.map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } });
      expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).to.deep.equal(['ADDED soon-2']);
      w.close();
    });

    it('answers 400 for resourceVersion=abc on a list and a watch', async () => {
      for (const path of [`${CMS}?resourceVersion=abc`, `${CMS}?watch=true&resourceVersion=abc`]) {
        const res = await raw(server, 'GET', path);
        expect(res.status, path).to.equal(400);
        expect(statusOf(res).message).to.equal(
          'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax',
        );
      }
    });

    it('answers 408 to a body that does not arrive in time and closes the connection', async () => {
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(new URL(CMS, server.url), {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': '100' },
        });
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.write('{"metadata":');
      });
      expect(status).to.equal(408);
    });

    it('logs an aborted request in no error line (debug only)', async () => {
      const logged: unknown[] = [];
      const original = console.error;
      console.error = (...args: unknown[]) => logged.push(args);
      try {
        await new Promise<void>((resolve) => {
          const req = request(new URL(CMS, server.url), {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'content-length': '100' },
          });
          req.on('error', () => resolve());
          req.write('{"metadata":', () => setTimeout(() => req.destroy(), 20));
          req.on('close', () => resolve());
        });
        for (let i = 0; i < 5; i++) await raw(server, 'GET', '/version');
      } finally {
        console.error = original;
      }
      expect(logged).to.deep.equal([]);
    });
  });

  describe('loopback safety', () => {
    it('refuses a Host that is not a loopback name or an address (DNS rebinding) with 403 naming the reason', async () => {
      const res = await raw(server, 'GET', '/api/v1/secrets', undefined, { host: `evil.example:${server.port}` });
      expect(res.status).to.equal(403);
      expect(statusOf(res)).to.include({ reason: 'Forbidden', code: 403 });
      expect(statusOf(res).message).to.contain('Host "evil.example').and.contain('DNS rebinding');
      for (const host of [`localhost:${server.port}`, `127.0.0.1:${server.port}`, `[::1]:${server.port}`, `127.1.2.3:${server.port}`]) {
        expect((await raw(server, 'GET', '/api/v1/secrets', undefined, { host })).status, host).to.equal(200);
      }
    });

    it('refuses a Host that only starts like a loopback address or name (127.0.0.1.attacker.example, localhost.attacker.example), read or write', async () => {
      for (const name of [
        '127.0.0.1.attacker.example',
        '127.attacker.example',
        'localhost.attacker.example',
        'app.localhost',
        '127.0.0.1.',
      ]) {
        const host = `${name}:${server.port}`;
        const read = await raw(server, 'GET', '/api/v1/namespaces/kube-system/secrets', undefined, { host });
        expect(read.status, host).to.equal(403);
        expect(statusOf(read).message, host).to.contain('DNS rebinding');
        const body = JSON.stringify({ metadata: { name: 'rebound' } });
        const write = await raw(server, 'POST', CMS, body, { host, origin: `http://${host}` });
        expect(write.status, host).to.equal(403);
      }
      expect((await raw(server, 'GET', `${CMS}/rebound`)).status).to.equal(404);
    });

    it('answers to the names given in allowedHosts', async () => {
      const other = await startApiServer({ clientNode: false, allowedHosts: ['rxkube.test'] });
      try {
        expect((await raw(other, 'GET', '/version', undefined, { host: `rxkube.test:${other.port}` })).status).to.equal(200);
        expect((await raw(other, 'GET', '/version', undefined, { host: `evil.example:${other.port}` })).status).to.equal(403);
      } finally {
        await other.close();
      }
    });

    it('refuses a cross-site POST without Content-Type (Origin: http://evil.example) with 403, stores nothing', async () => {
      const body = JSON.stringify({ metadata: { name: 'csrf' } });
      const res = await raw(server, 'POST', CMS, body, { 'content-type': undefined, origin: 'http://evil.example' });
      expect(res.status, res.text).to.equal(403);
      expect(statusOf(res).message).to.contain('cross-origin POST from Origin "http://evil.example"');
      expect((await raw(server, 'GET', `${CMS}/csrf`)).status).to.equal(404);
      const own = await raw(server, 'POST', CMS, body, { origin: server.url });
      expect(own.status, own.text).to.equal(201);
    });
  });
});
