import { expect } from 'chai';
import { cronError, nextRun, parseCron } from '../../lib/apiserver/api/cron.js';

const next = (schedule: string, after: string) => nextRun(parseCron(schedule), new Date(after))?.toISOString();

describe('apiserver: cron schedules (CronJob spec.schedule)', () => {
  it('finds the next run of steps, ranges, lists, names and descriptors (UTC)', () => {
    expect(next('*/15 * * * *', '2026-01-01T10:07:30Z')).to.equal('2026-01-01T10:15:00.000Z');
    expect(next('0 9-17/4 * * *', '2026-01-01T13:00:00Z')).to.equal('2026-01-01T17:00:00.000Z');
    expect(next('30 2 * * mon,fri', '2026-01-01T00:00:00Z')).to.equal('2026-01-02T02:30:00.000Z'); // 2026-01-02 is a Friday
    expect(next('0 0 1 jan *', '2026-01-01T00:00:00Z')).to.equal('2027-01-01T00:00:00.000Z');
    expect(next('@hourly', '2026-01-01T10:59:59Z')).to.equal('2026-01-01T11:00:00.000Z');
    expect(next('0 0 * * 7', '2026-01-01T00:00:00Z')).to.equal('2026-01-04T00:00:00.000Z'); // 7 is Sunday too
  });

  it('with both day fields restricted, a day matching either runs (cron semantics)', () => {
    expect(next('0 0 13 * fri', '2026-01-01T00:00:00Z')).to.equal('2026-01-02T00:00:00.000Z');
  });

  it('names what is wrong in a schedule', () => {
    expect(cronError('*/5 * * * *')).to.equal(undefined);
    expect(cronError('* * * *')).to.match(/expected exactly 5 fields, found 4/);
    expect(cronError('61 * * * *')).to.match(/above maximum \(59\)/);
    expect(cronError('@sometimes')).to.match(/unrecognized descriptor/);
    expect(cronError('*/0 * * * *')).to.match(/step of range should be a positive number/);
  });
});
