import type { KubernetesObject } from '@kubernetes/client-node';
import { spoke } from '../../lib/webhooks/index.js';

export interface Greeting extends KubernetesObject {
  spec: { message?: string; replicas?: number; tags?: string[] };
}

export const greeting = { apiVersion: 'example.com/v1', kind: 'Greeting', plural: 'greetings', namespaced: true } as const;

export function aGreeting(spec: Greeting['spec'], name = 'hello'): Greeting {
  return { apiVersion: 'example.com/v1', kind: 'Greeting', metadata: { name, namespace: 'default', uid: 'u-1' }, spec };
}

/** v1 has one `message`; v2 (the hub) splits it into `greeting` and `name` ("Hello, World"). */
export interface GreetingV1 extends KubernetesObject {
  spec: { message: string };
}
export interface GreetingV2 extends KubernetesObject {
  spec: { greeting: string; name: string };
}

export const v1Spoke = spoke<GreetingV1, GreetingV2>({
  toHub: (v1) => {
    const [greeting = '', name = ''] = v1.spec.message.split(', ');
    return { ...v1, spec: { greeting, name } };
  },
  fromHub: (v2) => ({ ...v2, spec: { message: v2.spec.name === '' ? v2.spec.greeting : `${v2.spec.greeting}, ${v2.spec.name}` } }),
});
