import { expect } from 'chai';
import {
  acknowledgeable,
  acksObserved,
  initialHandover,
  isRunnable,
  viewChanged,
  viewOf,
  type HandoverState,
} from '../../lib/sharding/handover.js';
import { ownerOf } from '../../lib/sharding/rendezvous.js';

const keys = Array.from({ length: 2000 }, (_, i) => `default/r${i}`);

function settle(states: HandoverState[], members: string[]): HandoverState[] {
  const view = viewOf(members);
  const next = states.map((s) => viewChanged(s, view));
  const acks = new Map(next.map((s) => [s.me, acknowledgeable(s, []) ?? '']));
  return next.map((s) => acksObserved(s, acks));
}

/** A small PRNG so a failing run can be reproduced from its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('sharding: assignment and handover (pure)', () => {
  it('SH2: rendezvous hashing gives every key exactly one owner, spread evenly', () => {
    const members = ['a', 'b', 'c', 'd'];
    const counts = new Map<string, number>();
    for (const key of keys) counts.set(ownerOf(key, members)!, (counts.get(ownerOf(key, members)!) ?? 0) + 1);
    const loads = [...counts.values()];
    expect(loads).to.have.length(4);
    expect(Math.max(...loads) / Math.min(...loads)).to.be.below(1.25);
  });

  it('SH2: one member joining moves about 1/N of the keys, all to the new member', () => {
    const before = ['a', 'b', 'c'];
    const after = [...before, 'd'];
    const moved = keys.filter((k) => ownerOf(k, before) !== ownerOf(k, after));
    expect(moved.every((k) => ownerOf(k, after) === 'd')).to.equal(true);
    expect(moved.length / keys.length).to.be.within(0.2, 0.3);
  });

  it('SH3: nothing is runnable before every member acknowledged the first view', () => {
    const view = viewOf(['a', 'b']);
    let a = viewChanged(initialHandover('a'), view);
    expect(keys.some((k) => isRunnable(a, k))).to.equal(false);
    a = acksObserved(a, new Map([['a', view.id]]));
    expect(keys.some((k) => isRunnable(a, k))).to.equal(false);
    a = acksObserved(
      a,
      new Map([
        ['a', view.id],
        ['b', view.id],
      ]),
    );
    expect(keys.filter((k) => isRunnable(a, k))).to.deep.equal(keys.filter((k) => ownerOf(k, view.members) === 'a'));
  });

  it('SH3: a member keeps running what it keeps, and starts what it gains only after the others acknowledged', () => {
    const settled = settle([initialHandover('a'), initialHandover('b')], ['a', 'b']);
    let a = settled[0];
    const b = settled[1];
    const twoWay = viewOf(['a', 'b']);
    const solo = viewOf(['a']);
    const keptByA = keys.find((k) => ownerOf(k, twoWay.members) === 'a')!;
    const gainedByA = keys.find((k) => ownerOf(k, twoWay.members) === 'b')!;
    a = viewChanged(a, solo); // b left; a sees it first
    expect(isRunnable(a, keptByA)).to.equal(true);
    expect(isRunnable(a, gainedByA)).to.equal(false);
    a = acksObserved(a, new Map([['a', solo.id]]));
    expect(isRunnable(a, gainedByA)).to.equal(true);
    expect(b).to.not.equal(undefined);
  });

  it('SH3: a member does not acknowledge a view while a run of a resource it lost is in flight', () => {
    let [a] = settle([initialHandover('a'), initialHandover('b')], ['a', 'b']);
    const three = viewOf(['a', 'b', 'c']);
    const lostByA = keys.find((k) => ownerOf(k, ['a', 'b']) === 'a' && ownerOf(k, three.members) === 'c')!;
    a = viewChanged(a, three);
    expect(acknowledgeable(a, [lostByA])).to.equal(undefined);
    expect(acknowledgeable(a, [])).to.equal(three.id);
  });

  it('SH3: a resource lost in an intermediate view waits for the next gate even if it comes back', () => {
    let [a] = settle([initialHandover('a'), initialHandover('b')], ['a', 'b']);
    const key = keys.find((k) => ownerOf(k, ['a', 'b']) === 'a' && ownerOf(k, ['a', 'b', 'c']) === 'c')!;
    a = viewChanged(a, viewOf(['a', 'b', 'c']));
    a = viewChanged(a, viewOf(['a', 'b']));
    expect(isRunnable(a, key)).to.equal(false);
  });

  it('SH3: no resource is ever in flight on two members, whatever the order views, acks and runs arrive in (model check)', () => {
    const seeds = process.env['RXKUBE_SHARD_SEED']
      ? [Number(process.env['RXKUBE_SHARD_SEED'])]
      : Array.from({ length: 40 }, (_, i) => i + 1);
    const space = keys.slice(0, 60);
    for (const seed of seeds) {
      const random = prng(seed);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
      const names = ['a', 'b', 'c', 'd', 'e'];
      // What the API server stores: live members and each one's acknowledged view.
      const live = new Set(['a', 'b']);
      const acks = new Map<string, string>();
      const states = new Map<string, HandoverState>([...live].map((m) => [m, initialHandover(m)]));
      const inFlight = new Map<string, Set<string>>([...live].map((m) => [m, new Set<string>()]));
      let gates = 0;
      for (let step = 0; step < 4000; step++) {
        const roll = random();
        if (roll < 0.02) {
          // A member joins, or one dies (it stopped acting before its lease expired: OB4 per member).
          const absent = names.filter((n) => !live.has(n));
          if (absent.length > 0 && (random() < 0.5 || live.size <= 1)) {
            const m = pick(absent);
            live.add(m);
            states.set(m, initialHandover(m));
            inFlight.set(m, new Set());
          } else if (live.size > 1) {
            const m = pick([...live]);
            live.delete(m);
            acks.delete(m);
            states.delete(m);
            inFlight.delete(m);
          }
          continue;
        }
        const m = pick([...live]);
        let s = states.get(m)!;
        const running = inFlight.get(m)!;
        if (roll < 0.25)
          s = viewChanged(s, viewOf(live)); // this member catches up with membership
        else if (roll < 0.45) {
          const opened = acksObserved(s, new Map([...acks].filter(([member]) => live.has(member))));
          if (opened !== s) gates++;
          s = opened;
        } else if (roll < 0.6) {
          const ack = acknowledgeable(s, running);
          if (ack !== undefined) acks.set(m, ack);
        } else if (roll < 0.85) {
          const key = pick(space);
          if (isRunnable(s, key)) running.add(key);
        } else if (running.size > 0) running.delete(pick([...running]));
        states.set(m, s);
        const holders = new Map<string, string>();
        for (const [member, set] of inFlight) {
          for (const key of set) {
            const other = holders.get(key);
            if (other !== undefined) throw new Error(`seed ${seed}, step ${step}: ${key} in flight on ${other} and ${member}`);
            holders.set(key, member);
          }
        }
      }
      expect(gates, `seed ${seed}: some handovers completed`).to.be.greaterThan(0);
    }
  });
});
