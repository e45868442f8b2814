// The Reconciler contract (docs/reconciler.md): a DnsRecord registers a hostname with an external
// DNS provider; cleanup removes it again. Run by docs/examples/reconciler.ts, tested by
// docs/examples/operator-test.ts.
import type { KubernetesObject } from '@kubernetes/client-node';
import { DeleteControl, ErrorStatusUpdateControl, GenericRetry, UpdateControl, type ControllerConfig, type Reconciler } from 'rxkube';
import { customResourceDefinition, descriptorOf } from 'rxkube/kube';

export interface DnsRecord extends KubernetesObject {
  spec: { hostname: string; address: string };
  status?: { registered?: boolean; error?: string; observedGeneration?: number };
}

export const dnsRecordCrd = customResourceDefinition({
  group: 'example.com',
  kind: 'DnsRecord',
  plural: 'dnsrecords',
  spec: { type: 'object', properties: { hostname: { type: 'string' }, address: { type: 'string' } } },
  status: {
    type: 'object',
    properties: { registered: { type: 'boolean' }, error: { type: 'string' }, observedGeneration: { type: 'integer' } },
  },
});
export const DNSRECORD = descriptorOf(dnsRecordCrd);

/** Stands in for an external DNS API: state Kubernetes cannot garbage-collect, so cleanup must. */
export class DnsProvider {
  readonly records = new Map<string, string>();
  busy = false;

  async upsert(hostname: string, address: string, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    this.records.set(hostname, address);
  }

  async remove(hostname: string): Promise<void> {
    this.records.delete(hostname);
  }
}

/** An error retrying cannot fix. */
export class InvalidSpecError extends Error {}

const IPV4 = /^(\d{1,3}\.){3}\d{1,3}$/;

export function dnsRecords(provider: DnsProvider): Reconciler<DnsRecord> {
  return {
    async reconcile(record, ctx) {
      const { hostname, address } = record.spec;
      if (!IPV4.test(address)) throw new InvalidSpecError(`spec.address '${address}' is not an IPv4 address`);
      if (ctx.retry.attempt > 0) ctx.logger.info({ attempt: ctx.retry.attempt, lastAttempt: ctx.retry.lastAttempt }, 'retrying');
      await provider.upsert(hostname, address, ctx.signal);
      // Look again in 5 minutes even if nothing changes: someone may edit the DNS zone by hand.
      return UpdateControl.patchStatus({ ...record, status: { registered: true } }).rescheduleAfter(5 * 60_000);
    },

    async cleanup(record, ctx) {
      if (provider.busy) return DeleteControl.noFinalizerRemoval().rescheduleAfter(1_000);
      await provider.remove(record.spec.hostname);
      ctx.logger.info({ hostname: record.spec.hostname }, 'record removed');
      return DeleteControl.defaultDelete(); // removes the finalizer: Kubernetes deletes the object
    },

    updateErrorStatus(record, _ctx, error) {
      const message = error instanceof Error ? error.message : String(error);
      const control = ErrorStatusUpdateControl.patchStatus({ ...record, status: { registered: false, error: message } });
      // A bad spec stays bad until someone edits it, and that edit triggers a run anyway.
      return error instanceof InvalidSpecError ? control.withNoRetry() : control;
    },
  };
}

export const dnsRecordsConfig: ControllerConfig<DnsRecord> = {
  resource: DNSRECORD,
  finalizerName: 'example.com/dns-cleanup', // default: dnsrecords.example.com/finalizer
  observedGeneration: true, // status.observedGeneration = metadata.generation on every status patch
  retry: GenericRetry.defaults().withMaxAttempts(10).withMaxMs(60_000),
};
