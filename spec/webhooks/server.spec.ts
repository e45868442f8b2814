/**
 * The webhook server over real TLS, with a real client (undici) that trusts only the CA the test
 * made: reviews, 413, the review deadline, metrics, certificate rotation and graceful shutdown.
 */
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { propagation, SpanKind } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { firstValueFrom, NEVER, mergeMap, type Observable } from 'rxjs';
import { Agent, request } from 'undici';
import { ConfigurationError } from '../../lib/core/index.js';
import { createLogger } from '../../lib/observe/index.js';
import {
  admissionReviewFor,
  allow,
  conversionWebhook,
  deny,
  generateDevelopmentTls,
  mutatingWebhook,
  startWebhookServer,
  validatingWebhook,
  type AdmissionAnswer,
  type AdmissionRequest,
  type DevelopmentTls,
  type WebhookServer,
} from '../../lib/webhooks/index.js';
import { exchange } from '../fuzz/listener-fuzz.js';
import { aGreeting, greeting, v1Spoke, type Greeting, type GreetingV2 } from './fixtures.js';

const logger = createLogger({ level: 'silent' });
const validating = validatingWebhook<Greeting>({
  name: 'validate.greetings.example.com',
  resource: greeting,
  validate: (req) => {
    if (req.object?.spec.message === 'boom') throw new Error('boom');
    return req.object?.spec.message ? allow() : deny('spec.message must not be empty');
  },
});
const conversion = conversionWebhook<GreetingV2>({ group: 'example.com', plural: 'greetings', hub: 'v2', spokes: { v1: v1Spoke } });

async function post(server: WebhookServer, ca: string, path: string, body: unknown) {
  const dispatcher = new Agent({ connect: { ca } });
  try {
    const res = await request(`${server.url}${path}`, {
      method: 'POST',
      body: typeof body === 'string' ? body : JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
      dispatcher,
    });
    const text = await res.body.text();
    return { status: res.statusCode, text, json: () => JSON.parse(text) as { response: Record<string, unknown> } };
  } finally {
    await dispatcher.close();
  }
}

async function get(url: string, ca: string) {
  const dispatcher = new Agent({ connect: { ca } });
  try {
    const res = await request(url, { dispatcher });
    return { status: res.statusCode, text: await res.body.text() };
  } finally {
    await dispatcher.close();
  }
}

describe('webhooks: the HTTPS server', function () {
  this.timeout(60_000);
  let dev: DevelopmentTls;
  before(async () => {
    dev = await generateDevelopmentTls();
  });

  describe('with a certificate of its own', () => {
    let server: WebhookServer;
    let registry: Registry;
    before(async () => {
      registry = new Registry();
      server = await startWebhookServer({
        webhooks: [validating, conversion],
        tls: { development: true },
        port: 0,
        host: '127.0.0.1',
        logger,
        registry,
        maxBodyBytes: 64 * 1024,
      });
    });
    after(() => server.close());

    it('answers admission and conversion reviews over TLS that a client trusting the generated CA verifies', async () => {
      expect(server.caBundle).to.match(/BEGIN CERTIFICATE/);
      const ok = await post(
        server,
        server.caBundle!,
        validating.path,
        admissionReviewFor({ operation: 'CREATE', object: aGreeting({ message: 'hi' }), uid: 'a' }),
      );
      expect(ok.status).to.equal(200);
      expect(ok.json().response).to.deep.equal({ uid: 'a', allowed: true });
      const denied = await post(
        server,
        server.caBundle!,
        validating.path,
        admissionReviewFor({ operation: 'CREATE', object: aGreeting({}), uid: 'b' }),
      );
      expect(denied.json().response).to.deep.equal({
        uid: 'b',
        allowed: false,
        status: { code: 403, message: 'spec.message must not be empty' },
      });
      const converted = await post(server, server.caBundle!, conversion.path, {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: { uid: 'c', desiredAPIVersion: 'example.com/v2', objects: [{ ...aGreeting({}), spec: { message: 'Hello, You' } }] },
      });
      expect(converted.json().response['result']).to.deep.equal({ status: 'Success' });
    });

    it('a client that does not trust the CA is refused', async () => {
      let failed: unknown;
      await post(server, dev.ca, validating.path, {}).catch((err: unknown) => (failed = err));
      expect(String((failed as Error & { cause?: Error }).cause ?? failed)).to.match(/certificate|self.signed|verify/i);
    });

    it('a handler that throws is HTTP 500 (the API server then applies failurePolicy); a malformed review is 400', async () => {
      const broken = await post(
        server,
        server.caBundle!,
        validating.path,
        admissionReviewFor({ operation: 'CREATE', object: aGreeting({ message: 'boom' }) }),
      );
      expect(broken.status).to.equal(500);
      expect(broken.text).to.match(/webhook validate.greetings.example.com failed: boom/);
      const malformed = await post(server, server.caBundle!, validating.path, '{not json');
      expect(malformed.status).to.equal(400);
    });

    it('a request target that is no URL (GET //[ HTTP/1.1) is HTTP 400, and the server serves on', async () => {
      const url = new URL(server.url);
      for (const line of ['GET //[ HTTP/1.1', 'GET http://[ HTTP/1.1', `POST http://[::1${validating.path} HTTP/1.1`]) {
        const answers = await exchange(
          { host: url.hostname, port: Number(url.port), tls: true },
          { writes: [Buffer.from(`${line}\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n`)] },
        );
        expect(
          answers.map((a) => a.status),
          line,
        ).to.deep.equal([400]);
        expect(answers[0]?.body.toString()).to.match(/malformed request target/);
      }
      const ok = await post(
        server,
        server.caBundle!,
        validating.path,
        admissionReviewFor({ operation: 'CREATE', object: aGreeting({ message: 'hi' }), uid: 'after' }),
      );
      expect(ok.json().response).to.include({ uid: 'after', allowed: true });
    });

    it('a body over the limit is HTTP 413', async () => {
      // Small enough to fit the socket buffers: the client has sent it all when the early answer comes.
      const big = admissionReviewFor({ operation: 'CREATE', object: aGreeting({ message: 'x'.repeat(100 * 1024) }) });
      const res = await post(server, server.caBundle!, validating.path, big);
      expect(res.status).to.equal(413);
      expect(res.text).to.match(/over the limit/);
    });

    it('/healthz and /readyz answer 200; an unknown path is 404 naming the known ones', async () => {
      expect((await get(`${server.url}/healthz`, server.caBundle!)).status).to.equal(200);
      expect((await get(`${server.url}/readyz`, server.caBundle!)).status).to.equal(200);
      const missing = await post(server, server.caBundle!, '/nope', {});
      expect(missing.status).to.equal(404);
      expect(missing.text).to.include(validating.path);
    });

    it('metrics: latency by webhook and outcome, denials, errors by cause', async () => {
      const text = await registry.metrics();
      expect(text).to.match(
        /rxkube_webhook_request_duration_seconds_count\{webhook="validate.greetings.example.com",outcome="allowed"\} [1-9]/,
      );
      expect(text).to.match(/rxkube_webhook_request_duration_seconds_count\{webhook="greetings.example.com",outcome="converted"\} 1/);
      expect(text).to.match(/rxkube_webhook_denials_total\{webhook="validate.greetings.example.com"\} 1/);
      expect(text).to.match(/rxkube_webhook_errors_total\{webhook="validate.greetings.example.com",cause="handler"\} 1/);
      expect(text).to.match(/rxkube_webhook_errors_total\{webhook="validate.greetings.example.com",cause="too_large"\} 1/);
    });
  });

  it('a review nested deeper than 10,000 levels is HTTP 400 naming the limit, for that request alone: a mutating review in flight is answered', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const defaults = mutatingWebhook<Greeting>({
      name: 'default.greetings.example.com',
      resource: greeting,
      mutate: async (req) => {
        if (req.uid === 'legit') await held;
        return { object: { ...req.object!, spec: { ...req.object!.spec, replicas: 1 } } };
      },
    });
    const server = await startWebhookServer({ webhooks: [defaults], tls: dev, port: 0, host: '127.0.0.1', logger });
    try {
      const legit = post(
        server,
        dev.ca,
        defaults.path,
        admissionReviewFor({ operation: 'CREATE', object: aGreeting({ message: 'hi' }), uid: 'legit' }),
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      const depth = 50_000;
      const deep = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"deep","operation":"CREATE","object":{"metadata":{"name":"d"},"spec":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}}}`;
      const refused = await post(server, dev.ca, defaults.path, deep);
      expect(refused.status).to.equal(400);
      expect(refused.text).to.match(/nested deeper than 10000 levels/);
      release();
      const answered = await legit;
      expect(answered.status, answered.text).to.equal(200);
      expect(answered.json().response).to.include({ uid: 'legit', allowed: true, patchType: 'JSONPatch' });
    } finally {
      release();
      await server.close();
    }
  });

  it('a review its operator does not answer within requestTimeoutMs is HTTP 504', async () => {
    const silent = validatingWebhook<Greeting>({
      name: 'silent.greetings.example.com',
      resource: greeting,
      admit: (requests$: Observable<AdmissionRequest<Greeting>>): Observable<AdmissionAnswer> => requests$.pipe(mergeMap(() => NEVER)),
    });
    const server = await startWebhookServer({ webhooks: [silent], tls: dev, port: 0, host: '127.0.0.1', logger, requestTimeoutMs: 50 });
    try {
      const res = await post(server, dev.ca, silent.path, admissionReviewFor({ operation: 'CREATE', object: aGreeting({}) }));
      expect(res.status).to.equal(504);
      expect(res.text).to.match(/gave no answer within 50 ms/);
    } finally {
      await server.close();
    }
  });

  it("with tracing, each review is a server span, under the caller's span when its request carries a traceparent", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const server = await startWebhookServer({
      webhooks: [validating],
      tls: dev,
      port: 0,
      host: '127.0.0.1',
      logger,
      tracing: { tracerProvider: provider },
    });
    const dispatcher = new Agent({ connect: { ca: dev.ca } });
    try {
      const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      const body = JSON.stringify(admissionReviewFor({ operation: 'CREATE', object: aGreeting({ message: 'hi' }) }));
      const res = await request(`${server.url}${validating.path}`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', traceparent },
        dispatcher,
      });
      await res.body.text();
      const broken = await request(`${server.url}${validating.path}`, {
        method: 'POST',
        body: '{',
        headers: { 'content-type': 'application/json' },
        dispatcher,
      });
      await broken.body.text();
      const [reviewed, malformed] = exporter.getFinishedSpans();
      expect(reviewed?.kind).to.equal(SpanKind.SERVER);
      expect(reviewed?.name).to.equal(`POST ${validating.path}`);
      expect(reviewed?.attributes).to.include({
        'http.request.method': 'POST',
        'http.route': validating.path,
        'http.response.status_code': 200,
      });
      expect(reviewed?.spanContext().traceId).to.equal('0af7651916cd43dd8448eb211c80319c');
      expect(reviewed?.parentSpanContext?.spanId).to.equal('b7ad6b7169203331');
      expect(malformed?.attributes).to.include({ 'http.response.status_code': 400 });
      expect(malformed?.parentSpanContext).to.equal(undefined);
    } finally {
      propagation.disable();
      await dispatcher.close();
      await server.close();
      await provider.shutdown();
    }
  });

  it('certificate files are read again when they change: new connections get the new certificate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rxkube-webhook-tls-'));
    const write = (tls: DevelopmentTls) => {
      // As the kubelet updates a mounted Secret: new files appear whole, by rename.
      writeFileSync(join(dir, 'tls.crt.new'), tls.cert);
      writeFileSync(join(dir, 'tls.key.new'), tls.key);
      renameSync(join(dir, 'tls.key.new'), join(dir, 'tls.key'));
      renameSync(join(dir, 'tls.crt.new'), join(dir, 'tls.crt'));
    };
    write(dev);
    const registry = new Registry();
    const server = await startWebhookServer({
      webhooks: [validating],
      tls: { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') },
      port: 0,
      host: '127.0.0.1',
      logger,
      registry,
    });
    try {
      expect((await get(`${server.url}/healthz`, dev.ca)).status).to.equal(200);
      const rotated = await generateDevelopmentTls();
      const reloaded = firstValueFrom(server.tlsReloads$);
      write(rotated);
      expect(await reloaded).to.have.property('ok');
      // Watch events may come per file: the last reload has both files of the new pair.
      server.reloadTls();
      expect((await get(`${server.url}/healthz`, rotated.ca)).status).to.equal(200);
      let failed: unknown;
      await get(`${server.url}/healthz`, dev.ca).catch((err: unknown) => (failed = err));
      expect(failed, 'the old CA no longer verifies the server').to.not.equal(undefined);
      expect(await registry.metrics()).to.match(/rxkube_webhook_certificate_reloads_total\{result="ok"\} [1-9]/);
    } finally {
      await server.close();
    }
  });

  it('close() lets a review in flight finish, then stops', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let arrived!: () => void;
    const inFlight = new Promise<void>((resolve) => (arrived = resolve));
    const slow = validatingWebhook<Greeting>({
      name: 'slow.greetings.example.com',
      resource: greeting,
      validate: async () => (arrived(), await held, allow()),
    });
    const server = await startWebhookServer({ webhooks: [slow], tls: dev, port: 0, host: '127.0.0.1', logger });
    const answer = post(server, dev.ca, slow.path, admissionReviewFor({ operation: 'CREATE', object: aGreeting({}), uid: 'late' }));
    await inFlight;
    const closed = server.close();
    release();
    expect((await answer).json().response).to.deep.equal({ uid: 'late', allowed: true });
    await closed;
  });

  it('bad configuration is a ConfigurationError naming the option', async () => {
    const option = async (f: () => Promise<unknown>) => {
      try {
        await f();
      } catch (err) {
        expect(err).to.be.instanceOf(ConfigurationError);
        return (err as ConfigurationError).option;
      }
      return undefined;
    };
    expect(
      await option(() =>
        startWebhookServer({
          webhooks: [validating],
          tls: { certFile: '/nonexistent/tls.crt', keyFile: '/nonexistent/tls.key' },
          port: 0,
          logger,
        }),
      ),
    ).to.equal('tls.certFile');
    expect(await option(() => startWebhookServer({ webhooks: [], tls: dev, port: 0, logger }))).to.equal('webhooks');
    expect(await option(() => startWebhookServer({ webhooks: [validating], tls: dev, port: 70000, logger }))).to.equal('port');
    expect(await option(() => startWebhookServer({ webhooks: [validating, validating], tls: dev, port: 0, logger }))).to.equal(
      'webhooks[1].path',
    );
    expect(await option(() => startWebhookServer({ webhooks: [validating], tls: dev, port: 0, logger, maxBodyBytes: 0 }))).to.equal(
      'maxBodyBytes',
    );
    expect(
      await option(() =>
        startWebhookServer({ webhooks: [validating], tls: { cert: dev.cert, key: 'nope' } as never, port: 0, logger, timeout: 1 } as never),
      ),
    ).to.equal('timeout');
  });
});
