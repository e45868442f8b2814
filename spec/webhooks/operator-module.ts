/** An operator module with webhooks, as `rxkube manifests --module` reads one (used by the specs). */
import { Type } from 'typebox';
import type { Operator, OperatorOptions } from '../../lib/index.js';
import { defineResource } from '../../lib/kube/index.js';
import { allow, conversionWebhook, deny, mountedCertificate, mutatingWebhook, validatingWebhook } from '../../lib/webhooks/index.js';
import { v1Spoke, type GreetingV1, type GreetingV2 } from './fixtures.js';

export const Greeting = defineResource({
  group: 'example.com',
  kind: 'Greeting',
  plural: 'greetings',
  versions: {
    v1: { spec: Type.Object({ message: Type.String() }) },
    v2: { spec: Type.Object({ greeting: Type.String(), name: Type.String(), replicas: Type.Optional(Type.Integer()) }), storage: true },
  },
});

export const webhooks = [
  validatingWebhook<GreetingV2>({
    name: 'validate.greetings.example.com',
    resource: Greeting.descriptor,
    validate: (req) => (req.object?.spec.greeting ? allow() : deny('spec.greeting must not be empty')),
  }),
  mutatingWebhook<GreetingV2>({
    name: 'default.greetings.example.com',
    resource: Greeting.descriptor,
    mutate: (req) => ({ object: { ...(req.object as GreetingV2), spec: { replicas: 1, ...req.object?.spec } as GreetingV2['spec'] } }),
  }),
  conversionWebhook<GreetingV2>({ group: 'example.com', plural: 'greetings', hub: 'v2', spokes: { v1: v1Spoke } }),
];

export const crds = [Greeting.crd];

export const operatorOptions: OperatorOptions = { webhooks: { webhooks, tls: mountedCertificate() } };

export function register(operator: Operator): void {
  operator.register({ reconcile: async () => undefined }, { resource: Greeting.descriptor });
}

export type { GreetingV1 };
