// The scheduling core on its own: `npx tsx docs/examples/reconcile-each.ts`.
import { Subject } from 'rxjs';
import { GenericRetry, resourceKey, type ResourceEvent } from 'rxkube';
import { reconcileEach } from 'rxkube/pipeline';

const events$ = new Subject<ResourceEvent>();

const outcomes$ = events$.pipe(
  reconcileEach(
    async (id, ctx) => {
      console.log(`reconciling ${resourceKey(id)} (attempt ${ctx.retry.attempt})`);
      return { rescheduleAfter: 60_000 };
    },
    { maxConcurrentReconciliations: 10, retry: GenericRetry.defaults().withMaxAttempts(3) },
  ),
);

outcomes$.subscribe((outcome) => console.log(`${resourceKey(outcome.id)}: ${outcome.result}`));

// Three events for one resource in one burst: one run, plus one follow-up for what came meanwhile.
for (let i = 0; i < 3; i++) {
  events$.next({ id: { name: 'a', namespace: 'default' }, source: 'demo', action: 'modified', primary: true });
}
events$.next({ id: { name: 'b', namespace: 'default' }, source: 'demo', action: 'added', primary: true });
setTimeout(() => events$.complete(), 100);
