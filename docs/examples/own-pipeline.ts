// A controller assembled from exported operators only, the same parts a registered controller
// is made of (docs/reconciler.md): `npx tsx docs/examples/own-pipeline.ts`.
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import { filter, firstValueFrom, type Observable } from 'rxjs';
import { DeleteControl, UpdateControl, type Reconciler, type ResourceEvent } from 'rxkube';
import { controllerEvents, informer, primaries, reconcileEach, reconcilerRun, secondarySource } from 'rxkube/pipeline';
import { builtinResources, createKubeClient, customResourceDefinition, descriptorOf, installCustomResourceDefinition } from 'rxkube/kube';
import { startApiServer } from '@rxkube/apiserver';

interface Greeting extends KubernetesObject {
  spec: { name: string };
  status?: { message?: string };
}
type ConfigMap = V1ConfigMap & KubernetesObject;

const server = await startApiServer();
const kubeConfig = server.kubeConfig();
const client = createKubeClient(kubeConfig);
const crd = customResourceDefinition({ group: 'example.com', kind: 'Greeting', plural: 'greetings' });
await installCustomResourceDefinition(client, crd);
const GREETING = descriptorOf(crd);
const FINALIZER = 'greetings.example.com/finalizer';

// The event side: the primaries (their informer, read-your-writes in front of it, the finalizer
// the run keeps on them) give their changes as ResourceEvent triggers, generation-aware; controllerEvents
// merges them with the ConfigMaps' triggers. The same primaries go to the run and the scheduler.
const greetings = informer<Greeting>({ resource: GREETING, kubeConfig, namespaces: ['default'] });
const greetingPrimaries = primaries(greetings, { name: 'greetings', finalizerName: FINALIZER });
const configMaps = secondarySource<ConfigMap, Greeting>({
  informer: informer<ConfigMap>({ resource: builtinResources.configMap, kubeConfig, namespaces: ['default'] }),
  primary: GREETING, // owner references to a Greeting map a ConfigMap to it
});
const events$: Observable<ResourceEvent> = controllerEvents(greetingPrimaries, { sources: [configMaps.events$] });

// The run side: the finalizer, cleanup, the status patch and the Context with
// its secondary sources, exactly as a registered controller runs its reconciler.
const greeter: Reconciler<Greeting> = {
  async reconcile(greeting, ctx) {
    const message = `Hello, ${greeting.spec.name}!`;
    const { name, namespace, uid } = greeting.metadata!;
    const owner = { apiVersion: GREETING.apiVersion, kind: GREETING.kind, name: name!, uid: uid!, controller: true };
    await ctx.secondaryClient<ConfigMap>('configmaps').apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `${name}-greeting`, namespace: namespace!, ownerReferences: [owner] },
      data: { message },
    });
    ctx.logger.info({ configMaps: ctx.getSecondaryResources('configmaps').length }, 'greeted');
    return UpdateControl.patchStatus({ ...greeting, status: { message } });
  },
  cleanup(greeting) {
    console.log(`goodbye, ${greeting.spec.name}`);
    return DeleteControl.defaultDelete();
  },
};
const run = reconcilerRun(greeter, {
  resource: GREETING,
  name: 'greetings',
  client,
  primaries: greetingPrimaries,
  secondaries: [configMaps],
});

// The scheduling core: one run per greeting at a time, events during a run coalesced,
// retries; a run is due only while its primary is in the cache.
const outcomes$ = events$.pipe(reconcileEach(run, { primaries: greetingPrimaries }));
const subscription = outcomes$.subscribe((outcome) => console.log(`run of ${outcome.id.name}: ${outcome.result}`));
greetings.start();
configMaps.informer.start();
await Promise.all([greetings.whenSynced(), configMaps.informer.whenSynced()]);

const greetingsApi = client.resource<Greeting>(GREETING);
await greetingsApi.create({
  apiVersion: GREETING.apiVersion,
  kind: GREETING.kind,
  metadata: { name: 'world', namespace: 'default' },
  spec: { name: 'world' },
});
const greeted = await firstValueFrom(greetings.events$.pipe(filter((e) => e.object.status?.message !== undefined)));
console.log(greeted.object.status?.message); // Hello, world!
console.log(`finalizers: ${greeted.object.metadata?.finalizers?.join(', ')}`);

await greetingsApi.delete({ name: 'world', namespace: 'default' });
await firstValueFrom(greetings.events$.pipe(filter((e) => e.type === 'deleted')));
console.log('world is gone');

subscription.unsubscribe();
greetings.stop();
configMaps.informer.stop();
await server.close();
