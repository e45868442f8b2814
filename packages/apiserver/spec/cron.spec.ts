import { expect } from 'chai';
import { cronError, nextRun, parseCron, rfc3339In, timeZoneError } from '../src/grammar/cron.js';

const next = (schedule: string, after: string, timeZone?: string) => nextRun(parseCron(schedule), new Date(after), timeZone)?.toISOString();

describe('apiserver: cron schedules (CronJob spec.schedule)', () => {
  it('finds the next run of steps, ranges, lists, names and descriptors (UTC)', () => {
    expect(next('*/15 * * * *', '2026-01-01T10:07:30Z')).to.equal('2026-01-01T10:15:00.000Z');
    expect(next('0 9-17/4 * * *', '2026-01-01T13:00:00Z')).to.equal('2026-01-01T17:00:00.000Z');
    expect(next('30 2 * * mon,fri', '2026-01-01T00:00:00Z')).to.equal('2026-01-02T02:30:00.000Z'); // 2026-01-02 is a Friday
    expect(next('0 0 1 jan *', '2026-01-01T00:00:00Z')).to.equal('2027-01-01T00:00:00.000Z');
    expect(next('@hourly', '2026-01-01T10:59:59Z')).to.equal('2026-01-01T11:00:00.000Z');
    expect(next('0 0 * * 7', '2026-01-01T00:00:00Z')).to.equal('2026-01-04T00:00:00.000Z'); // 7 is Sunday too
  });

  it('@every: a constant delay from the whole second, parsed as Go parses durations (whole seconds, at least one)', () => {
    expect(next('@every 90s', '2026-01-01T00:00:00.500Z')).to.equal('2026-01-01T00:01:30.000Z');
    expect(next('@every 1h30m', '2026-01-01T00:00:00Z')).to.equal('2026-01-01T01:30:00.000Z');
    expect(next('@every 1.5m', '2026-01-01T00:00:00Z')).to.equal('2026-01-01T00:01:30.000Z');
    expect(next('@every 500ms', '2026-01-01T00:00:00Z'), 'at least a second').to.equal('2026-01-01T00:00:01.000Z');
    expect(next('@every 2500ms', '2026-01-01T00:00:00Z'), 'whole seconds').to.equal('2026-01-01T00:00:02.000Z');
    expect(cronError('@every 5x')).to.equal('failed to parse duration @every 5x: time: unknown unit "x" in duration "5x"');
    expect(cronError('@every 5')).to.equal('failed to parse duration @every 5: time: missing unit in duration "5"');
    expect(cronError('@every soon')).to.match(/time: (invalid duration|unknown unit)/);
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
    expect(cronError('*/99999999999999999999 * * * *')).to.match(/strconv.Atoi: parsing "99999999999999999999": value out of range/);
    expect(cronError('*/9223372036854775807 * * * *'), 'the largest int64 step still parses').to.equal(undefined);
  });

  it('runs on the wall clock of spec.timeZone', () => {
    expect(next('0 9 * * *', '2025-12-31T23:00:00Z', 'Asia/Tokyo')).to.equal('2026-01-01T00:00:00.000Z');
    expect(next('0 9 * * *', '2026-01-01T00:00:00Z', 'Asia/Tokyo')).to.equal('2026-01-02T00:00:00.000Z');
    expect(next('0 0 1 * *', '2026-01-15T00:00:00Z', 'America/St_Johns')).to.equal('2026-02-01T03:30:00.000Z'); // UTC-03:30
    expect(next('0 12 * * mon', '2026-01-01T00:00:00Z', 'Pacific/Kiritimati')).to.equal('2026-01-04T22:00:00.000Z'); // UTC+14: Monday starts on Sunday in UTC
  });

  it('skips a wall time a daylight-saving jump skips and runs twice one the clock passes twice (robfig/cron)', () => {
    // New York, 2026-03-08: 02:00 EST jumps to 03:00 EDT.
    expect(next('30 2 * * *', '2026-03-07T08:00:00Z', 'America/New_York')).to.equal('2026-03-09T06:30:00.000Z');
    // 2026-11-01: 02:00 EDT falls back to 01:00 EST, so 01:30 comes twice.
    expect(next('30 1 * * *', '2026-11-01T05:00:00Z', 'America/New_York')).to.equal('2026-11-01T05:30:00.000Z');
    expect(next('30 1 * * *', '2026-11-01T05:30:00Z', 'America/New_York')).to.equal('2026-11-01T06:30:00.000Z');
    expect(next('30 1 * * *', '2026-11-01T06:30:00Z', 'America/New_York')).to.equal('2026-11-02T06:30:00.000Z');
  });

  it('formats a scheduled time as RFC 3339 in the time zone, Z at offset 0', () => {
    const t = Date.parse('2026-01-01T00:00:00Z');
    expect(rfc3339In(t)).to.equal('2026-01-01T00:00:00Z');
    expect(rfc3339In(t, 'Asia/Tokyo')).to.equal('2026-01-01T09:00:00+09:00');
    expect(rfc3339In(t, 'America/St_Johns')).to.equal('2025-12-31T20:30:00-03:30');
  });

  it('accepts the time zones Go loads, by exact name, and names what is wrong with others', () => {
    expect(timeZoneError('Europe/Berlin')).to.equal(undefined);
    expect(timeZoneError('UTC')).to.equal(undefined);
    expect(timeZoneError('Mars/Olympus_Mons')).to.equal('unknown time zone Mars/Olympus_Mons');
    expect(timeZoneError('europe/berlin')).to.equal('unknown time zone europe/berlin');
    expect(timeZoneError('../etc/passwd')).to.equal('unknown time zone ../etc/passwd');
    expect(timeZoneError('Local')).to.match(/must be an explicit time zone/);
    expect(timeZoneError('')).to.equal('timeZone must be nil or non-empty string');
  });
});
