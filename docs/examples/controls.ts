// Controls, causes and errors (docs/reconciler.md). Type-checked with the project; it only
// defines reconcilers: `npx tsx docs/examples/controls.ts`.
import type { KubernetesObject } from '@kubernetes/client-node';
import { ErrorStatusUpdateControl, NoRetryError, UpdateControl, type Reconciler } from 'rxkube';
import { classifyError } from 'rxkube/kube';

export interface Widget extends KubernetesObject {
  spec: { size?: number };
  status?: { size?: number; message?: string };
}

// Writes a label on the resource, then the status: resource first, status second.
export const sizeLabeler: Reconciler<Widget> = {
  reconcile(widget, ctx) {
    const size = widget.spec.size ?? 1;
    const label = size > 10 ? 'large' : 'small';
    if (widget.metadata?.labels?.['example.com/size'] === label) {
      return UpdateControl.patchStatus({ ...widget, status: { size } });
    }
    ctx.logger.info({ label }, 'relabelling');
    const labels = { ...widget.metadata?.labels, 'example.com/size': label };
    return UpdateControl.patchResourceAndStatus({ ...widget, metadata: { ...widget.metadata, labels }, status: { size } });
  },
};

// Fails without retries by throwing NoRetryError, and tells causes apart.
export const strictWidgets: Reconciler<Widget> = {
  reconcile(widget, ctx) {
    if ((widget.spec.size ?? 0) < 0) throw new NoRetryError(new Error('spec.size must not be negative'));
    if (ctx.cause.type === 'event' && !ctx.cause.primary) {
      ctx.logger.debug({ source: ctx.cause.source, coalesced: ctx.cause.coalesced }, 'run for a secondary change');
    }
    return UpdateControl.noUpdate<Widget>().rescheduleAfter(60_000);
  },
  // No permission is not fixed by retrying soon: report it, and look again in 10 minutes.
  updateErrorStatus(widget, _ctx, error) {
    const status = { message: `reconcile failed: ${String(error)}` };
    const control = ErrorStatusUpdateControl.patchStatus({ ...widget, status });
    return classifyError(error) === 'forbidden' ? control.withNoRetry().rescheduleAfter(10 * 60_000) : control;
  },
};
