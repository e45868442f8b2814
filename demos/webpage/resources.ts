/** The desired secondaries of a WebPage: pure functions of the primary, shared by every variant. */
import type { V1ConfigMap, V1Deployment, V1Ingress, V1Service } from '@kubernetes/client-node';
import { statusCondition, type StatusCondition } from '../../lib/index.js';
import { MANAGED_BY, type WebPage, type WebPageStatus } from './model.js';

export class InvalidHtmlError extends Error {
  override readonly name = 'InvalidHtmlError';
}

/** Names of the secondaries: `<page>-html` for the ConfigMap, `<page>` for the rest. */
export const configMapName = (page: WebPage): string => `${page.metadata?.name}-html`;
export const appName = (page: WebPage): string => `${page.metadata?.name}`;

const TAG = /<\/?([a-zA-Z][a-zA-Z0-9-]*)[^>]*?(\/?)>/g;
const VOID_ELEMENTS = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr']);

/** Throws InvalidHtmlError naming the first problem: not a string, no <html> root, or unbalanced tags. */
export function validateHtml(html: unknown): string {
  if (typeof html !== 'string' || html.trim() === '') throw new InvalidHtmlError('spec.html must be a non-empty string');
  if (!/<html[\s>]/i.test(html)) throw new InvalidHtmlError('spec.html has no <html> element');
  const open: string[] = [];
  for (const match of html.matchAll(TAG)) {
    const [tag, rawName, selfClosing] = match;
    const name = (rawName ?? '').toLowerCase();
    if (VOID_ELEMENTS.has(name) || selfClosing === '/') continue;
    if (!tag.startsWith('</')) {
      open.push(name);
      continue;
    }
    const expected = open.pop();
    if (expected !== name) {
      throw new InvalidHtmlError(`spec.html: </${name}> closes ${expected ? `<${expected}>` : 'nothing'}`);
    }
  }
  if (open.length > 0) throw new InvalidHtmlError(`spec.html: <${open[open.length - 1]}> is never closed`);
  return html;
}

function metadata(page: WebPage, name: string) {
  return { name, namespace: page.metadata?.namespace, labels: { ...MANAGED_BY, app: appName(page) } };
}

export function desiredConfigMap(page: WebPage): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: metadata(page, configMapName(page)),
    data: { 'index.html': validateHtml(page.spec?.html) },
  };
}

export function desiredDeployment(page: WebPage): V1Deployment {
  const app = appName(page);
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: metadata(page, app),
    spec: {
      replicas: 1,
      selector: { matchLabels: { app } },
      template: {
        metadata: { labels: { app } },
        spec: {
          containers: [
            {
              name: 'nginx',
              image: 'nginx:1.27',
              ports: [{ containerPort: 80 }],
              volumeMounts: [{ name: 'html', mountPath: '/usr/share/nginx/html' }],
            },
          ],
          volumes: [{ name: 'html', configMap: { name: configMapName(page) } }],
        },
      },
    },
  };
}

export function desiredService(page: WebPage): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadata(page, appName(page)),
    spec: { selector: { app: appName(page) }, ports: [{ port: 80, targetPort: 80 }] },
  };
}

export function desiredIngress(page: WebPage): V1Ingress {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: metadata(page, appName(page)),
    spec: {
      rules: [
        {
          http: {
            paths: [{ path: `/${appName(page)}`, pathType: 'Prefix', backend: { service: { name: appName(page), port: { number: 80 } } } }],
          },
        },
      ],
    },
  };
}

/** The status of a page whose secondaries are written; `ready` is its `Ready` condition. */
export function statusOf(page: WebPage, ready: StatusCondition): WebPageStatus {
  return { htmlConfigMap: configMapName(page), ready: ready.status === 'True', conditions: [ready] };
}

/** `Ready` from the nginx Deployment's readiness. */
export function deploymentReadyCondition(page: WebPage, ready: boolean): StatusCondition {
  return ready
    ? statusCondition(page, { type: 'Ready', status: true, reason: 'DeploymentReady', message: 'the nginx Deployment is available' })
    : statusCondition(page, { type: 'Ready', status: false, reason: 'DeploymentNotReady', message: 'waiting for the nginx Deployment' });
}

export function errorStatus(page: WebPage, error: unknown): WebPageStatus {
  const message = error instanceof Error ? error.message : String(error);
  return {
    ready: false,
    errorMessage: message,
    conditions: [statusCondition(page, { type: 'Ready', status: false, reason: 'ReconcileFailed', message })],
  };
}

/** The InvalidHtmlError behind `error`, also when a workflow aggregated it with others. */
export function invalidHtml(error: unknown): InvalidHtmlError | undefined {
  if (error instanceof InvalidHtmlError) return error;
  if (error instanceof AggregateError) return error.errors.map(invalidHtml).find((e) => e !== undefined);
  return undefined;
}
