/**
 * Webhooks for a Greeting with two versions: a validating and a mutating webhook, a conversion
 * between v1 and v2, their checks, and the server answering a review over TLS.
 * Run: npx tsx docs/examples/webhooks.ts
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  admissionReviewFor,
  allow,
  checkRoundTrip,
  conversionWebhook,
  deny,
  mountedCertificate,
  mutatingWebhook,
  reviewAdmission,
  spoke,
  startWebhookServer,
  validatingWebhook,
} from 'rxkube/webhooks';
import type { WebhookTls } from 'rxkube';

interface GreetingV1 extends KubernetesObject {
  spec: { message: string };
}
interface GreetingV2 extends KubernetesObject {
  spec: { greeting: string; name: string; replicas?: number };
}
const greetingV2 = { apiVersion: 'example.com/v2', kind: 'Greeting', plural: 'greetings' };

// A validating webhook: refuse what the schema cannot say.
export const validateGreeting = validatingWebhook<GreetingV2>({
  name: 'validate.greetings.example.com',
  resource: greetingV2,
  validate: (req) => {
    if (req.object?.spec.name === '') return deny('spec.name must not be empty', { code: 422, reason: 'Invalid' });
    if (req.operation === 'UPDATE' && req.oldObject?.spec.greeting !== req.object?.spec.greeting) {
      return allow([`${req.userInfo.username} changed the greeting`]);
    }
    return allow();
  },
});

// A mutating webhook: change the object, rxkube sends the JSONPatch.
export const defaultGreeting = mutatingWebhook<GreetingV2>({
  name: 'default.greetings.example.com',
  resource: greetingV2,
  mutate: (req) => {
    const greeting = req.object as GreetingV2;
    greeting.spec.replicas ??= 1;
    return allow();
  },
});

// A conversion webhook: v2 is the hub, v1 converts to it and back.
export const convertGreeting = conversionWebhook<GreetingV2>({
  group: 'example.com',
  plural: 'greetings',
  hub: 'v2',
  spokes: {
    v1: spoke<GreetingV1, GreetingV2>({
      toHub: (v1) => {
        const [greeting = '', name = ''] = v1.spec.message.split(', ');
        return { ...v1, spec: { greeting, name } };
      },
      fromHub: (v2) => ({ ...v2, spec: { message: `${v2.spec.greeting}, ${v2.spec.name}` } }),
    }),
  },
});

export const webhooks = [validateGreeting, defaultGreeting, convertGreeting];

// In tests: a review as the API server sends it, and the round trip of your examples.
export async function checkWebhooks(): Promise<void> {
  const object: GreetingV2 = {
    apiVersion: 'example.com/v2',
    kind: 'Greeting',
    metadata: { name: 'hello' },
    spec: { greeting: 'Hello', name: '' },
  };
  const review = await reviewAdmission(validateGreeting, admissionReviewFor({ operation: 'CREATE', object }));
  if (review.response.allowed) throw new Error('an empty name must be denied');
  const v1: GreetingV1 = { apiVersion: 'example.com/v1', kind: 'Greeting', metadata: { name: 'hello' }, spec: { message: 'Hello, World' } };
  checkRoundTrip(convertGreeting, [v1]);
}

// In the pod, the certificate cert-manager writes; on a laptop, one made at start.
export const tls: WebhookTls = process.env['KUBERNETES_SERVICE_HOST'] ? mountedCertificate() : { development: true };

if (import.meta.url === `file://${process.argv[1]}`) {
  await checkWebhooks();
  const server = await startWebhookServer({ webhooks, tls: { development: true }, port: 0, host: '127.0.0.1' });
  console.log(`webhooks on ${server.url}: ${webhooks.map((w) => w.path).join(', ')}`);
  await server.close();
}
