/**
 * One replica of a sharded controller in its own process, for the multi-process sharding test:
 * `node --import tsx member-process.ts <serverUrl> <identity> <timelineFile> <leaseMs> <deadlineMs> <retryMs>`.
 * Reconciles the ConfigMaps labelled `shard-test=yes`; appends one JSON line per run to the
 * timeline file ({member, resource, start, end, value}) and prints one JSON line per change of
 * its shard status to stdout ({identity, member, members, settled, at}).
 */
import { KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger, Operator, UpdateControl } from '../../lib/index.js';

const [url, identity, timeline, leaseMs, deadlineMs, retryMs] = process.argv.slice(2);
if (!url || !identity || !timeline) throw new Error('usage: member-process.ts <serverUrl> <identity> <timelineFile> <leaseMs> <deadlineMs> <retryMs>');
const kubeConfig = new KubeConfig();
kubeConfig.loadFromClusterAndUser({ name: 'embedded', server: url, skipTLSVerify: true }, { name: 'test', token: 'test' });

const operator = new Operator({ kubeConfig, logger: createLogger({ level: 'warn' }), handleSignals: false });
const registered = operator.register<V1ConfigMap>(
  {
    async reconcile(configMap) {
      const start = Date.now();
      // A run that takes a while makes overlapping runs on two members visible if handover were wrong.
      await sleep(5 + Math.floor(Math.random() * 20));
      const line = { member: identity, resource: configMap.metadata?.name, start, end: Date.now(), value: Number(configMap.data?.['value'] ?? -1) };
      appendFileSync(timeline, `${JSON.stringify(line)}\n`);
      return UpdateControl.noUpdate();
    },
  },
  {
    resource: { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps' },
    namespaces: ['default'],
    labelSelector: { matchLabels: { 'shard-test': 'yes' } },
    sharding: { identity, leaseDurationMs: Number(leaseMs), renewDeadlineMs: Number(deadlineMs), retryPeriodMs: Number(retryMs) },
  },
);
registered.shardStatus$?.subscribe((s) => process.stdout.write(`${JSON.stringify({ identity, member: s.member, members: s.members, settled: s.settled, at: Date.now() })}\n`));
await operator.start();
process.once('SIGTERM', () => void operator.stop().then(() => process.exit(0)));
