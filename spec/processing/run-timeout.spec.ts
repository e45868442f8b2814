import { expect } from 'chai';
import { Observable } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import { ConfigurationError, RunTimeoutError } from '../../lib/core/errors.js';
import type { ResourceEvent } from '../../lib/core/events.js';
import type { ResourceID } from '../../lib/core/resource.js';
import {
  reconcileEach,
  type ReconcileOptions,
  type RunContext,
  type RunFn,
  type RunOutput,
  type RunResult,
} from '../../lib/processing/index.js';
import { ev, ok, record, virtual, type Harness } from './helpers.js';

/**
 * A run that ignores its signal and ends `ms` of virtual time after it started, as a promise does
 * that is blind to the abort: a thenable whose callbacks the virtual clock calls.
 */
function blindFor(ts: TestScheduler, ms: number): PromiseLike<void> {
  const thenable: PromiseLike<void> = {
    then(onEnd) {
      ts.schedule(() => void onEnd?.(undefined), ms);
      return thenable as PromiseLike<never>;
    },
  };
  return thenable;
}

interface Span {
  readonly name: string;
  readonly start: number;
  end?: number;
  signal?: AbortSignal;
}

/** reconcileEach over `work`, recording each run's span in virtual time and every deadline passed. */
function setup(h: Harness, work: (id: ResourceID, ctx: RunContext, n: number) => RunOutput, options: ReconcileOptions = {}) {
  const spans: Span[] = [];
  const timeouts: Array<[number, string, number]> = [];
  const counts = new Map<string, number>();
  const run: RunFn = (id, ctx) => {
    const n = counts.get(id.name) ?? 0;
    counts.set(id.name, n + 1);
    const span: Span = { name: id.name, start: h.ts.now(), signal: ctx.signal };
    spans.push(span);
    const output = work(id, ctx, n);
    const end = () => (span.end = h.ts.now());
    if (output instanceof Observable)
      return new Observable<RunResult | void>((subscriber) => {
        const subscription = output.subscribe(subscriber);
        return () => {
          end();
          subscription.unsubscribe();
        };
      });
    if (output && typeof (output as PromiseLike<void>).then === 'function') {
      const promise = output as PromiseLike<RunResult | void>;
      const settled = {
        then: (onOk: (value: RunResult | void) => void, onErr: (error: unknown) => void) =>
          promise.then(
            (value) => {
              end();
              onOk(value);
            },
            (error: unknown) => {
              end();
              onErr(error);
            },
          ),
      };
      return settled as unknown as PromiseLike<RunResult | void>;
    }
    end();
    return output;
  };
  const op = reconcileEach(run, {
    scheduler: h.ts,
    maxReconciliationInterval: 0,
    runTimeoutMs: 100,
    onRunTimeout: (id, timeoutMs) => timeouts.push([h.ts.now(), id.name, timeoutMs]),
    ...options,
  });
  return { op, spans, timeouts };
}

/** No two spans of one resource overlap. */
function expectNoOverlap(spans: readonly Span[]): void {
  for (const a of spans) {
    for (const b of spans) {
      if (a === b || a.name !== b.name || b.start < a.start) continue;
      expect(b.start, `${b.name} started at ${b.start} while its run of ${a.start} went on until ${a.end}`).to.be.at.least(
        a.end ?? Infinity,
      );
    }
  }
}

const events = (h: Harness, marbles: string, values: Record<string, ResourceEvent>) => h.hot(marbles, values);

describe('run deadlines (EP14)', () => {
  it('EP14: a run that ignores its signal times out at its deadline, keeps its slot until it really ends, and is retried from then', () => {
    const { log, outcomes, spans, timeouts } = virtual((h) => {
      const s = setup(h, (_id, _ctx, n) => (n === 0 ? blindFor(h.ts, 300) : ok(10)));
      return { ...s, ...record(h.ts, events(h, 'x', { x: ev('x') }).pipe(s.op)) };
    });
    expect(timeouts).to.deep.equal([[100, 'x', 100]]); // counted and logged at the deadline
    expect(spans[0].signal!.aborted).to.equal(true);
    expect(spans[0].signal!.reason).to.be.instanceOf(RunTimeoutError);
    // The failure is reported when the run really ends (300); its retry (2000 ms) counts from then.
    expect(log).to.deep.equal([
      [300, 'x failure event +retry1@2300'],
      [2310, 'x success retry1'],
    ]);
    const error = outcomes[0].error as RunTimeoutError;
    expect(error).to.be.instanceOf(RunTimeoutError);
    expect({ timeoutMs: error.timeoutMs, overrunMs: error.overrunMs }).to.deep.equal({ timeoutMs: 100, overrunMs: 200 });
    expect(spans.map((s) => [s.start, s.end])).to.deep.equal([
      [0, 300],
      [2300, 2310],
    ]);
  });

  it('EP14: events during a timed-out run wait for it to end: the resource never runs twice at once', () => {
    const { log, spans } = virtual((h) => {
      const s = setup(h, (_id, _ctx, n) => (n === 0 ? blindFor(h.ts, 300) : ok(10)));
      return { ...s, ...record(h.ts, events(h, 'x 149ms x 49ms x', { x: ev('x') }).pipe(s.op)) };
    });
    expectNoOverlap(spans);
    // EP2 after EP14: one follow-up when the timed-out run ends, not a second run at the deadline.
    expect(spans.map((s) => [s.start, s.end])).to.deep.equal([
      [0, 300],
      [300, 310],
    ]);
    expect(log.map(([at, code]) => [at, code.split(' ').slice(0, 2).join(' ')])).to.deep.equal([
      [300, 'x failure'],
      [310, 'x success'],
    ]);
  });

  it('EP14: the concurrency slot of a timed-out run stays taken until it ends', () => {
    const { spans } = virtual((h) => {
      const s = setup(h, (id) => (id.name === 'x' ? blindFor(h.ts, 300) : ok(10)), { maxConcurrentReconciliations: 1, retry: false });
      record(h.ts, events(h, 'x 49ms y', { x: ev('x'), y: ev('y') }).pipe(s.op));
      return s;
    });
    expect(spans.map((s) => [s.name, s.start])).to.deep.equal([
      ['x', 0],
      ['y', 300], // not 100: the deadline does not free the slot of a run still going
    ]);
  });

  it('EP14: an observable run is unsubscribed at its deadline and ends there', () => {
    const { log, outcomes, spans } = virtual((h) => {
      const s = setup(h, (_id, _ctx, n) => (n === 0 ? ok(1000) : ok(10)));
      return { ...s, ...record(h.ts, events(h, 'x', { x: ev('x') }).pipe(s.op)) };
    });
    expect(spans[0].end).to.equal(100);
    expect(log[0]).to.deep.equal([100, 'x failure event +retry1@2100']);
    expect((outcomes[0].error as RunTimeoutError).overrunMs).to.equal(0);
  });

  it('EP14: a run sets its own deadline (ctx.setRunTimeout), longer or none; without runTimeoutMs there is none', () => {
    const { log, timeouts } = virtual((h) => {
      const s = setup(
        h,
        (id, ctx) => {
          if (id.name === 'long') ctx.setRunTimeout(500);
          if (id.name === 'none') ctx.setRunTimeout(0);
          if (id.name === 'short') ctx.setRunTimeout(50);
          return blindFor(h.ts, 300);
        },
        { retry: false },
      );
      return { ...s, ...record(h.ts, events(h, '(lns)', { l: ev('long'), n: ev('none'), s: ev('short') }).pipe(s.op)) };
    });
    expect(timeouts).to.deep.equal([[50, 'short', 50]]);
    expect(log.map(([at, code]) => [at, code.split(' ').slice(0, 2).join(' ')])).to.deep.equal([
      [300, 'long success'],
      [300, 'none success'],
      [300, 'short failure'],
    ]);
    const off = virtual((h) => {
      const s = setup(h, () => blindFor(h.ts, 300), { runTimeoutMs: undefined });
      return { ...s, ...record(h.ts, events(h, 'x', { x: ev('x') }).pipe(s.op)) };
    });
    expect(off.timeouts).to.deep.equal([]);
    expect(off.log).to.deep.equal([[300, 'x success event']]);
  });

  it('EP14: runTimeoutMs must be a number', () => {
    expect(() => reconcileEach(() => undefined, { runTimeoutMs: '5s' as unknown as number })).to.throw(
      ConfigurationError,
      /runTimeoutMs: must be a number/,
    );
  });
});
