import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { createLogger } from '../../lib/index.js';
import { builtinResources } from '../../lib/kube/index.js';
import { Operator, operatorFacts } from '../../lib/operator/index.js';

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

// What the deployment artifacts (lib/deploy) read from a configured Operator, through a plain accessor.
describe('operatorFacts', () => {
  it('gives the options, the controllers as registered and the sharded controllers’ lease namespaces', () => {
    const options = { kubeConfig: offlineKubeConfig(), logger: createLogger({ level: 'silent' }) };
    const operator = new Operator(options);
    operator.register({ reconcile: () => undefined }, { resource: builtinResources.configMap, name: 'plain' });
    operator.register(
      { reconcile: () => undefined },
      { resource: builtinResources.secret, name: 'sharded', sharding: { namespace: 'leases' } },
    );
    const facts = operatorFacts(operator);
    expect(facts.options).to.equal(options);
    expect(facts.controllers.map((c) => c.name)).to.deep.equal(['plain', 'sharded']);
    expect(facts.shardNamespaces).to.deep.equal(['leases']);
  });

  it('refuses what is not an Operator', () => {
    expect(() => operatorFacts({} as Operator)).to.throw(TypeError, 'operatorFacts: not an Operator');
  });
});
