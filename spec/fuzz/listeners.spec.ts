/**
 * Issue 32: every listener of the toolkit under the request fuzz (listener-fuzz.ts) — the webhook
 * server (HTTPS) and the health and metrics server (HTTP). After every hostile case a good request
 * must still be answered correctly, no answer is a 5xx, and the process lives.
 *
 * RXKUBE_FUZZ_SEED=<seed> repeats a run; RXKUBE_FUZZ_COUNT and RXKUBE_FUZZ_SECONDS bound it
 * (default 250 cases or 40 s per listener).
 */
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { Agent, request } from 'undici';
import { createLogger } from '../../lib/observe/index.js';
import { startHealthServer, type HealthServer } from '../../lib/observe/index.js';
import {
  admissionReviewFor,
  allow,
  conversionWebhook,
  mutatingWebhook,
  startWebhookServer,
  validatingWebhook,
  type WebhookServer,
} from '../../lib/webhooks/index.js';
import { aGreeting, greeting, v1Spoke, type Greeting, type GreetingV2 } from '../webhooks/fixtures.js';
import { fuzzListener, fuzzSeed, type FuzzReport } from './listener-fuzz.js';

const count = Number(process.env.RXKUBE_FUZZ_COUNT ?? 250);
const seconds = Number(process.env.RXKUBE_FUZZ_SECONDS ?? 40);

function report(name: string, result: FuzzReport): void {
  console.log(
    `      ${name}: fuzz seed ${result.seed} (RXKUBE_FUZZ_SEED=${result.seed} repeats it), ${result.cases} cases ${JSON.stringify(result.byCategory)}, answers ${JSON.stringify(result.byStatus)}`,
  );
  expect(
    result.problems,
    `fuzz seed ${result.seed} (RXKUBE_FUZZ_SEED=${result.seed} repeats it):\n      ${result.problems.join('\n      ')}`,
  ).to.deep.equal([]);
}

describe('fuzz: the toolkit listeners under hostile requests (issue 32)', function () {
  this.timeout(180_000);
  const seed = fuzzSeed();

  describe('the webhook server', () => {
    let server: WebhookServer;
    let agent: Agent;
    const validating = validatingWebhook<Greeting>({ name: 'validate.greetings.example.com', resource: greeting, validate: () => allow() });
    const mutating = mutatingWebhook<Greeting>({
      name: 'default.greetings.example.com',
      resource: greeting,
      mutate: (req) => (req.object ? { object: { ...req.object, spec: { ...req.object.spec, replicas: 1 } } } : allow()),
    });
    const conversion = conversionWebhook<GreetingV2>({ group: 'example.com', plural: 'greetings', hub: 'v2', spokes: { v1: v1Spoke } });
    const good = JSON.stringify(admissionReviewFor({ operation: 'CREATE', object: aGreeting({ message: 'hi' }), uid: 'good' }));
    const conversionReview = JSON.stringify({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: {
        uid: 'c',
        desiredAPIVersion: 'example.com/v2',
        objects: [{ apiVersion: 'example.com/v1', kind: 'Greeting', metadata: { name: 'g' }, spec: { message: 'Hello, World' } }],
      },
    });

    before(async () => {
      server = await startWebhookServer({
        webhooks: [validating, mutating, conversion],
        tls: { development: true },
        port: 0,
        host: '127.0.0.1',
        logger: createLogger({ level: 'silent' }),
        registry: new Registry(),
        requestTimeoutMs: 2_000,
      });
      agent = new Agent({ connect: { ca: server.caBundle! } });
    });
    after(async () => {
      await agent?.close();
      await server?.close();
    });

    it('answers a good AdmissionReview correctly after every hostile case: request lines, headers, bodies, chunking, pipelining, TLS handshakes, clients that never read', async () => {
      const check = async (): Promise<void> => {
        const res = await request(`${server.url}${mutating.path}`, {
          method: 'POST',
          body: good,
          headers: { 'content-type': 'application/json' },
          dispatcher: agent,
          headersTimeout: 10_000,
        });
        const text = await res.body.text();
        if (res.statusCode !== 200) throw new Error(`${res.statusCode}: ${text.slice(0, 200)}`);
        const review = JSON.parse(text) as { response: { uid: string; allowed: boolean; patch?: string } };
        const patch = JSON.parse(Buffer.from(review.response.patch ?? '', 'base64').toString() || '[]') as unknown[];
        if (review.response.uid !== 'good' || !review.response.allowed || patch.length !== 1)
          throw new Error(`wrong answer: ${text.slice(0, 300)}`);
      };
      await check();
      const url = new URL(server.url);
      report(
        'webhook server',
        await fuzzListener(
          {
            host: url.hostname,
            port: Number(url.port),
            tls: true,
            paths: [validating.path, mutating.path, conversion.path, '/healthz', '/readyz'],
            bodies: [good, conversionReview],
            check,
          },
          { seed, count, seconds },
        ),
      );
    });
  });

  describe('the health and metrics server', () => {
    let server: HealthServer;
    before(async () => {
      const registry = new Registry();
      server = await startHealthServer({ port: 0, host: '127.0.0.1', registry, checks: { informers: () => ({ ok: true }) } });
    });
    after(() => server?.close());

    it('answers /readyz and /metrics correctly after every hostile case', async () => {
      const check = async (): Promise<void> => {
        const ready = await request(`${server.url}/readyz`, { headersTimeout: 10_000 });
        const text = await ready.body.text();
        if (ready.statusCode !== 200 || !text.includes('[+]informers ok'))
          throw new Error(`/readyz ${ready.statusCode}: ${text.slice(0, 200)}`);
        const metrics = await request(`${server.url}/metrics`, { headersTimeout: 10_000 });
        await metrics.body.text();
        if (metrics.statusCode !== 200) throw new Error(`/metrics ${metrics.statusCode}`);
      };
      await check();
      report(
        'health server',
        await fuzzListener(
          {
            host: '127.0.0.1',
            port: server.port,
            tls: false,
            paths: ['/healthz', '/readyz', '/livez', '/metrics'],
            bodies: ['{}', ''],
            check,
          },
          { seed, count, seconds },
        ),
      );
    });
  });
});
