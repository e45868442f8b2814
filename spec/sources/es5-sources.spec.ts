import { expect } from 'chai';
import { map, of, throwError, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { ResourceEvent, ResourceID } from '../../lib/core/index.js';
import {
  cachingInboundSource,
  inboundSource,
  perResourcePolling,
  pollingSource,
  timerSource,
  type SourceError,
} from '../../lib/sources/index.js';

const scheduler = (): TestScheduler =>
  new TestScheduler((actual, expected) => {
    expect(actual).to.deep.equal(expected);
  });

/** An event as `name:value` (value undefined: the resource vanished) for compact marbles. */
const short = <R>(events$: Observable<ResourceEvent<R>>) =>
  events$.pipe(map((e) => `${e.id.name}:${e.object === undefined ? '-' : String(e.object)}`));

const id = (name: string): ResourceID => ({ name, namespace: 'ns' });

describe('sources/ES5 sources', () => {
  it('ES5: a polling source fetches all at once every interval and emits only what changed (incl. vanished)', () => {
    const s = scheduler();
    s.run(({ cold, expectObservable }) => {
      const answers: Array<Observable<Array<[ResourceID, number]>>> = [
        of([[id('a'), 1]]),
        of([
          [id('a'), 1],
          [id('b'), 1],
        ]),
        of([[id('a'), 2]]),
        throwError(() => new Error('remote down')),
        of([]),
      ];
      let tick = 0;
      const errors: SourceError[] = [];
      const source = pollingSource<number>({
        name: 'remote',
        intervalMs: 10,
        scheduler: s,
        fetch: () => answers[tick++] ?? cold('-'),
      });
      source.errors$.subscribe((e) => errors.push(e));
      const values = { A: 'a:1', B: 'b:1', C: 'a:2', D: 'b:-', E: 'a:-' };
      expectObservable(short(source.events$), '^ 45ms !').toBe('A 9ms B 9ms (CD) 16ms E', values);
      s.flush();
      expect(errors.map((e) => (e.error as Error).message)).to.deep.equal(['remote down']);
      expect(source.get(id('a'))).to.equal(undefined);
    });
  });

  it('ES5: a polling tick is skipped while the previous fetch still runs', () => {
    const s = scheduler();
    s.run(({ cold, expectObservable }) => {
      let calls = 0;
      const source = pollingSource<number>({
        name: 'slow',
        intervalMs: 10,
        scheduler: s,
        fetch: () => cold('15ms (x|)', { x: [[id('a'), ++calls]] as Array<[ResourceID, number]> }),
      });
      // fetches start at 0 (answers at 15) and 20 (answers at 35); the tick at 10 is skipped
      expectObservable(short(source.events$), '^ 36ms !').toBe('15ms A 19ms B', { A: 'a:1', B: 'a:2' });
    });
  });

  it('ES5: per-resource polling starts on track (first run), emits changes, stops on the primary delete', () => {
    const s = scheduler();
    s.run(({ cold, expectObservable }) => {
      const remote = new Map<string, number>([['a', 1]]);
      const source = perResourcePolling<number>({ name: 'db', intervalMs: 10, scheduler: s, fetch: (rid) => of(remote.get(rid.name)) });
      const primaries = cold<ResourceEvent>('a 14ms b 10ms d', {
        a: { id: id('a'), source: 'primary', action: 'added', primary: true },
        b: { id: id('a'), source: 'primary', action: 'modified', primary: true },
        d: { id: id('a'), source: 'primary', action: 'deleted', primary: true },
      });
      s.schedule(() => remote.set('a', 2), 12);
      s.schedule(() => remote.set('a', 3), 26); // after the delete at 25: not polled any more
      source.followPrimaries(primaries);
      expectObservable(short(source.events$), '^ 60ms !').toBe('A 19ms B', { A: 'a:1', B: 'a:2' });
      s.schedule(() => expect(source.tracked()).to.deep.equal([]), 59);
    });
  });

  it('ES5: per-resource polling reports a failed fetch with the primary named and keeps polling', () => {
    const s = scheduler();
    const errors: SourceError[] = [];
    s.run(({ expectObservable }) => {
      let n = 0;
      const source = perResourcePolling<number>({
        name: 'db',
        intervalMs: 10,
        scheduler: s,
        fetch: () => (n++ === 0 ? throwError(() => new Error('timeout')) : of(7)),
      });
      source.errors$.subscribe((e) => errors.push(e));
      source.track(id('a'));
      s.schedule(() => source.stop(), 16); // an interval never ends by itself
      expectObservable(short(source.events$), '^ 20ms !').toBe('10ms A 5ms |', { A: 'a:7' });
    });
    expect((errors[0]?.error as Error).message).to.match(/db: fetch for ns\/a failed: .*timeout/);
  });

  it('ES5: inbound sources push triggers; the caching variant emits only on change and on removal', () => {
    const plain = inboundSource<string>('hook');
    const caching = cachingInboundSource<{ v: number }>('queue');
    const got: string[] = [];
    plain.events$.subscribe((e) => got.push(`${e.source}:${e.id.name}:${e.action}:${String(e.primary)}`));
    caching.events$.subscribe((e) => got.push(`${e.source}:${e.id.name}:${e.object === undefined ? '-' : e.object.v}`));
    plain.push(id('a'));
    caching.put(id('b'), { v: 1 });
    caching.put(id('b'), { v: 1 });
    caching.put(id('b'), { v: 2 });
    caching.remove(id('b'));
    caching.remove(id('b'));
    expect(got).to.deep.equal(['hook:a:trigger:false', 'queue:b:1', 'queue:b:2', 'queue:b:-']);
    expect(caching.get(id('b'))).to.equal(undefined);
    expect(() => plain.push({ name: '' })).to.throw(/non-empty name/);
  });

  it('ES5: a timer source triggers after the delay; rescheduling replaces, cancel drops', () => {
    const s = scheduler();
    s.run(({ expectObservable }) => {
      const timers = timerSource('timers', s);
      s.schedule(() => timers.schedule(id('a'), 10), 0);
      s.schedule(() => timers.schedule(id('a'), 10), 5); // replaces: fires at 15
      s.schedule(() => timers.schedule(id('b'), 3), 0);
      s.schedule(() => timers.schedule(id('c'), 8), 0);
      s.schedule(() => timers.cancel(id('c')), 4);
      expectObservable(short(timers.events$), '^ 20ms !').toBe('3ms B 11ms A', { A: 'a:-', B: 'b:-' });
    });
    expect(() => timerSource('t').schedule(id('a'), -1)).to.throw(/delayMs/);
  });

  it('rejects bad options with the option named', () => {
    expect(() => pollingSource({ name: 'x', intervalMs: 0, fetch: () => of([]) })).to.throw(/intervalMs/);
    expect(() => perResourcePolling({ name: '', intervalMs: 5, fetch: () => of(1) })).to.throw(/name is required/);
  });
});
