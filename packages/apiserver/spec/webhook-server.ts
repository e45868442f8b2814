/**
 * An HTTPS webhook server for the admission specs: each path answers with its handler (an
 * AdmissionReview, a ConversionReview, raw text or no answer), and every review it got is kept.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import * as k8s from '@kubernetes/client-node';
import { generateServingTls, type GeneratedTls } from '../src/http/tls.js';
import { startWithClients, type Clients } from './helpers.js';

export type Review = { request: Record<string, unknown> & { uid: string; object?: Record<string, any>; oldObject?: Record<string, any> } };
export type Answer = Record<string, unknown> | 'hang' | { raw: string };
/** A handler may take its time (a promise): the answer goes out when it settles. */
export type Handler = (review: Review) => Answer | Promise<Answer>;

export const b64 = (s: string): string => Buffer.from(s).toString('base64');
export const allow = (r: Review, extra: Record<string, unknown> = {}): Answer => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  response: { uid: r.request.uid, allowed: true, ...extra },
});
export const deny = (r: Review, message: string, code?: number): Answer => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  response: { uid: r.request.uid, allowed: false, status: { message, ...(code ? { code } : {}) } },
});
export const patch = (r: Review, ops: unknown[], extra: Record<string, unknown> = {}): Answer =>
  allow(r, { patchType: 'JSONPatch', patch: b64(JSON.stringify(ops)), ...extra });

/** An HTTPS webhook server: each path answers with its handler; every review it got is kept. */
export class WebhookServer {
  readonly reviews: { path: string; review: Review }[] = [];
  readonly handlers = new Map<string, Handler>();
  private readonly hanging = new Set<import('node:http').ServerResponse>();
  private constructor(
    readonly server: Server,
    readonly tls: GeneratedTls,
  ) {}

  static async start(tls: GeneratedTls): Promise<WebhookServer> {
    const server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = new URL(req.url ?? '/', 'https://x').pathname;
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Review;
        self.reviews.push({ path, review });
        void Promise.resolve((self.handlers.get(path) ?? allow)(review)).then((answer) => {
          if (answer === 'hang') {
            self.hanging.add(res);
            return;
          }
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('raw' in answer && typeof answer.raw === 'string' ? answer.raw : JSON.stringify(answer));
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const self = new WebhookServer(server, tls);
    return self;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(path: string): string {
    return `https://127.0.0.1:${this.port}${path}`;
  }

  calls(path: string): Review[] {
    return this.reviews.filter((r) => r.path === path).map((r) => r.review);
  }

  close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

/** What a describe block of admission tests shares: a webhook server, a cluster, the admission API and the configurations to delete. */
export interface AdmissionFixture {
  hooks: WebhookServer;
  c: Clients;
  admission: k8s.AdmissionregistrationV1Api;
  caBundle: string;
  /** Configurations a test made: deleted after it. */
  readonly created: { kind: 'validating' | 'mutating'; name: string }[];
}

/** Registers the hooks that start and stop an `AdmissionFixture` for the describe block, and clear what a test configured. */
export function useAdmissionFixture(): AdmissionFixture {
  const fixture = { created: [] } as unknown as AdmissionFixture;
  before(async () => {
    const tls = await generateServingTls({ dns: ['localhost'], ips: ['127.0.0.1'] });
    fixture.caBundle = b64(tls.ca);
    fixture.hooks = await WebhookServer.start(tls);
    fixture.c = await startWithClients();
    fixture.admission = fixture.c.kc.makeApiClient(k8s.AdmissionregistrationV1Api);
  });
  after(async () => {
    await fixture.c.server.close();
    await fixture.hooks.close();
  });
  afterEach(async () => {
    for (const { kind, name } of fixture.created.splice(0)) {
      if (kind === 'validating') await fixture.admission.deleteValidatingWebhookConfiguration({ name });
      else await fixture.admission.deleteMutatingWebhookConfiguration({ name });
    }
    fixture.hooks.handlers.clear();
    fixture.hooks.reviews.splice(0);
  });
  return fixture;
}
