/** The webhook server's Prometheus metrics, one series per webhook. */
import { createRequire } from 'node:module';
import type { Counter, Histogram, Registry } from 'prom-client';

/** The webhook server's metrics; labels name the webhook, never the object (one series per webhook). */
export interface WebhookMetrics {
  readonly latency: Histogram<'webhook' | 'outcome'>;
  readonly denials: Counter<'webhook'>;
  readonly errors: Counter<'webhook' | 'cause'>;
  readonly reloads: Counter<'result'>;
}

const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Registers (or reuses, for a second server on the same registry) the webhook metrics. */
export function webhookMetrics(registry: Registry): WebhookMetrics {
  const { Counter, Histogram } = createRequire(import.meta.url)('prom-client') as typeof import('prom-client');
  const reuse = <M>(name: string, create: () => M): M => (registry.getSingleMetric(name) as M | undefined) ?? create();
  return {
    latency: reuse(
      'rxkube_webhook_request_duration_seconds',
      () =>
        new Histogram({
          name: 'rxkube_webhook_request_duration_seconds',
          help: 'Time to answer one review, by webhook and outcome (allowed, denied, patched, converted, failed, error)',
          labelNames: ['webhook', 'outcome'] as const,
          buckets: BUCKETS,
          registers: [registry],
        }),
    ),
    denials: reuse(
      'rxkube_webhook_denials_total',
      () =>
        new Counter({
          name: 'rxkube_webhook_denials_total',
          help: 'Admission requests denied, by webhook',
          labelNames: ['webhook'] as const,
          registers: [registry],
        }),
    ),
    errors: reuse(
      'rxkube_webhook_errors_total',
      () =>
        new Counter({
          name: 'rxkube_webhook_errors_total',
          help: 'Reviews answered with an error, by webhook and cause (handler, timeout, malformed, too_large, conversion)',
          labelNames: ['webhook', 'cause'] as const,
          registers: [registry],
        }),
    ),
    reloads: reuse(
      'rxkube_webhook_certificate_reloads_total',
      () =>
        new Counter({
          name: 'rxkube_webhook_certificate_reloads_total',
          help: 'Reloads of the certificate files, by result (ok, failed)',
          labelNames: ['result'] as const,
          registers: [registry],
        }),
    ),
  };
}
