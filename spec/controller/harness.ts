/** A server, a CRD and an operator per test: the controller specs' shared setup. */
import type { KubernetesObject } from '@kubernetes/client-node';
import * as k8s from '@kubernetes/client-node';
import { firstValueFrom, filter, timeout, type Observable } from 'rxjs';
import { startApiServer, type ApiServer } from '../../lib/apiserver/index.js';
import { createLogger } from '../../lib/observe/index.js';
import { Operator, type OperatorOptions } from '../../lib/controller/index.js';

export interface Widget extends KubernetesObject {
  spec?: { value?: string; replicas?: number };
  status?: Record<string, unknown>;
}

export const WIDGET = { apiVersion: 'sample.rxkube.dev/v1', kind: 'Widget', plural: 'widgets', namespaced: true } as const;

export const widgetCrd: k8s.V1CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.sample.rxkube.dev' },
  spec: {
    group: 'sample.rxkube.dev',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
      },
    ],
  },
};

export interface Env {
  server: ApiServer;
  kc: k8s.KubeConfig;
  custom: k8s.CustomObjectsApi;
  core: k8s.CoreV1Api;
  operator(options?: Omit<OperatorOptions, 'kubeConfig'>): Operator;
  close(): Promise<void>;
}

export async function startEnv(): Promise<Env> {
  const server = await startApiServer();
  const kc = server.kubeConfig();
  await kc.makeApiClient(k8s.ApiextensionsV1Api).createCustomResourceDefinition({ body: widgetCrd });
  const operators: Operator[] = [];
  return {
    server,
    kc,
    custom: kc.makeApiClient(k8s.CustomObjectsApi),
    core: kc.makeApiClient(k8s.CoreV1Api),
    operator(options = {}) {
      const op = new Operator({ kubeConfig: kc, logger: createLogger({ level: 'silent' }), ...options });
      operators.push(op);
      return op;
    },
    async close() {
      await Promise.all(operators.map((op) => op.stop()));
      await server.close();
    },
  };
}

export function widget(name: string, spec: Widget['spec'] = { value: 'a' }, namespace = 'default'): Widget {
  return { apiVersion: WIDGET.apiVersion, kind: WIDGET.kind, metadata: { name, namespace }, spec };
}

export async function createWidget(env: Env, w: Widget): Promise<Widget> {
  return (await env.custom.createNamespacedCustomObject({
    group: 'sample.rxkube.dev',
    version: 'v1',
    namespace: w.metadata?.namespace ?? 'default',
    plural: 'widgets',
    body: w,
  })) as Widget;
}

export async function getWidget(env: Env, name: string, namespace = 'default'): Promise<Widget | undefined> {
  try {
    return (await env.custom.getNamespacedCustomObject({ group: 'sample.rxkube.dev', version: 'v1', namespace, plural: 'widgets', name })) as Widget;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

export async function patchWidget(env: Env, name: string, patch: object, namespace = 'default'): Promise<Widget> {
  return (await env.custom.patchNamespacedCustomObject(
    { group: 'sample.rxkube.dev', version: 'v1', namespace, plural: 'widgets', name, body: patch },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  )) as Widget;
}

export async function deleteWidget(env: Env, name: string, namespace = 'default'): Promise<void> {
  await env.custom.deleteNamespacedCustomObject({ group: 'sample.rxkube.dev', version: 'v1', namespace, plural: 'widgets', name });
}

/** Polls until `check` returns a value (not undefined/false), or fails after `ms` with `what`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function next<T>(source: Observable<T>, predicate: (v: T) => boolean, ms = 5000): Promise<T> {
  return firstValueFrom(source.pipe(filter(predicate), timeout(ms)));
}
