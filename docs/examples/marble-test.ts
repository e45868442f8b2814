// Marble tests of reconcileEach in virtual time (docs/testing.md): `npx tsx docs/examples/marble-test.ts`.
// Each block runs a TestScheduler; a mismatch throws an AssertionError with both diagrams' frames.
import { map } from 'rxjs';
import { GenericRetry, LinearRateLimiter } from 'rxkube';
import { reconcileEach, resourceEvent, type RunFn } from 'rxkube/pipeline';
import { failAfter, outcomeCode, succeedAfter, testScheduler } from 'rxkube/testing';

// Three events while a run is in flight cause one follow-up run, not three.
testScheduler().run(({ hot, expectObservable }) => {
  const events$ = hot('a 2ms a 2ms a 2ms a', { a: resourceEvent('web') });
  const run: RunFn = () => succeedAfter(10);
  const outcomes$ = events$.pipe(reconcileEach(run, { maxReconciliationInterval: 0 }), map(outcomeCode));
  expectObservable(outcomes$).toBe('10ms a 9ms b', {
    a: 'web success event',
    b: 'web success event*3',
  });
});

// Failures are retried after 2000 ms, then 2000 ms again; the outcome says when.
testScheduler().run(({ hot, expectObservable }) => {
  let calls = 0;
  const run: RunFn = () => (++calls <= 2 ? failAfter(10) : succeedAfter(10));
  const outcomes$ = hot('a', { a: resourceEvent('web') }).pipe(
    reconcileEach(run, { retry: GenericRetry.defaults(), maxReconciliationInterval: 0 }),
    map(outcomeCode),
  );
  expectObservable(outcomes$).toBe('10ms a 2009ms b 2009ms c', {
    a: 'web failure event +retry1@2010',
    b: 'web failure retry1 +retry2@4020',
    c: 'web success retry2',
  });
});

// An event while a retry is pending runs at once; the retry timer is dropped.
testScheduler().run(({ hot, expectObservable }) => {
  let calls = 0;
  const run: RunFn = () => (++calls === 1 ? failAfter(10) : succeedAfter(10));
  const outcomes$ = hot('a 499ms a', { a: resourceEvent('web') }).pipe(
    reconcileEach(run, { maxReconciliationInterval: 0 }),
    map(outcomeCode),
  );
  expectObservable(outcomes$).toBe('10ms a 499ms b', {
    a: 'web failure event +retry1@2010',
    b: 'web success event',
  });
});

// A requested reschedule; without one, the max reconciliation interval applies.
testScheduler().run(({ hot, expectObservable }) => {
  const run: RunFn = (id) => (id.name === 'web' ? succeedAfter(10, { rescheduleAfter: 100 }) : succeedAfter(10));
  const outcomes$ = hot('(ab)', { a: resourceEvent('web'), b: resourceEvent('db') }).pipe(
    reconcileEach(run, { maxReconciliationInterval: 1000 }),
    map(outcomeCode),
  );
  expectObservable(outcomes$, '^ 200ms !').toBe('10ms (ab) 106ms c', {
    a: 'web success event +requested@110',
    b: 'db success event +maxInterval@1010',
    c: 'web success reschedule +requested@220',
  });
});

// At most 2 runs per 1000 ms; the third is postponed to the end of the window.
testScheduler().run(({ hot, expectObservable }) => {
  const run: RunFn = () => succeedAfter(10);
  const outcomes$ = hot('a 19ms a 19ms a', { a: resourceEvent('web') }).pipe(
    reconcileEach(run, { rateLimiter: new LinearRateLimiter(2, 1000), maxReconciliationInterval: 0 }),
    map(outcomeCode),
  );
  expectObservable(outcomes$).toBe('10ms a 19ms b 979ms c', {
    a: 'web success event',
    b: 'web success event',
    c: 'web success rateLimit(event)',
  });
});

console.log('all marble tests passed');
