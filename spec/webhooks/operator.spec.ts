import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { Agent, request } from 'undici';
import { ConfigurationError, createLogger, Operator } from '../../lib/index.js';
import { allow, generateDevelopmentTls, validatingWebhook } from '../../lib/webhooks/index.js';
import { greeting, type Greeting } from './fixtures.js';

function offlineKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u', namespace: 'default' }],
    currentContext: 'c',
  });
  return kc;
}

const webhook = validatingWebhook<Greeting>({ name: 'validate.greetings.example.com', resource: greeting, validate: () => allow() });

describe('webhooks: with the Operator', () => {
  it('the operator starts the webhook server with itself and stops it when it stops', async () => {
    const tls = await generateDevelopmentTls();
    const operator = new Operator({
      kubeConfig: offlineKubeConfig(),
      logger: createLogger({ level: 'silent' }),
      webhooks: { webhooks: [webhook], tls, port: 0, host: '127.0.0.1' },
    });
    expect(operator.webhooksUrl).to.equal(undefined);
    await operator.start();
    const url = operator.webhooksUrl;
    expect(url).to.match(/^https:\/\/127\.0\.0\.1:\d+$/);
    const dispatcher = new Agent({ connect: { ca: tls.ca } });
    try {
      const res = await request(`${url}/readyz`, { dispatcher });
      expect(res.statusCode).to.equal(200);
      await res.body.text();
      await operator.stop();
      expect(operator.webhooksUrl).to.equal(undefined);
      let failed: unknown;
      await request(`${url}/healthz`, { dispatcher }).catch((err: unknown) => (failed = err));
      expect(failed, 'nothing listens once the operator stopped').to.not.equal(undefined);
    } finally {
      await dispatcher.close();
    }
  });

  it('bad webhook options fail the Operator constructor with a ConfigurationError naming webhooks.<option>', () => {
    let failed: unknown;
    try {
      new Operator({ kubeConfig: offlineKubeConfig(), webhooks: { webhooks: [webhook], tls: undefined as never } });
    } catch (err) {
      failed = err;
    }
    expect(failed).to.be.instanceOf(ConfigurationError);
    expect((failed as ConfigurationError).option).to.equal('webhooks.tls');
  });
});
