import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { RXKUBE_VERSION, rxkubeUserAgent } from '../../lib/kube/user-agent.js';

describe('kube: the user agent of rxkube requests', () => {
  it('names the version package.json states, and the operator when given', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(RXKUBE_VERSION).to.equal(pkg.version);
    expect(rxkubeUserAgent()).to.equal(`rxkube/${pkg.version}`);
    expect(rxkubeUserAgent('webpage-operator')).to.equal(`rxkube/${pkg.version} (webpage-operator)`);
  });
});
