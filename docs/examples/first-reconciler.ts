// Your first reconciler (docs/getting-started.md):
//   npx tsx docs/examples/first-reconciler.ts                      # embedded API server
//   npx tsx docs/examples/first-reconciler.ts --kubeconfig FILE    # a real cluster
import type { KubeConfig, KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import { Operator, UpdateControl, type Reconciler } from 'rxkube';
import {
  builtinResources,
  createKubeClient,
  customResourceDefinition,
  descriptorOf,
  installCustomResourceDefinition,
  loadKubeConfig,
} from 'rxkube/kube';
import { startApiServer } from '@rxkube/apiserver';

// Step 1: the custom resource. A Note's text is copied into a ConfigMap it owns.
export interface Note extends KubernetesObject {
  spec: { text: string };
  status?: { configMap?: string; length?: number };
}

export const noteCrd = customResourceDefinition({
  group: 'example.com',
  kind: 'Note',
  plural: 'notes',
  spec: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
  status: { type: 'object', properties: { configMap: { type: 'string' }, length: { type: 'integer' } } },
});

export const NOTE = descriptorOf(noteCrd); // { apiVersion: 'example.com/v1', kind: 'Note', plural: 'notes', namespaced: true }
export const CONFIGMAP = builtinResources.configMap;

// Step 2: the reconciler. It makes the world match the Note, then reports in the status.
export const notes: Reconciler<Note> = {
  async reconcile(note, ctx) {
    const name = `${note.metadata!.name}-note`;
    await ctx.secondaryClient<V1ConfigMap & KubernetesObject>('configmaps').apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name,
        namespace: note.metadata!.namespace!,
        ownerReferences: [
          { apiVersion: NOTE.apiVersion, kind: NOTE.kind, name: note.metadata!.name!, uid: note.metadata!.uid!, controller: true },
        ],
      },
      data: { text: note.spec.text },
    });
    ctx.logger.info({ configMap: name }, 'note written');
    return UpdateControl.patchStatus({ ...note, status: { configMap: name, length: note.spec.text.length } });
  },
};

// Step 3: register it with an operator and start.
export async function runNotes(kubeConfig: KubeConfig): Promise<Operator> {
  const operator = new Operator({ kubeConfig });
  operator.register(notes, {
    resource: NOTE,
    // ConfigMaps owned by a Note trigger that Note; the reconciler applies them (writes: its RBAC)
    secondaries: [{ resource: CONFIGMAP, writes: ['apply'] }],
  });
  await operator.start(); // resolves once the caches have synced
  return operator;
}

// The rest drives it: connect, install the CRD, create a Note, wait for its status.
async function connect(): Promise<{ kubeConfig: KubeConfig; close(): Promise<void> }> {
  const flag = process.argv.indexOf('--kubeconfig');
  if (flag > 0) {
    const kubeConfig = loadKubeConfig({ kubeconfigPath: process.argv[flag + 1] });
    return { kubeConfig, close: async () => undefined };
  }
  const server = await startApiServer();
  return { kubeConfig: server.kubeConfig(), close: () => server.close() };
}

async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not done within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const cluster = await connect();
const client = createKubeClient(cluster.kubeConfig);
await installCustomResourceDefinition(client, noteCrd); // waits until the server serves Notes
const operator = await runNotes(cluster.kubeConfig);

const noteClient = client.resource<Note>(NOTE);
const ref = { name: 'hello', namespace: 'default' };
await noteClient.apply(
  { apiVersion: NOTE.apiVersion, kind: NOTE.kind, metadata: ref, spec: { text: 'Hello from rxkube' } },
  { fieldManager: 'first-reconciler-example', force: true },
);
await until(async () => (await noteClient.get(ref)).status?.length !== undefined);
const note = await noteClient.get(ref);
const configMap = await client
  .resource<V1ConfigMap & KubernetesObject>(CONFIGMAP)
  .get({ name: note.status!.configMap!, namespace: 'default' });
console.log(`note/${note.metadata!.name}: status ${JSON.stringify(note.status)}, configmap data ${JSON.stringify(configMap.data)}`);

await noteClient.delete(ref);
await operator.stop();
await cluster.close();
