/**
 * The cron schedule grammar of CronJob `spec.schedule`, as the cronjob controller parses it
 * (robfig/cron's standard parser): five fields (minute hour day-of-month month day-of-week) with
 * `*`, `?`, lists, ranges, steps and month/day names, or a descriptor (`@hourly` ...). Times are
 * UTC (`spec.timeZone` is not supported). When both day fields are restricted, a day matching
 * either one matches, as in cron.
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

export interface CronSchedule {
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
  return Number(text);
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
  const expanded = text.startsWith('@') ? DESCRIPTORS[text.toLowerCase()] : text;
  if (expanded === undefined) throw new CronError(`unrecognized descriptor: ${text}`);
  const fields = expanded.split(/\s+/);
  if (fields.length !== 5) throw new CronError(`expected exactly 5 fields, found ${fields.length}: ${text}`);
  const [minutes, hours, daysOfMonth, months, daysOfWeek] = fields.map((f, i) => parseField(f, FIELDS[i] as FieldSpec)) as [Set<number>, Set<number>, Set<number>, Set<number>, Set<number>];
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

function dayMatches(s: CronSchedule, d: Date): boolean {
  const dom = s.daysOfMonth.has(d.getUTCDate());
  const dow = s.daysOfWeek.has(d.getUTCDay());
  if (s.domRestricted && s.dowRestricted) return dom || dow;
  return dom && dow;
}

/** The first scheduled time strictly after `after` (UTC, whole minutes); undefined if none within 5 years. */
export function nextRun(s: CronSchedule, after: Date): Date | undefined {
  const t = new Date(after.getTime());
  t.setUTCSeconds(0, 0);
  t.setUTCMinutes(t.getUTCMinutes() + 1);
  const limit = after.getTime() + 5 * 366 * 24 * 3600 * 1000;
  while (t.getTime() <= limit) {
    if (!s.months.has(t.getUTCMonth() + 1)) {
      t.setUTCMonth(t.getUTCMonth() + 1, 1);
      t.setUTCHours(0, 0);
      continue;
    }
    if (!dayMatches(s, t)) {
      t.setUTCDate(t.getUTCDate() + 1);
      t.setUTCHours(0, 0);
      continue;
    }
    if (!s.hours.has(t.getUTCHours())) {
      t.setUTCHours(t.getUTCHours() + 1, 0);
      continue;
    }
    if (!s.minutes.has(t.getUTCMinutes())) {
      t.setUTCMinutes(t.getUTCMinutes() + 1);
      continue;
    }
    return t;
  }
  return undefined;
}
