import { expect } from 'chai';
import { ConfigurationError, NoRetryError, RxkubeError, describeError, resourceIdOf, resourceKey } from '../../lib/core/index.js';

describe('core', () => {
  it('resourceKey is namespace/name, or name when cluster-scoped', () => {
    expect(resourceKey({ name: 'web', namespace: 'prod' })).to.equal('prod/web');
    expect(resourceKey({ name: 'node-1' })).to.equal('node-1');
  });

  it('resourceIdOf reads metadata.name and metadata.namespace', () => {
    expect(resourceIdOf({ metadata: { name: 'web', namespace: 'prod', uid: 'u' } })).to.deep.equal({ name: 'web', namespace: 'prod' });
    expect(resourceIdOf({ metadata: { name: 'node-1' } })).to.deep.equal({ name: 'node-1' });
  });

  it('resourceIdOf rejects objects without a name, saying so', () => {
    expect(() => resourceIdOf({ spec: {} })).to.throw(TypeError, /metadata\.name.*spec/);
    expect(() => resourceIdOf(null)).to.throw(TypeError, /metadata\.name/);
    expect(() => resourceIdOf({ metadata: { name: 'a', namespace: 3 } })).to.throw(TypeError, /namespace of a/);
  });

  it('errors: ConfigurationError names the option; NoRetryError carries its cause', () => {
    const config = new ConfigurationError('maxConcurrency', 'must be a positive integer, got -1');
    expect(config).to.be.instanceOf(RxkubeError);
    expect(config.name).to.equal('ConfigurationError');
    expect(config.message).to.equal('maxConcurrency: must be a positive integer, got -1');
    const cause = new Error('bad spec');
    const noRetry = new NoRetryError(cause);
    expect(noRetry.cause).to.equal(cause);
    expect(noRetry.message).to.equal('not retried: Error: bad spec');
    expect(describeError('plain')).to.equal('plain');
  });
});
