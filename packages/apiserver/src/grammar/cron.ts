/**
 * The cron schedule grammar of CronJob `spec.schedule`, as the cronjob controller parses it
 * (robfig/cron's standard parser): five fields (minute hour day-of-month month day-of-week) with
 * `*`, `?`, lists, ranges, steps and month/day names, or a descriptor (`@hourly` ...), evaluated
 * in UTC or in the IANA time zone of `spec.timeZone`; or `@every <Go duration>`, a constant delay
 * from the whole second (undocumented in Kubernetes, but its parser takes it). When both day fields are restricted, a day
 * matching either one matches, as in cron.
 */

const DESCRIPTORS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

interface FieldSpec {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
  /** Names counted from this value (1 for months). */
  readonly nameBase?: number;
}

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS, nameBase: 1 },
  { name: 'day of week', min: 0, max: 7, names: DAYS, nameBase: 0 },
];

/** A five-field schedule, or `@every`'s constant delay. */
export type CronSchedule = FieldSchedule | EverySchedule;

/** `@every <duration>`: robfig's ConstantDelaySchedule, whole seconds, at least one. */
export interface EverySchedule {
  readonly everyMs: number;
}

interface FieldSchedule {
  readonly minutes: ReadonlySet<number>;
  readonly hours: ReadonlySet<number>;
  readonly daysOfMonth: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  readonly daysOfWeek: ReadonlySet<number>;
  readonly domRestricted: boolean;
  readonly dowRestricted: boolean;
}

export class CronError extends Error {}

function value(text: string, f: FieldSpec): number {
  const named = f.names?.indexOf(text.toLowerCase()) ?? -1;
  if (named >= 0) return named + (f.nameBase ?? 0);
  if (!/^\d+$/.test(text)) throw new CronError(`failed to parse int from ${text}`);
  // Go's strconv.Atoi takes up to a 64-bit int; past it the real server refuses the schedule.
  if (BigInt(text) > MAX_INT64)
    throw new CronError(`failed to parse int from ${text}: strconv.Atoi: parsing "${text}": value out of range`);
  return Number(text);
}

const MAX_INT64 = 2n ** 63n - 1n;

const DURATION_UNITS_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** `@every`'s delay: Go's time.ParseDuration, then robfig's Every (whole seconds, at least 1 s). */
function everyDelayMs(text: string): number {
  const invalid = (): CronError => new CronError(`failed to parse duration @every ${text}: time: invalid duration ${JSON.stringify(text)}`);
  if (/^[-+]?\d*\.?\d+$/.test(text) && !/^[-+]?0$/.test(text))
    throw new CronError(`failed to parse duration @every ${text}: time: missing unit in duration ${JSON.stringify(text)}`);
  const match = /^([-+]?)((?:\d*\.?\d*[a-zµμ]+)+|0)$/.exec(text);
  if (!match) throw invalid();
  let ms = 0;
  for (const [, number = '', unit = ''] of (match[2] ?? '').matchAll(/(\d*\.?\d*)([a-zµμ]+)/g)) {
    const factor = DURATION_UNITS_MS[unit];
    if (number === '' || number === '.') throw invalid();
    if (factor === undefined)
      throw new CronError(
        `failed to parse duration @every ${text}: time: unknown unit ${JSON.stringify(unit)} in duration ${JSON.stringify(text)}`,
      );
    ms += Number(number) * factor;
  }
  const signed = match[1] === '-' ? -ms : ms;
  return Math.max(1000, Math.floor(signed / 1000) * 1000);
}

function parseField(text: string, f: FieldSpec): Set<number> {
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const [range = '', stepText, extra] = part.split('/');
    if (extra !== undefined) throw new CronError(`too many slashes: ${part}`);
    let lo: number;
    let hi: number;
    if (range === '*' || range === '?') [lo, hi] = [f.min, f.max];
    else {
      const [a = '', b, more] = range.split('-');
      if (more !== undefined) throw new CronError(`too many hyphens: ${range}`);
      lo = value(a, f);
      hi = b === undefined ? (stepText === undefined ? lo : f.max) : value(b, f);
    }
    const step = stepText === undefined ? 1 : value(stepText, f);
    if (lo < f.min) throw new CronError(`beginning of range (${lo}) below minimum (${f.min}): ${part}`);
    if (hi > f.max) throw new CronError(`end of range (${hi}) above maximum (${f.max}): ${part}`);
    if (lo > hi) throw new CronError(`beginning of range (${lo}) beyond end of range (${hi}): ${part}`);
    if (step === 0) throw new CronError(`step of range should be a positive number: ${part}`);
    for (let v = lo; v <= hi; v += step) out.add(f.name === 'day of week' && v === 7 ? 0 : v);
  }
  return out;
}

export function parseCron(schedule: string): CronSchedule {
  const text = schedule.trim();
  if (text.startsWith('TZ=') || text.startsWith('CRON_TZ=')) throw new CronError('time zones in the schedule are not supported');
  if (text.startsWith('@every ')) return { everyMs: everyDelayMs(text.slice('@every '.length)) };
  const expanded = text.startsWith('@') ? DESCRIPTORS[text.toLowerCase()] : text;
  if (expanded === undefined) throw new CronError(`unrecognized descriptor: ${text}`);
  const fields = expanded.split(/\s+/);
  if (fields.length !== 5) throw new CronError(`expected exactly 5 fields, found ${fields.length}: ${text}`);
  const [minutes, hours, daysOfMonth, months, daysOfWeek] = fields.map((f, i) => parseField(f, FIELDS[i])) as [
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
  ];
  const star = (f: string | undefined): boolean => f !== undefined && (f.startsWith('*') || f.startsWith('?'));
  return { minutes, hours, daysOfMonth, months, daysOfWeek, domRestricted: !star(fields[2]), dowRestricted: !star(fields[4]) };
}

/** The validation message for a schedule, or undefined when it parses. */
export function cronError(schedule: string): string | undefined {
  try {
    parseCron(schedule);
    return undefined;
  } catch (err) {
    if (err instanceof CronError) return err.message;
    throw err;
  }
}

const MINUTE = 60_000;

/** The wall-clock fields of an instant in a time zone. */
interface WallTime {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly weekday: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
}

type WallClock = (ms: number) => WallTime;

const utcClock: WallClock = (ms) => {
  const d = new Date(ms);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    weekday: d.getUTCDay(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
  };
};

const zoneClocks = new Map<string, WallClock>();

function zoneClock(timeZone: string): WallClock {
  const known = zoneClocks.get(timeZone);
  if (known) return known;
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    weekday: 'short',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  const clock: WallClock = (ms) => {
    const parts: Record<string, string> = {};
    for (const p of format.formatToParts(ms)) parts[p.type] = p.value;
    const n = (type: string): number => Number(parts[type]);
    return {
      year: n('year'),
      month: n('month'),
      day: n('day'),
      weekday: DAYS.indexOf(String(parts.weekday).toLowerCase()),
      hour: n('hour'),
      minute: n('minute'),
      second: n('second'),
    };
  };
  zoneClocks.set(timeZone, clock);
  return clock;
}

function wallClock(timeZone: string | undefined): WallClock {
  return timeZone === undefined || timeZone === 'UTC' ? utcClock : zoneClock(timeZone);
}

/**
 * Why `spec.timeZone` is not a zone Go's time.LoadLocation loads, in the API server's wording, or
 * undefined. Names are matched exactly, as Go looks them up in the zoneinfo files.
 */
export function timeZoneError(timeZone: string): string | undefined {
  if (timeZone === '') return 'timeZone must be nil or non-empty string';
  if (timeZone.split('/').some((part) => part === '.' || part === '..' || part.startsWith('-') || !/^[A-Za-z.\-_0-9+]{1,14}$/.test(part)))
    return `unknown time zone ${timeZone}`;
  if (timeZone.toLowerCase() === 'local') return 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones';
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone }).resolvedOptions().timeZone;
  } catch {
    return `unknown time zone ${timeZone}`;
  }
  // Intl ignores case; Go's zoneinfo lookup does not.
  if (resolved !== timeZone && resolved.toLowerCase() === timeZone.toLowerCase()) return `unknown time zone ${timeZone}`;
  return undefined;
}

function dayMatches(s: FieldSchedule, w: WallTime): boolean {
  const dom = s.daysOfMonth.has(w.day);
  const dow = s.daysOfWeek.has(w.weekday);
  if (s.domRestricted && s.dowRestricted) return dom || dow;
  return dom && dow;
}

/**
 * The first scheduled time strictly after `after` (whole minutes), matched against the wall clock
 * of `timeZone` (default UTC); undefined if none within 5 years. Time moves forward instant by
 * instant, as robfig/cron's does: a wall time a daylight-saving jump skips does not run, one the
 * clock passes twice runs twice.
 */
export function nextRun(s: CronSchedule, after: Date, timeZone?: string): Date | undefined {
  if ('everyMs' in s) return new Date(Math.floor(after.getTime() / 1000) * 1000 + s.everyMs);
  const wall = wallClock(timeZone);
  let t = Math.floor(after.getTime() / MINUTE) * MINUTE + MINUTE;
  const limit = after.getTime() + 5 * 366 * 24 * 60 * MINUTE;
  while (t <= limit) {
    const w = wall(t);
    if (!s.months.has(w.month) || !dayMatches(s, w)) {
      t += ((23 - w.hour) * 60 + (60 - w.minute)) * MINUTE;
      // Across a daylight-saving change the next day starts an hour off: land on its midnight.
      const h = wall(t).hour;
      if (h > 12) t += (24 - h) * 60 * MINUTE;
      continue;
    }
    if (!s.hours.has(w.hour)) {
      t += (60 - w.minute) * MINUTE;
      continue;
    }
    if (!s.minutes.has(w.minute)) {
      t += MINUTE;
      continue;
    }
    return new Date(t);
  }
  return undefined;
}

/** An instant as Go formats time.RFC3339 in a time zone: `2026-01-01T09:00:00+09:00`, `Z` at offset 0. */
export function rfc3339In(ms: number, timeZone?: string): string {
  const w = wallClock(timeZone)(ms);
  const seconds = Math.floor(ms / 1000) * 1000;
  const offset = Math.round((Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - seconds) / MINUTE);
  const pad = (n: number, width = 2): string => String(n).padStart(width, '0');
  const zone = offset === 0 ? 'Z' : `${offset < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  return `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}${zone}`;
}
