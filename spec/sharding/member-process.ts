/**
 * One replica of a sharded controller in its own process, for the multi-process sharding tests:
 * `node --import tsx member-process.ts <serverUrl> <identity> <timelineFile> <leaseMs> <deadlineMs> <retryMs> [leaderLease]`.
 * Reconciles the ConfigMaps labelled `shard-test=yes`; appends one JSON line per run to the
 * timeline file ({member, resource, start, end, value, controller}) and prints one JSON line per
 * change of its shard status to stdout ({identity, member, members, settled, at}).
 *
 * With `leaderLease`, the operator also runs leader election on that Lease and a second,
 * cluster-wide controller (not sharded) of the ConfigMaps labelled `shard-test=global`, and prints
 * each change of leadership ({identity, leader, at}).
 *
 * With RXKUBE_TEST_RESCHEDULE_MS set, every run asks to run again after that many ms (periodic reschedules).
 */
import { KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger, Operator, UpdateControl } from '../../lib/index.js';

const [url, identity, timeline, leaseMs, deadlineMs, retryMs, leaderLease] = process.argv.slice(2);
if (!url || !identity || !timeline)
  throw new Error('usage: member-process.ts <serverUrl> <identity> <timelineFile> <leaseMs> <deadlineMs> <retryMs> [leaderLease]');
const kubeConfig = new KubeConfig();
kubeConfig.loadFromClusterAndUser({ name: 'embedded', server: url, skipTLSVerify: true }, { name: 'test', token: 'test' });
const rescheduleMs = process.env['RXKUBE_TEST_RESCHEDULE_MS'] === undefined ? undefined : Number(process.env['RXKUBE_TEST_RESCHEDULE_MS']);
const timing = { leaseDurationMs: Number(leaseMs), renewDeadlineMs: Number(deadlineMs), retryPeriodMs: Number(retryMs) };

const operator = new Operator({
  kubeConfig,
  logger: createLogger({ level: 'warn' }),
  handleSignals: false,
  ...(leaderLease ? { leaderElection: { leaseName: leaderLease, leaseNamespace: 'default', identity, ...timing } } : {}),
});
const print = (line: object) => process.stdout.write(`${JSON.stringify({ identity, ...line, at: Date.now() })}\n`);
const reconciler = (controller: string) => ({
  async reconcile(configMap: V1ConfigMap) {
    const start = Date.now();
    // A run that takes a while makes overlapping runs on two members visible if handover were wrong.
    await sleep(5 + Math.floor(Math.random() * 20));
    const line = {
      member: identity,
      resource: configMap.metadata?.name,
      start,
      end: Date.now(),
      value: Number(configMap.data?.['value'] ?? -1),
      controller,
    };
    appendFileSync(timeline, `${JSON.stringify(line)}\n`);
    const control = UpdateControl.noUpdate<V1ConfigMap>();
    return rescheduleMs === undefined ? control : control.rescheduleAfter(rescheduleMs);
  },
});
const registered = operator.register<V1ConfigMap>(reconciler('per-resource'), {
  resource: { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps' },
  namespaces: ['default'],
  labelSelector: { matchLabels: { 'shard-test': 'yes' } },
  sharding: { identity, ...timing },
});
if (leaderLease) {
  operator.register<V1ConfigMap>(reconciler('cluster-wide'), {
    name: 'cluster-wide',
    resource: { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps' },
    namespaces: ['default'],
    labelSelector: { matchLabels: { 'shard-test': 'global' } },
  });
  operator.isLeader$.subscribe((leader) => print({ leader }));
}
registered.shardStatus$?.subscribe((s) => print({ member: s.member, members: s.members, settled: s.settled }));
await operator.start();
process.once('SIGTERM', () => void operator.stop().then(() => process.exit(0)));
