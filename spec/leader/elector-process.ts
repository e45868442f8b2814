/**
 * One leader-election candidate in its own process, for the multi-process failover test:
 * `node --import tsx elector-process.ts <serverUrl> <leaseName> <identity> <leaseMs> <deadlineMs> <retryMs>`.
 * Prints one JSON line per change of leadership: {"identity","leader","at"}.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { createLeaderElector } from '../../lib/leader/index.js';

const [url, leaseName, identity, leaseMs, deadlineMs, retryMs] = process.argv.slice(2);
if (!url || !leaseName || !identity)
  throw new Error('usage: elector-process.ts <serverUrl> <leaseName> <identity> <leaseMs> <deadlineMs> <retryMs>');
const kubeConfig = new KubeConfig();
kubeConfig.loadFromClusterAndUser({ name: 'embedded', server: url, skipTLSVerify: true }, { name: 'test', token: 'test' });
const elector = createLeaderElector({
  kubeConfig,
  leaseName,
  leaseNamespace: 'default',
  identity,
  leaseDurationMs: Number(leaseMs),
  renewDeadlineMs: Number(deadlineMs),
  retryPeriodMs: Number(retryMs),
});
elector.isLeader$.subscribe((leader) => process.stdout.write(`${JSON.stringify({ identity, leader, at: Date.now() })}\n`));
elector.start();
process.once('SIGTERM', () => void elector.stop().then(() => process.exit(0)));
