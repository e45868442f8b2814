// A whole operator against the embedded API server: `npx tsx docs/examples/quickstart.ts`.
import { ApiextensionsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { Operator, UpdateControl, type Reconciler } from 'rxkube';
import { startApiServer } from '@rxkube/apiserver';

interface Greeting {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  spec: { name: string };
  status?: { message?: string };
}

const server = await startApiServer();
const kubeConfig = server.kubeConfig();
await kubeConfig.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({
  body: {
    metadata: { name: 'greetings.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'greetings', singular: 'greeting', kind: 'Greeting' },
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
  },
});

const greeter: Reconciler<Greeting> = {
  reconcile(greeting) {
    const message = `Hello, ${greeting.spec.name}!`;
    return UpdateControl.patchStatus({ ...greeting, status: { message } });
  },
};

const operator = new Operator({ kubeConfig });
operator.register(greeter, { resource: { apiVersion: 'example.com/v1', kind: 'Greeting', plural: 'greetings' } });
await operator.start();

const greetings = kubeConfig.makeApiClient(CustomObjectsApi);
const where = { group: 'example.com', version: 'v1', namespace: 'default', plural: 'greetings' };
await greetings.createNamespacedCustomObject({
  ...where,
  body: { apiVersion: 'example.com/v1', kind: 'Greeting', metadata: { name: 'world' }, spec: { name: 'world' } },
});

let status: Greeting['status'];
while (!status?.message) {
  await new Promise((resolve) => setTimeout(resolve, 50));
  status = ((await greetings.getNamespacedCustomObject({ ...where, name: 'world' })) as Greeting).status;
}
console.log(status.message); // Hello, world!

await operator.stop();
await server.close();
