import { expect } from 'chai';
import {
  findStatusCondition,
  isStatusConditionTrue,
  setStatusCondition,
  statusCondition,
  type StatusCondition,
} from '../../lib/core/index.js';

const T0 = new Date('2026-11-24T01:00:00.123Z');
const T1 = new Date('2026-11-24T02:00:00.000Z');

function withConditions(conditions: StatusCondition[], generation = 3) {
  return { metadata: { name: 'a', generation }, status: { conditions } };
}

describe('status conditions (metav1.Condition)', () => {
  const ready = statusCondition(withConditions([]), { type: 'Ready', status: true, reason: 'Available', message: 'all good' }, T0);

  it('a new condition: lastTransitionTime now (RFC 3339 seconds), observedGeneration the object generation', () => {
    expect(ready).to.deep.equal({
      type: 'Ready',
      status: 'True',
      reason: 'Available',
      message: 'all good',
      lastTransitionTime: '2026-11-24T01:00:00Z',
      observedGeneration: 3,
    });
  });

  it('lastTransitionTime moves only when status changes; reason, message and observedGeneration follow', () => {
    const same = statusCondition(withConditions([ready], 4), { type: 'Ready', status: 'True', reason: 'StillAvailable', message: 'x' }, T1);
    expect(same).to.include({ lastTransitionTime: '2026-11-24T01:00:00Z', reason: 'StillAvailable', message: 'x', observedGeneration: 4 });
    const flipped = statusCondition(withConditions([ready], 4), { type: 'Ready', status: false, reason: 'Down' }, T1);
    expect(flipped).to.include({ status: 'False', lastTransitionTime: '2026-11-24T02:00:00Z', message: '' });
  });

  it('setStatusCondition replaces by type, keeps others and the earlier transition time when the status is the same', () => {
    const other: StatusCondition = {
      type: 'Degraded',
      status: 'False',
      reason: 'Fine',
      message: '',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    };
    const later = { ...ready, message: 'again', lastTransitionTime: '2026-11-24T02:00:00Z' };
    expect(setStatusCondition([other, ready], later)).to.deep.equal([other, { ...later, lastTransitionTime: '2026-11-24T01:00:00Z' }]);
    const down = { ...ready, status: 'False' as const, lastTransitionTime: '2026-11-24T02:00:00Z' };
    expect(setStatusCondition([other, ready], down)).to.deep.equal([other, down]);
    expect(setStatusCondition(undefined, ready)).to.deep.equal([ready]);
  });

  it('find and isTrue read an object or a list', () => {
    const obj = withConditions([ready]);
    expect(findStatusCondition(obj, 'Ready')).to.equal(ready);
    expect(findStatusCondition([ready], 'Missing')).to.equal(undefined);
    expect(isStatusConditionTrue(obj, 'Ready')).to.equal(true);
    expect(isStatusConditionTrue({}, 'Ready')).to.equal(false);
  });

  it('rejects a type or reason the API server would reject, naming it; shortens a too long message', () => {
    expect(() => statusCondition({}, { type: 'not ready', status: true, reason: 'R' })).to.throw(TypeError, /type "not ready"/);
    expect(() => statusCondition({}, { type: 'Ready', status: true, reason: 'has space' })).to.throw(
      TypeError,
      /reason "has space" must be CamelCase/,
    );
    expect(() => statusCondition({}, { type: 'Ready', status: true, reason: '' })).to.throw(TypeError, /reason ""/);
    expect(() => statusCondition({}, { type: 'Ready', status: 'Yes' as never, reason: 'R' })).to.throw(TypeError, /status must be/);
    expect(statusCondition({}, { type: 'Ready', status: true, reason: 'R', message: 'x'.repeat(40_000) }).message).to.have.length(32768);
  });
});
