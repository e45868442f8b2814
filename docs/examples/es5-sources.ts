// Polling, per-resource polling, inbound and timer sources feeding reconcileEach
// (docs/event-sources.md): `npx tsx docs/examples/es5-sources.ts`.
import { merge, Subject } from 'rxjs';
import {
  cachingInboundSource,
  perResourcePolling,
  pollingSource,
  resourceKey,
  timerSource,
  type ResourceEvent,
  type ResourceID,
} from 'rxkube';
import { reconcileEach } from 'rxkube/pipeline';

// The primaries. In an operator this is the primary informer; only primary events create
// per-resource state, so the other sources' events for unknown ids are dropped.
const primaries = new Subject<ResourceEvent>();

// An external API: one call returns every bucket.
const bucketApi = new Map<string, { sizeGb: number }>([['site', { sizeGb: 1 }]]);
const buckets = pollingSource({
  name: 'buckets',
  intervalMs: 100,
  fetch: async () => [...bucketApi].map(([name, bucket]) => [{ name, namespace: 'default' }, bucket] as const),
});

// An external API asked once per primary; polling starts with the primary's first event and
// stops on its delete (followPrimaries).
const quotaApi = new Map<string, number>([['site', 10]]);
const quotas = perResourcePolling({
  name: 'quotas',
  intervalMs: 100,
  fetch: async (id: ResourceID) => quotaApi.get(id.name),
});
quotas.followPrimaries(primaries);

// Pushed from outside (a webhook handler, a queue consumer); this one keeps the last payload.
const deploys = cachingInboundSource<{ commit: string }>('deploys');

// One-shot timers per primary.
const timers = timerSource('timers');

const outcomes$ = merge(primaries, buckets.events$, quotas.events$, deploys.events$, timers.events$).pipe(
  reconcileEach<unknown>(
    (id, ctx) => {
      const cause = ctx.cause.type === 'event' ? `${ctx.cause.source} x${ctx.cause.coalesced}` : ctx.cause.type;
      // Runs read state from the sources' caches, never from the event.
      const state = { bucket: buckets.get(id), quota: quotas.get(id), deploy: deploys.get(id) };
      console.log(`run ${resourceKey(id)} <- ${cause}: ${JSON.stringify(state)}`);
    },
    { maxReconciliationInterval: 0 },
  ),
);
const subscription = outcomes$.subscribe();

const site = { name: 'site', namespace: 'default' };
primaries.next({ id: site, source: 'primary', action: 'added', primary: true });
timers.schedule(site, 450);
setTimeout(() => bucketApi.set('site', { sizeGb: 2 }), 150);
setTimeout(() => deploys.put(site, { commit: 'a1b2c3' }), 300);
setTimeout(() => {
  subscription.unsubscribe();
  quotas.stop();
  timers.stop();
  deploys.complete();
}, 600);
