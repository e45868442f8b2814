/** The polling helpers' failure messages: they name what was awaited and what the check last threw. */
import { expect } from 'chai';
import { consistently, eventually } from '../../lib/testing/index.js';

const thrownStatus = { kind: 'Status', code: 409, reason: 'Conflict' };
/** A check that rejects with a value that is not an Error, as client-node's older calls did. */
// eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the value that is not an Error is what is tested
const rejecting = (): Promise<never> => Promise.reject(thrownStatus);

describe('testing: eventually and consistently', () => {
  it('eventually names the last value the check threw, an object as JSON, not "[object Object]"', async () => {
    const failure = await eventually('the thing', rejecting, 20).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).to.be.instanceOf(Error);
    expect((failure as Error).message).to.equal(
      'timed out after 20 ms waiting for the thing: {"kind":"Status","code":409,"reason":"Conflict"}',
    );
  });

  it('consistently names the object the check threw as JSON, not "[object Object]"', async () => {
    const failure = await consistently('the quiet', rejecting, 20).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).to.be.instanceOf(Error);
    expect((failure as Error).message).to.equal(
      'the quiet stopped holding during the 20 ms quiet period: {"kind":"Status","code":409,"reason":"Conflict"}',
    );
  });
});
