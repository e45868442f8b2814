// The Backup operator the exploring and trace examples test (docs/testing.md).
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import type { Operator, Reconciler } from 'rxkube';
import { builtinResources, customResourceDefinition } from 'rxkube/kube';

export const backupCrd = customResourceDefinition({
  group: 'example.com',
  kind: 'Backup',
  plural: 'backups',
  spec: { type: 'object', properties: { target: { type: 'string' } } },
});
export const backups = { apiVersion: 'example.com/v1', kind: 'Backup', plural: 'backups' };
export type Backup = KubernetesObject & { spec?: { target?: string }; status?: { run?: string } };

// One run object per Backup, named after it and applied on every run: a restart between the
// apply and the status write applies it again instead of making a second one, and a change of
// the target reaches it however many changes the operator saw.
const backupReconciler: Reconciler<Backup> = {
  async reconcile(backup, ctx) {
    const name = `${backup.metadata?.name}-run`;
    const namespace = backup.metadata?.namespace ?? 'default';
    await ctx.client
      .resource<V1ConfigMap>(builtinResources.configMap)
      .apply(
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { target: backup.spec?.target ?? '' } },
        { fieldManager: 'backup', force: true },
      );
    if (backup.status?.run !== name)
      await ctx.client.resource(backups).mergePatchStatus({ name: backup.metadata?.name ?? '', namespace }, { status: { run: name } });
  },
};

// The function your main calls to register the controllers.
export function setup(operator: Operator): void {
  operator.register(backupReconciler, { resource: backups });
}
