// Status conditions and Events (docs/reconciler.md): a Backup reports a Ready condition and
// tells `kubectl describe` what happened. `npx tsx docs/examples/conditions-and-events.ts` runs
// it against the embedded API server.
import type { KubernetesObject } from '@kubernetes/client-node';
import { statusCondition, UpdateControl, type Reconciler, type StatusCondition } from 'rxkube';
import { customResourceDefinition, descriptorOf, statusConditionsSchema } from 'rxkube/kube';
import { eventually } from 'rxkube/testing';
import { startTestCluster } from 'rxkube/testing/cluster';

interface Backup extends KubernetesObject {
  spec: { schedule: string };
  status?: { conditions?: StatusCondition[] };
}

export const backupCrd = customResourceDefinition({
  group: 'example.com',
  kind: 'Backup',
  plural: 'backups',
  spec: { type: 'object', required: ['schedule'], properties: { schedule: { type: 'string' } } },
  // listType=map keyed by type: each field manager owns its own conditions.
  status: { type: 'object', properties: { conditions: statusConditionsSchema } },
});
const BACKUP = descriptorOf(backupCrd);

const CRON = /^(\S+\s+){4}\S+$/;

export const backups: Reconciler<Backup> = {
  reconcile(backup, ctx) {
    const { schedule } = backup.spec;
    if (!CRON.test(schedule)) {
      ctx.events.warning('InvalidSchedule', `'${schedule}' is not a cron schedule`);
      const ready = statusCondition(backup, {
        type: 'Ready',
        status: false,
        reason: 'InvalidSchedule',
        message: `'${schedule}' is not a cron schedule`,
      });
      return UpdateControl.patchStatus({ ...backup, status: { conditions: [ready] } });
    }
    ctx.events.normal('Scheduled', `backups run at '${schedule}'`);
    const ready = statusCondition(backup, { type: 'Ready', status: true, reason: 'Scheduled', message: `backups run at '${schedule}'` });
    return UpdateControl.patchStatus({ ...backup, status: { conditions: [ready] } });
  },
};

const cluster = await startTestCluster({ crds: [backupCrd] });
const operator = cluster.operator();
operator.register(backups, { resource: BACKUP });
await operator.start();

const backup = (name: string, schedule: string): Backup => ({ metadata: { name, namespace: 'default' }, spec: { schedule } });
await cluster.apply(BACKUP, backup('nightly', '0 3 * * *'));
await cluster.apply(BACKUP, backup('broken', 'every night'));
const records = cluster.client.resource<Backup>(BACKUP);
for (const name of ['nightly', 'broken']) {
  const ready = await eventually(`${name} has a Ready condition`, async () => {
    const conditions = (await records.get({ name, namespace: 'default' })).status?.conditions;
    return conditions?.find((c) => c.type === 'Ready');
  });
  console.log(`${name}: Ready=${ready.status} ${ready.reason}: ${ready.message}`);
}
// What `kubectl describe backup broken` lists under Events: the core v1 view, by involvedObject.
const events = cluster.client.resource({ apiVersion: 'v1', kind: 'Event', plural: 'events', namespaced: true });
const described = await eventually('the events of broken', async () => {
  const { items } = await events.list({ namespace: 'default', fieldSelector: { 'involvedObject.name': 'broken' } });
  return items.length > 0 ? (items as (KubernetesObject & { type: string; reason: string; message: string })[]) : undefined;
});
for (const e of described) console.log(`broken: ${e.type} ${e.reason}: ${e.message}`);
await cluster.close();
