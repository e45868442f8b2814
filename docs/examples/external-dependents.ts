// External dependents (docs/dependent-resources.md): a cloud database whose id is kept in a
// ConfigMap (externalStateDependent), and its backup schedule, polled so that changes made outside
// Kubernetes run the primary (externalDependent, its polling source in ControllerConfig.sources).
// `npx tsx docs/examples/external-dependents.ts` runs it against the embedded API server.
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import {
  createLogger,
  externalDependent,
  externalStateDependent,
  UpdateControl,
  workflow,
  type Context,
  type ControllerConfig,
  type Reconciler,
  type ResourceID,
} from 'rxkube';
import { builtinResources, customResourceDefinition, descriptorOf } from 'rxkube/kube';
import { eventually } from 'rxkube/testing';
import { startTestCluster } from 'rxkube/testing/cluster';

export interface Database extends KubernetesObject {
  spec: { sizeGb: number; backups: string };
  status?: { instanceId?: string | undefined; ready?: boolean };
}

export const databaseCrd = customResourceDefinition({
  group: 'example.com',
  kind: 'Database',
  plural: 'databases',
  spec: { type: 'object', properties: { sizeGb: { type: 'integer' }, backups: { type: 'string' } } },
  status: { type: 'object', properties: { instanceId: { type: 'string' }, ready: { type: 'boolean' } } },
});
export const DATABASE = descriptorOf(databaseCrd);

export interface Instance {
  id?: string;
  name: string;
  sizeGb: number;
}

export interface Schedule {
  instance: string;
  every: string;
}

/** Stands in for a cloud provider's API: instances get an id it chooses; schedules are found by instance name. */
export class Cloud {
  readonly instances = new Map<string, Instance>();
  readonly schedules = new Map<string, Schedule>();
  private next = 1;

  async createInstance(desired: Instance): Promise<Instance> {
    const instance = { ...desired, id: `db-${this.next++}` };
    this.instances.set(instance.id, instance);
    return instance;
  }
  async getInstance(id: string): Promise<Instance | undefined> {
    return this.instances.get(id);
  }
  async resizeInstance(id: string, sizeGb: number): Promise<void> {
    this.instances.set(id, { ...this.instances.get(id)!, sizeGb });
  }
  async deleteInstance(id: string): Promise<void> {
    this.instances.delete(id);
  }
  async getSchedule(instance: string): Promise<Schedule | undefined> {
    return this.schedules.get(instance);
  }
  async setSchedule(schedule: Schedule): Promise<void> {
    this.schedules.set(schedule.instance, schedule);
  }
  async deleteSchedule(instance: string): Promise<void> {
    this.schedules.delete(instance);
  }
}

const instanceName = (db: ResourceID) => `${db.namespace}-${db.name}`;
const idOf = (db: Database): ResourceID => ({ name: db.metadata!.name!, namespace: db.metadata!.namespace });

// One set of dependents per operator: a polling source stops with its controller.
export function databases(cloud: Cloud): { reconciler: Reconciler<Database>; config: ControllerConfig<Database> } {
  // The provider picks the id; it is kept in the ConfigMap `<database>-instance`, owned by the Database.
  const instance = externalStateDependent<Instance, Database, Context<Database>>({
    name: 'instance',
    desired: (db) => ({ name: instanceName(idOf(db)), sizeGb: db.spec.sizeGb }),
    fetch: (id) => cloud.getInstance(id),
    create: (desired) => cloud.createInstance(desired),
    idOf: (created) => created.id!,
    update: (id, _actual, desired) => cloud.resizeInstance(id, desired.sizeGb),
    delete: (id) => cloud.deleteInstance(id),
  });

  // Found by the instance's name. Polled: a schedule changed in the provider's console runs the
  // Database, which puts it back.
  const backups = externalDependent<Schedule, Database, Context<Database>>({
    name: 'backups',
    fetch: (db) => cloud.getSchedule(instanceName(idOf(db))),
    desired: (db) => ({ instance: instanceName(idOf(db)), every: db.spec.backups }),
    create: (desired) => cloud.setSchedule(desired),
    update: (_actual, desired) => cloud.setSchedule(desired),
    delete: (actual) => cloud.deleteSchedule(actual.instance),
    polling: { intervalMs: 100, fetch: (id) => cloud.getSchedule(instanceName(id)) },
  });

  const reconciler: Reconciler<Database> = {
    reconcile(db, ctx) {
      const result = ctx.workflow!.reconcileResult!;
      const operations = Object.fromEntries([...result.dependents].map(([name, d]) => [name, d.reconcileResult?.operation ?? d.outcome]));
      ctx.logger.info({ cause: ctx.cause.type === 'event' ? ctx.cause.source : ctx.cause.type, operations }, 'run');
      return UpdateControl.patchStatus({ ...db, status: { instanceId: instance.externalId(db, ctx), ready: result.allReady() } });
    },
  };
  const config: ControllerConfig<Database> = {
    resource: DATABASE,
    workflow: workflow<Database, Context<Database>>().add(instance).add(backups, { dependsOn: instance }),
    sources: [backups.pollingSource!], // its events run the Database; stopped with the controller
  };
  return { reconciler, config };
}

// Drive it against the embedded API server.
const cluster = await startTestCluster({ crds: [databaseCrd] });
const cloud = new Cloud();
const printRuns = {
  write(line: string) {
    const entry = JSON.parse(line) as { msg: string; cause?: string; operations?: object };
    if (entry.msg === 'run') console.log(`  run <- ${entry.cause}: ${JSON.stringify(entry.operations)}`);
  },
};
const operator = cluster.operator({ logger: createLogger({ level: 'info', destination: printRuns }) });
const { reconciler, config } = databases(cloud);
let runs = 0;
operator.register(reconciler, config).outcome$.subscribe(() => runs++);
await operator.start();

const ref = { name: 'orders', namespace: 'default' };
const settle = async () => {
  for (let seen = -1; seen !== runs;) {
    seen = runs;
    await new Promise((resolve) => setTimeout(resolve, 400)); // longer than a poll
  }
};
const showCloud = () =>
  console.log(`  cloud: ${JSON.stringify([...cloud.instances.values()])} ${JSON.stringify([...cloud.schedules.values()])}`);

console.log('created');
await cluster.apply(DATABASE, { metadata: ref, spec: { sizeGb: 10, backups: 'daily' } });
await eventually('instance id in status', async () => (await cluster.client.resource<Database>(DATABASE).get(ref)).status?.instanceId);
await settle();
showCloud();
const state = await cluster.client
  .resource<V1ConfigMap & KubernetesObject>(builtinResources.configMap)
  .get({ name: 'orders-instance', namespace: 'default' });
console.log(`  state: ${state.metadata!.name} ${JSON.stringify(state.data)}, owned by ${state.metadata!.ownerReferences![0]!.kind}`);

console.log('schedule changed in the console');
cloud.schedules.set('default-orders', { instance: 'default-orders', every: 'never' });
await eventually('schedule put back', () => cloud.schedules.get('default-orders')?.every === 'daily');
await settle();

console.log('resized');
await cluster.apply(DATABASE, { metadata: ref, spec: { sizeGb: 20, backups: 'daily' } });
await eventually('resized', () => cloud.instances.get('db-1')?.sizeGb === 20);
await settle();
showCloud();

console.log('deleted');
await cluster.client.resource(DATABASE).delete(ref);
await eventually('database gone', async () => (await cluster.client.resource(DATABASE).find(ref)) === undefined);
showCloud();
const left = await cluster.client.resource(builtinResources.configMap).list({ namespace: 'default' });
console.log(`  configmaps: ${JSON.stringify(left.items.map((cm) => cm.metadata!.name))}`);
await cluster.close();
