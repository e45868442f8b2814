// A resource defined once with TypeBox — its type, CRD and descriptor — and the server enforcing
// the schema: `npx tsx docs/examples/define-resource.ts`.
import { Operator, statusCondition, UpdateControl, type Reconciler } from 'rxkube';
import { startApiServer } from '@rxkube/apiserver';
import { createKubeClient, defineResource, installCustomResourceDefinition, StatusConditions, type ResourceOf } from 'rxkube/kube';
import { Type, type Static } from 'typebox';

export const BackupSpec = Type.Object(
  {
    /** What to back up: a PersistentVolumeClaim in the Backup's namespace. */
    claim: Type.String({ minLength: 1 }),
    schedule: Type.String({ description: 'A cron schedule, e.g. "0 3 * * *".' }),
    keep: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 7 })),
    method: Type.Optional(Type.Union([Type.Literal('snapshot'), Type.Literal('copy')])),
    minKeep: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { 'x-kubernetes-validations': [{ rule: '!has(self.minKeep) || self.minKeep <= self.keep', message: 'minKeep must not exceed keep' }] },
);

export const BackupStatus = Type.Object({
  lastBackup: Type.Optional(Type.String({ format: 'date-time' })),
  observedGeneration: Type.Optional(Type.Integer()),
  conditions: Type.Optional(StatusConditions),
});

export const Backup = defineResource({
  group: 'example.com',
  kind: 'Backup',
  plural: 'backups',
  shortNames: ['bk'],
  versions: {
    v1: {
      spec: BackupSpec,
      status: BackupStatus,
      printerColumns: [
        { name: 'Claim', type: 'string', jsonPath: '.spec.claim' },
        { name: 'Last', type: 'date', jsonPath: '.status.lastBackup' },
      ],
    },
  },
});

export type Backup = ResourceOf<typeof Backup>; // { spec: { claim: string; schedule: string; keep?: number; ... }; status?: {...} } & KubernetesObject
export type BackupSpec = Static<typeof BackupSpec>;

/** Two versions: objects are stored as v1; v1beta1 is still served, with a warning. */
export const ScheduleSpec = Type.Object({ cron: Type.String() });
export const Schedule = defineResource({
  group: 'example.com',
  kind: 'Schedule',
  plural: 'schedules',
  versions: {
    v1: { storage: true, spec: ScheduleSpec, status: BackupStatus },
    v1beta1: { spec: ScheduleSpec, deprecated: true, deprecationWarning: 'use example.com/v1 Schedule' },
  },
});

export const backups: Reconciler<Backup> = {
  reconcile(backup) {
    const ready = statusCondition(backup, { type: 'Ready', status: true, reason: 'Scheduled', message: `keeps ${backup.spec.keep ?? 7}` });
    return UpdateControl.patchStatus({ ...backup, status: { conditions: [ready] } });
  },
};

// The run: the CRD installed on the embedded server, an object the schema accepts, one it rejects.
if (import.meta.url === `file://${process.argv[1]}`) {
  const server = await startApiServer();
  const client = createKubeClient(server.kubeConfig());
  await installCustomResourceDefinition(client, Backup.crd);
  const operator = new Operator({ kubeConfig: server.kubeConfig() });
  operator.register(backups, { resource: Backup.descriptor });
  await operator.start();

  const valid: Backup = {
    apiVersion: 'example.com/v1',
    kind: 'Backup',
    metadata: { name: 'nightly', namespace: 'default' },
    spec: { claim: 'data', schedule: '0 3 * * *' },
  };
  const created = await client.resource<Backup>(Backup.descriptor).create(valid);
  console.log(`created ${created.metadata?.name}: keep defaulted to ${created.spec.keep}`);
  try {
    await client
      .resource<Backup>(Backup.descriptor)
      .create({ ...valid, metadata: { name: 'bad', namespace: 'default' }, spec: { ...valid.spec, keep: 2, minKeep: 5 } });
  } catch (err) {
    console.log(`rejected: ${(err as Error).message}`);
  }
  await operator.stop();
  await server.close();
}
