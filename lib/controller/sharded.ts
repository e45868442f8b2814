/**
 * SH2–SH3 in a controller: what a sharded controller adds to its pipeline. Events of resources
 * this member may not run are dropped (they are another member's, or wait for the handover); the
 * resources it gains are triggered when the handover completes; every run is reported to the
 * shard so that a handover waits for the runs of the resources it moves.
 */
import { filter, from, map, mergeMap, pairwise, type MonoTypeOperatorFunction, type Observable } from 'rxjs';
import { resourceEvent, resourceIdOf, type ResourceEvent, type ResourceID } from '../core/index.js';
import type { RunFn, RunResult } from '../processing/index.js';
import type { Shard } from '../sharding/index.js';

/** Keeps the events of resources this member may run now. */
export function runnableOnly<E extends ResourceEvent<unknown>>(shard: Shard): MonoTypeOperatorFunction<E> {
  return filter((event) => shard.runnable(event.id));
}

/** A trigger for every cached primary that became runnable at a change of the shard. */
export function gainedResources(shard: Shard, cached: () => Iterable<unknown>, source: string): Observable<ResourceEvent> {
  return shard.changes$.pipe(
    mergeMap((change) => {
      const gained: ResourceEvent[] = [];
      for (const object of cached()) {
        const id: ResourceID = resourceIdOf(object);
        if (shard.runnable(id) && !change.wasRunnable(id))
          gained.push({ ...resourceEvent(id.name, 'trigger', { namespace: id.namespace, source }), id });
      }
      return from(gained);
    }),
  );
}

/** The run, reported to the shard while in flight. */
export function reportedToShard(
  shard: Shard,
  run: (...args: Parameters<RunFn>) => Promise<RunResult | void>,
): (...args: Parameters<RunFn>) => Promise<RunResult | void> {
  return async (id, ctx) => {
    const done = shard.runStarted(id);
    try {
      return await run(id, ctx);
    } finally {
      done();
    }
  };
}

/** SH1: emits when this replica stops being a member, so its runs in flight are aborted (as a leader's are, OB4). */
export function memberLost(shard: Shard): Observable<unknown> {
  return shard.status$.pipe(
    map((status) => status.member),
    pairwise(),
    filter(([was, is]) => was && !is),
  );
}
