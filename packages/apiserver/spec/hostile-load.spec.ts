/**
 * Issue 32, the embedded server under hostile load: slow conversion webhooks, webhooks that
 * flood the Warning header, matchConditions that would loop for seconds, fields named like
 * Object.prototype's, clients that hold the server's budgets, a restart after kill -9.
 * Everything through real HTTP with client-node, as a cluster's clients see it.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import * as k8s from '@kubernetes/client-node';
import { expect } from 'chai';
import { startApiServer, type ApiServer } from '../src/index.js';
import { generateServingTls, type GeneratedTls } from '../src/http/tls.js';
import { eventually, raw, RecordingWatch, saToken, startWithClients, type Clients } from './helpers.js';

type Obj = Record<string, any>;
/** What a hook answers, and after how long. */
type HookAnswer = { body: Obj; delayMs?: number };

/** An HTTPS webhook server for admission and conversion reviews; each path has its handler. */
class Hooks {
  readonly handlers = new Map<string, (review: Obj) => HookAnswer>();
  readonly calls = new Map<string, number>();
  private constructor(
    readonly server: Server,
    readonly tls: GeneratedTls,
  ) {}

  static async start(): Promise<Hooks> {
    const tls = await generateServingTls({ dns: ['localhost'], ips: ['127.0.0.1'] });
    const server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = new URL(req.url ?? '/', 'https://x').pathname;
        const hooks = self;
        hooks.calls.set(path, (hooks.calls.get(path) ?? 0) + 1);
        const handler = hooks.handlers.get(path);
        if (!handler) {
          res.writeHead(404).end();
          return;
        }
        const { body, delayMs = 0 } = handler(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Obj);
        setTimeout(() => {
          if (res.destroyed) return;
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        }, delayMs);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const self = new Hooks(server, tls);
    return self;
  }

  url(path: string): string {
    return `https://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  get caBundle(): string {
    return Buffer.from(this.tls.ca).toString('base64');
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

function convertReview(review: Obj): Obj {
  const { uid, desiredAPIVersion, objects } = review.request as { uid: string; desiredAPIVersion: string; objects: Obj[] };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    response: { uid, result: { status: 'Success' }, convertedObjects: objects.map((o) => ({ ...o, apiVersion: desiredAPIVersion })) },
  };
}

const allowed = (review: Obj, extra: Obj = {}): Obj => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  response: { uid: review.request.uid, allowed: true, ...extra },
});

describe('the embedded server under hostile load (issue 32)', function () {
  this.timeout(60_000);
  let hooks: Hooks;
  let c: Clients;
  let admission: k8s.AdmissionregistrationV1Api;

  before(async () => {
    hooks = await Hooks.start();
    c = await startWithClients();
    admission = c.kc.makeApiClient(k8s.AdmissionregistrationV1Api);
  });

  after(async () => {
    await c.server.close();
    await hooks.close();
  });

  describe('a watch in a webhook-converted version', () => {
    const g = { group: 'slow.rxkube.dev', namespace: 'default', plural: 'gadgets' };

    before(async () => {
      hooks.handlers.set('/convert', (review) => ({ body: convertReview(review), delayMs: 100 }));
      const schema = { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } } as k8s.V1CustomResourceValidation;
      await c.ext.createCustomResourceDefinition({
        body: {
          metadata: { name: 'gadgets.slow.rxkube.dev' },
          spec: {
            group: g.group,
            scope: 'Namespaced',
            names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
            versions: [
              { name: 'v1', served: true, storage: true, schema },
              { name: 'v2', served: true, storage: false, schema },
            ],
            conversion: {
              strategy: 'Webhook',
              webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: hooks.url('/convert'), caBundle: hooks.caBundle } },
            },
          },
        },
      });
      await eventually(async () => (await raw(c.server, 'GET', '/apis/slow.rxkube.dev/v2')).status === 200, 'the CRD to be served');
    });

    it('is ended when more events wait for a slow conversion webhook than a watcher may hold, as the cacher ends a watcher that cannot keep up (was: queued without bound)', async () => {
      const watch = await RecordingWatch.start(c.kc, '/apis/slow.rxkube.dev/v2/namespaces/default/gadgets', {});
      await eventually(() => c.server.stats().watches === 1, 'the watch to open');
      // 100 ms per event: 160 events need 16 s; they are written in well under that.
      for (let i = 0; i < 160; i++) {
        await c.custom.createNamespacedCustomObject({
          ...g,
          version: 'v1',
          body: { apiVersion: 'slow.rxkube.dev/v1', kind: 'Gadget', metadata: { name: `g${i}` }, data: 'x'.repeat(1000) },
        });
      }
      const ended = await watch.ended(8000);
      expect(ended, 'a clean end the client re-watches after, not an error').to.equal(null);
      expect(watch.events.length, 'events delivered before the end').to.be.below(160);
      expect(
        watch.events.every((e) => e.object.apiVersion === 'slow.rxkube.dev/v2'),
        'what was delivered was converted',
      ).to.equal(true);
      await eventually(() => c.server.stats().watches === 0, 'the watcher to be forgotten');
    });
  });

  describe('webhook warnings', () => {
    const config = 'many-warnings';

    before(async () => {
      // 200 warnings of 100 characters, each twice: 20,000 characters once deduplicated.
      const texts = Array.from({ length: 200 }, (_, i) => `warning ${String(i).padStart(3, '0')}: ${'w'.repeat(88)}`);
      hooks.handlers.set('/warn', (review) => ({ body: allowed(review, { warnings: [...texts, ...texts] }) }));
      await admission.createValidatingWebhookConfiguration({
        body: {
          metadata: { name: config },
          webhooks: [
            {
              name: 'warn.rxkube.dev',
              clientConfig: { url: hooks.url('/warn'), caBundle: hooks.caBundle },
              rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], operations: ['CREATE'] }],
              sideEffects: 'None',
              admissionReviewVersions: ['v1'],
              objectSelector: { matchLabels: { warned: 'yes' } },
            },
          ],
        },
      });
    });

    after(async () => {
      await admission.deleteValidatingWebhookConfiguration({ name: config });
    });

    it('are deduplicated and cut as the real server cuts them (4096 characters, then 256 each), so client-node sees the write succeed (was: a 22 KB header its fetch refused)', async () => {
      const created = await c.core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: 'warned', labels: { warned: 'yes' } } },
      });
      expect(created.metadata?.uid).to.be.a('string');
      const res = await raw(
        c.server,
        'POST',
        '/api/v1/namespaces/default/configmaps',
        JSON.stringify({ metadata: { name: 'warned-raw', labels: { warned: 'yes' } } }),
      );
      expect(res.status).to.equal(201);
      const header = String(res.headers.warning);
      const warnings = header.split(/, (?=299 )/).map((w) => JSON.parse(w.replace(/^299 - /, '')) as string);
      expect(new Set(warnings).size, 'each text once').to.equal(warnings.length);
      expect(warnings[0]).to.match(/^warning 000: w+$/);
      const chars = warnings.reduce((n, w) => n + w.length, 0);
      expect(chars, 'characters in all: the total, plus at most one warning past it').to.be.within(4096, 4096 + 256);
      expect(header.length).to.be.below(8 * 1024);
    });
  });

  describe('matchConditions', () => {
    const list = `[${Array.from({ length: 250 }, (_, i) => i).join(',')}]`;
    // 250³ iterations: about 15 s of evaluation unmetered.
    const expensive = `${list}.all(x, ${list}.all(y, ${list}.all(z, true)))`;

    async function hookWith(name: string, failurePolicy: 'Fail' | 'Ignore', expression = expensive): Promise<void> {
      hooks.handlers.set(`/${name}`, (review) => ({ body: allowed(review) }));
      await admission.createValidatingWebhookConfiguration({
        body: {
          metadata: { name },
          webhooks: [
            {
              name: `${name}.rxkube.dev`,
              clientConfig: { url: hooks.url(`/${name}`), caBundle: hooks.caBundle },
              rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], operations: ['CREATE'] }],
              sideEffects: 'None',
              admissionReviewVersions: ['v1'],
              failurePolicy,
              objectSelector: { matchLabels: { costly: name } },
              matchConditions: [{ name: 'loops', expression }],
            },
          ],
        },
      });
    }

    it('are stopped at the runtime cost limit and the failurePolicy applied: Fail refuses the write naming the limit, without calling the webhook (was: 15 s of evaluation, then the call)', async () => {
      await hookWith('costly-fail', 'Fail');
      try {
        const res = await raw(
          c.server,
          'POST',
          '/api/v1/namespaces/default/configmaps',
          JSON.stringify({ metadata: { name: 'costly-fail', labels: { costly: 'costly-fail' } } }),
        );
        expect(res.status, res.text).to.be.within(400, 599);
        expect((res.json as { message: string }).message).to.contain(
          "expression 'loops' resulted in error: operation cancelled: actual cost limit exceeded",
        );
        expect(hooks.calls.get('/costly-fail') ?? 0).to.equal(0);
        expect((await raw(c.server, 'GET', '/api/v1/namespaces/default/configmaps/costly-fail')).status).to.equal(404);
      } finally {
        await admission.deleteValidatingWebhookConfiguration({ name: 'costly-fail' });
      }
    });

    it('are charged for what their operators walk: comparing a 62,500-element list it built, 250 times, is stopped at the limit (was: one node each, half a second per condition)', async () => {
      const built = `[${list}.map(a, ${list}.map(b, a * b))].all(A, ${list}.all(y, A == A))`;
      await hookWith('costly-compare', 'Fail', built);
      try {
        const res = await raw(
          c.server,
          'POST',
          '/api/v1/namespaces/default/configmaps',
          JSON.stringify({ metadata: { name: 'costly-compare', labels: { costly: 'costly-compare' } } }),
        );
        expect(res.status, res.text).to.be.within(400, 599);
        expect((res.json as { message: string }).message).to.contain('actual cost limit exceeded');
        expect(hooks.calls.get('/costly-compare') ?? 0).to.equal(0);
      } finally {
        await admission.deleteValidatingWebhookConfiguration({ name: 'costly-compare' });
      }
    });

    it('are stopped at the runtime cost limit and the failurePolicy applied: Ignore skips the webhook and the write is stored', async () => {
      await hookWith('costly-ignore', 'Ignore');
      try {
        const res = await raw(
          c.server,
          'POST',
          '/api/v1/namespaces/default/configmaps',
          JSON.stringify({ metadata: { name: 'costly-ignore', labels: { costly: 'costly-ignore' } } }),
        );
        expect(res.status, res.text).to.equal(201);
        expect(hooks.calls.get('/costly-ignore') ?? 0).to.equal(0);
      } finally {
        await admission.deleteValidatingWebhookConfiguration({ name: 'costly-ignore' });
      }
    });
  });

  describe("fields named like Object.prototype's members", () => {
    const PODS = '/api/v1/namespaces/default/pods';
    const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'];
    // Written as text: an object literal's `__proto__` would set a prototype, not a member.
    const pod = (name: string, field: string): string =>
      `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"${name}"},"spec":{"containers":[{"name":"c","image":"busybox"}],"${field}":{"hostPID":true}}}`;
    const message = (res: { json: unknown }): string => (res.json as { message: string }).message;

    before(async () => {
      await c.ext.createCustomResourceDefinition({
        body: {
          metadata: { name: 'protos.proto.rxkube.dev' },
          spec: {
            group: 'proto.rxkube.dev',
            scope: 'Namespaced',
            names: { plural: 'protos', singular: 'proto', kind: 'Proto' },
            versions: [
              {
                name: 'v1',
                served: true,
                storage: true,
                schema: {
                  openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } },
                },
              },
            ],
          },
        },
      });
      await eventually(async () => (await raw(c.server, 'GET', '/apis/proto.rxkube.dev/v1')).status === 200, 'the CRD to be served');
    });

    it('are unknown fields of a built-in kind: refused under fieldValidation=Strict, dropped otherwise (was: spec.__proto__ passed as a field Object.prototype declares, and was stored)', async () => {
      for (const [i, field] of NAMES.entries()) {
        const strict = await raw(c.server, 'POST', `${PODS}?fieldValidation=Strict`, pod(`strict-${i}`, field));
        expect(strict.status, `${field}: ${strict.text}`).to.equal(400);
        expect(message(strict)).to.contain(`unknown field "spec.${field}"`);
        const lax = await raw(c.server, 'POST', `${PODS}?fieldValidation=Warn`, pod(`lax-${i}`, field));
        expect(lax.status, `${field}: ${lax.text}`).to.equal(201);
        expect(String(lax.headers.warning)).to.contain(`unknown field \\"spec.${field}\\"`);
        const stored = await raw(c.server, 'GET', `${PODS}/lax-${i}`);
        expect(Object.keys((stored.json as Obj).spec), field).to.not.include(field);
      }
    });

    it('are unknown fields of a custom resource: refused under fieldValidation=Strict, pruned otherwise', async () => {
      const PROTOS = '/apis/proto.rxkube.dev/v1/namespaces/default/protos';
      for (const [i, field] of NAMES.entries()) {
        const body = (name: string): string =>
          `{"apiVersion":"proto.rxkube.dev/v1","kind":"Proto","metadata":{"name":"${name}"},"spec":{"size":1,"${field}":{"x":"y"}}}`;
        const strict = await raw(c.server, 'POST', `${PROTOS}?fieldValidation=Strict`, body(`strict-${i}`));
        expect(strict.status, `${field}: ${strict.text}`).to.equal(400);
        expect(message(strict)).to.contain(`unknown field "spec.${field}"`);
        const pruned = await raw(c.server, 'POST', PROTOS, body(`pruned-${i}`));
        expect(pruned.status, `${field}: ${pruned.text}`).to.equal(201);
        const stored = await raw(c.server, 'GET', `${PROTOS}/pruned-${i}`);
        expect(Object.keys((stored.json as Obj).spec), field).to.deep.equal(['size']);
      }
    });
  });

  describe("a user that holds the server's budgets", () => {
    const CMS = '/api/v1/namespaces/default/configmaps';
    let small: ApiServer;
    const sockets: Socket[] = [];

    before(async () => {
      // Unread answers are cut only after a minute: the hog holds what it takes for the whole test.
      small = await startApiServer({
        clientNode: false,
        maxPendingResponseBytes: 6 * 1024 * 1024,
        writeTimeoutMs: 60_000,
        requestQueueWaitMs: 1000,
      });
      for (let i = 0; i < 8; i++) {
        expect(
          (await raw(small, 'POST', CMS, JSON.stringify({ metadata: { name: `big-${i}` }, data: { v: 'x'.repeat(1_000_000) } }))).status,
        ).to.equal(201);
      }
    });

    after(async () => {
      for (const socket of sockets) socket.destroy();
      await small.close();
    });

    /** Asks for the 8 MB list as `token`'s user and never reads the answer. */
    const stall = (token: string): Promise<void> =>
      new Promise((resolve) => {
        const url = new URL(small.url);
        const socket = connect(Number(url.port), url.hostname, () => {
          socket.write(`GET ${CMS} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${token}\r\n\r\n`);
          socket.pause();
          resolve();
        });
        sockets.push(socket);
      });

    it("answers the probes and another user's request while one user's unread answers hold the budget (was: 429 for all of them until the answers were cut a minute later)", async () => {
      const hog = await saToken(small, 'hog', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'get'] }]);
      for (let i = 0; i < 16; i++) await stall(hog);
      // The hog's own next request waits for its share, then is refused: what it holds is not freed.
      await eventually(
        async () => (await raw(small, 'GET', `${CMS}/big-0`, undefined, { authorization: `Bearer ${hog}` })).status === 429,
        "the hog's unread answers to fill its share",
        10_000,
      );
      for (const probe of ['/healthz', '/livez', '/readyz', '/readyz?verbose']) {
        const res = await raw(small, 'GET', probe);
        expect(res.status, `${probe}: ${res.text}`).to.equal(200);
      }
      const other = await raw(small, 'GET', `${CMS}/big-1`);
      expect(other.status, other.text).to.equal(200);
    });

    it("lets a request beyond its user's share wait in that user's queue and serves it when room frees, instead of refusing it at once", async () => {
      const quick = await startApiServer({
        clientNode: false,
        maxPendingResponseBytes: 6 * 1024 * 1024,
        writeTimeoutMs: 300,
        requestQueueWaitMs: 10_000,
      });
      try {
        for (let i = 0; i < 8; i++)
          expect(
            (await raw(quick, 'POST', CMS, JSON.stringify({ metadata: { name: `big-${i}` }, data: { v: 'x'.repeat(1_000_000) } }))).status,
          ).to.equal(201);
        const url = new URL(quick.url);
        const socket = connect(Number(url.port), url.hostname, () => {
          socket.write(`GET ${CMS} HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`);
          socket.pause();
        });
        sockets.push(socket);
        await eventually(() => socket.bytesWritten > 0, 'the unread list to be asked for');
        // The same user's next list waits for the unread one to be cut (300 ms), then is answered.
        const res = await raw(quick, 'GET', CMS);
        expect(res.status, res.text.slice(0, 200)).to.equal(200);
      } finally {
        await quick.close();
      }
    });
  });

  describe('a restart after kill -9', () => {
    it('takes over the data directory of a server killed with SIGKILL whose parent has not reaped it yet (a zombie), and still refuses a second live server (was: "in use by another server" while the zombie stood)', async function () {
      const dir = await mkdtemp(join(tmpdir(), 'rxkube-zombie-'));
      const dataDir = join(dir, 'data');
      // The server runs in the background of a shell that then becomes `sleep`, which never
      // reaps it: once killed, it stays a zombie until the sleep ends.
      const fixture = new URL('./fixtures/serve-data.ts', import.meta.url).pathname;
      const parent = spawn(
        'sh',
        ['-c', '"$0" --import tsx --conditions=rxkube-source "$1" "$2" & echo "pid $!"; exec sleep 60', process.execPath, fixture, dataDir],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      try {
        let out = '';
        parent.stdout.on('data', (b: Buffer) => (out += b.toString()));
        await eventually(() => /^url /m.test(out), 'the server in the child to listen', 20_000);
        const pid = Number(/^pid (\d+)$/m.exec(out)?.[1]);
        const live = await startApiServer({ dataDir, clientNode: false }).then(
          (s) => s.close().then(() => 'started'),
          (err: Error) => err.message,
        );
        expect(live, 'a second server while the first lives').to.contain(`in use by another server (process ${pid})`);
        process.kill(pid, 'SIGKILL');
        if (process.platform === 'linux') {
          await eventually(
            async () => (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.startsWith('Z'),
            'the killed server to be a zombie',
          );
        }
        expect(() => process.kill(pid, 0), 'kill(pid, 0) still succeeds on the zombie').to.not.throw();
        const again = await startApiServer({ dataDir, clientNode: false });
        try {
          expect((await raw(again, 'GET', '/healthz')).status).to.equal(200);
          const second = await startApiServer({ dataDir, clientNode: false }).then(
            (s) => s.close().then(() => 'started'),
            (err: Error) => err.message,
          );
          expect(second).to.contain(`in use by another server (process ${process.pid}, this one)`);
        } finally {
          await again.close();
        }
      } finally {
        parent.kill('SIGKILL');
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
});
