import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { ConfigurationError } from '../../lib/core/index.js';
import { LEADER_ELECTION_DEFAULTS } from '../../lib/leader/index.js';
import { leaderElectionConfig } from '../../lib/leader/elector.js';

describe('leader/config', () => {
  const kubeConfig = new KubeConfig();
  const base = { kubeConfig, leaseName: 'op', leaseNamespace: 'default' };

  it('OB4: defaults to a 15 s lease, 10 s renew deadline and 2 s retry period', () => {
    const config = leaderElectionConfig(base);
    expect(LEADER_ELECTION_DEFAULTS).to.deep.equal({ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 });
    expect(config).to.include({ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, releaseOnStop: true });
    expect(config.identity).to.be.a('string').and.not.equal('');
    expect(leaderElectionConfig(base).identity).to.not.equal(config.identity);
  });

  it('OB4: rejects a renew deadline that is not below the lease duration', () => {
    expect(() => leaderElectionConfig({ ...base, leaseDurationMs: 10_000, renewDeadlineMs: 10_000 })).to.throw(
      ConfigurationError,
      /leaderElection\.renewDeadlineMs: must be less than leaseDurationMs/,
    );
  });

  it('rejects a renew deadline that one jittered retry period could use up', () => {
    expect(() => leaderElectionConfig({ ...base, renewDeadlineMs: 2_000, retryPeriodMs: 2_000 })).to.throw(
      ConfigurationError,
      /renewDeadlineMs: must be greater than 1.2 × retryPeriodMs/,
    );
  });

  it('rejects bad durations and names with the option named', () => {
    expect(() => leaderElectionConfig({ ...base, retryPeriodMs: 0 })).to.throw(/leaderElection\.retryPeriodMs/);
    expect(() => leaderElectionConfig({ ...base, leaseDurationMs: Number.NaN })).to.throw(/leaderElection\.leaseDurationMs/);
    expect(() => leaderElectionConfig({ ...base, leaseName: '' })).to.throw(/leaderElection\.leaseName/);
    expect(() => leaderElectionConfig({ ...base, identity: ' ' })).to.throw(/leaderElection\.identity/);
    expect(() => leaderElectionConfig({ ...base, kubeConfig: undefined as never })).to.throw(/leaderElection\.kubeConfig/);
  });
});
