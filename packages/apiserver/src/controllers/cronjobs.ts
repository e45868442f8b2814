/**
 * The CronJob controller, as kube-controller-manager's (cronjob_controllerv2): at each scheduled
 * time a Job `<cronjob>-<minutes since the epoch>` from `spec.jobTemplate`; `spec.timeZone`,
 * `startingDeadlineSeconds` (a start missed by more is skipped), more than 100 missed starts warned
 * about (only the most recent runs), `concurrencyPolicy` Allow/Forbid/Replace, `suspend`, finished
 * Jobs beyond the history limits deleted oldest first; status active, lastScheduleTime and
 * lastSuccessfulTime; the same Events. The next sync is a timer on the simulation clock, so a test
 * moves a CronJob through its schedule without waiting.
 */
import type { InternalWrites } from '../api/internal-writes.js';
import { CronError, nextRun, parseCron, rfc3339In, timeZoneError, type CronSchedule } from '../grammar/cron.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { deepEqual, isJsonObject } from '../base/json.js';
import { getPath, isBeingDeleted, nameOf, namespaceOf, resourceVersionOf, timestamp, uidOf } from '../base/meta.js';
import type { Store, StoreEvent } from '../storage/store.js';
import { Timers, type SimulationClock } from './clock.js';
import { jobFinished, JOBS_KEY } from './jobs.js';
import { WorkQueue } from '../base/work-queue.js';
import type { ServerEventRecorder } from './recorder.js';
import { controlled, CONTROLLER_MANAGER, controllerRef, controllerUid, ownerToSync } from './workload.js';

export const CRONJOBS_KEY = 'batch/cronjobs';
const COMPONENT = 'cronjob-controller';
const SCHEDULED_TIMESTAMP = 'batch.kubernetes.io/cronjob-scheduled-timestamp';
/** Wakes up this long after a scheduled time (nextScheduleDelta, against clock skew). */
const NEXT_SCHEDULE_DELTA_MS = 100;
const TOO_MANY_MISSED = 100;

interface Schedule {
  readonly cron: CronSchedule;
  readonly timeZone: string | undefined;
}

/** The most recent start a CronJob missed (mostRecentScheduleTime), in milliseconds. */
interface Missed {
  earliest: number;
  mostRecent?: number;
  count: number;
  error?: string;
}

/** The schedule in its time zone, or why it does not parse. */
function scheduleOf(cj: JsonObject): Schedule | CronError {
  const timeZone = getPath(cj, ['spec', 'timeZone']);
  try {
    return {
      cron: parseCron(String(getPath(cj, ['spec', 'schedule']) ?? '')),
      timeZone: typeof timeZone === 'string' && !timeZoneError(timeZone) ? timeZone : undefined,
    };
  } catch (err) {
    if (err instanceof CronError) return err;
    throw err;
  }
}

function next(s: Schedule, after: number): number | undefined {
  return nextRun(s.cron, new Date(after), s.timeZone)?.getTime();
}

function timeOf(v: JsonValue | undefined): number | undefined {
  const ms = typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isNaN(ms) ? undefined : ms;
}

function deadlineSeconds(cj: JsonObject): number | undefined {
  const v = getPath(cj, ['spec', 'startingDeadlineSeconds']);
  return typeof v === 'number' ? v : undefined;
}

/** Since the last scheduled time (or creation), the latest start that is due, and roughly how many were missed. */
function mostRecentScheduleTime(cj: JsonObject, now: number, s: Schedule, withDeadline: boolean): Missed {
  let earliest = timeOf(getPath(cj, ['status', 'lastScheduleTime'])) ?? timeOf(getPath(cj, ['metadata', 'creationTimestamp'])) ?? now;
  const deadline = deadlineSeconds(cj);
  if (withDeadline && deadline !== undefined) earliest = Math.max(earliest, now - deadline * 1000);
  const t1 = next(s, earliest);
  const t2 = t1 === undefined ? undefined : next(s, t1);
  if (t1 !== undefined && now < t1) return { earliest, count: 0 };
  if (t1 !== undefined && t2 !== undefined && now < t2) return { earliest, mostRecent: t1, count: 0 };
  const between = t1 === undefined || t2 === undefined ? 0 : Math.round((t2 - t1) / 1000);
  if (t1 === undefined || between < 1) return { earliest, count: 0, error: 'time difference between two schedules is less than 1 second' };
  // As the real controller: estimate the count from the first interval, then walk the last few.
  const count = Math.trunc(Math.trunc((now - t1) / 1000) / between) + 1;
  let mostRecent: number | undefined;
  for (let t = next(s, t1 + (count - 2) * between * 1000); t !== undefined && t <= now; t = next(s, t)) mostRecent = t;
  return { earliest, mostRecent, count };
}

/** Milliseconds until the sync after the next scheduled time (nextScheduleTimeDuration). */
function untilNextSchedule(cj: JsonObject, now: number, s: Schedule): number | undefined {
  const m = mostRecentScheduleTime(cj, now, s, false);
  const from = m.error ? now : (m.mostRecent ?? (m.count === 0 ? m.earliest : now));
  const at = next(s, from);
  return at === undefined ? undefined : at + NEXT_SCHEDULE_DELTA_MS - now;
}

/** `Thu, 01 Jan 2026 10:00:00 +0000` (Go's time.RFC1123Z of a UTC time). */
function rfc1123z(ms: number): string {
  return new Date(ms).toUTCString().replace(/GMT$/, '+0000');
}

function activeRefs(status: JsonObject): JsonObject[] {
  return Array.isArray(status.active) ? status.active.filter(isJsonObject) : [];
}

function setActive(status: JsonObject, refs: JsonObject[]): void {
  if (refs.length > 0) status.active = refs;
  else delete status.active;
}

/** Oldest first: by start time (never started last), then by name (byJobStartTime). */
function byStartTime(a: JsonObject, b: JsonObject): number {
  const sa = timeOf(getPath(a, ['status', 'startTime']));
  const sb = timeOf(getPath(b, ['status', 'startTime']));
  if (sa === undefined || sb === undefined) return sa === sb ? nameOf(a).localeCompare(nameOf(b)) : sa === undefined ? 1 : -1;
  return sa === sb ? nameOf(a).localeCompare(nameOf(b)) : sa - sb;
}

export class CronJobController {
  private readonly queue: WorkQueue;
  private readonly timers: Timers;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly writes: InternalWrites,
    private readonly store: Store,
    private readonly recorder: ServerEventRecorder,
    private readonly clock: SimulationClock,
  ) {
    this.queue = new WorkQueue('cronjob controller', (key) => this.sync(key));
    this.timers = new Timers(clock);
    this.unsubscribe = store.onEvent((e) => this.onEvent(e));
  }

  resumeAll(): void {
    for (const cj of this.store.list(CRONJOBS_KEY)) this.queue.add(`${namespaceOf(cj)}/${nameOf(cj)}`);
  }

  private onEvent(e: StoreEvent): void {
    if (e.resource === CRONJOBS_KEY) {
      const key = `${namespaceOf(e.object)}/${nameOf(e.object)}`;
      if (e.type === 'DELETED') return this.timers.clear(key);
      // A new schedule takes effect at its next time, not at once (updateCronJob).
      const changed =
        e.type === 'MODIFIED' &&
        e.prev &&
        ['schedule', 'timeZone'].some((f) => getPath(e.prev, ['spec', f]) !== getPath(e.object, ['spec', f]));
      const s = changed ? scheduleOf(e.object) : undefined;
      const wait = s && !(s instanceof CronError) ? untilNextSchedule(e.object, this.clock.now(), s) : undefined;
      if (wait !== undefined) this.timers.set(key, wait, () => this.queue.add(key));
      else this.queue.add(key);
      return;
    }
    const key = ownerToSync(this.store, e, CRONJOBS_KEY, JOBS_KEY);
    if (key) this.queue.add(key);
  }

  private sync(key: string): void {
    const [ns = '', name = ''] = key.split('/');
    const cj = this.store.get(CRONJOBS_KEY, ns, name);
    if (!cj) return this.timers.clear(key);
    const jobs = controlled(this.store, JOBS_KEY, cj);
    const status: JsonObject = structuredClone(isJsonObject(cj.status) ? cj.status : {});
    const cleaned = this.cleanupFinishedJobs(cj, status, jobs);
    const requeueAfter = this.syncCronJob(cj, status, jobs);
    if (cleaned || !deepEqual(status, cj.status ?? {})) {
      this.writes.mutate(CRONJOBS_KEY, ns, name, (obj) => void (obj.status = status), {
        subresource: 'status',
        manager: CONTROLLER_MANAGER,
      });
    }
    if (requeueAfter !== undefined) this.timers.set(key, Math.max(0, requeueAfter), () => this.queue.add(key));
    else this.timers.clear(key);
  }

  /** Deletes the oldest finished Jobs beyond successfulJobsHistoryLimit and failedJobsHistoryLimit. */
  private cleanupFinishedJobs(cj: JsonObject, status: JsonObject, jobs: JsonObject[]): boolean {
    let changed = false;
    for (const [outcome, limitField] of [
      ['Complete', 'successfulJobsHistoryLimit'],
      ['Failed', 'failedJobsHistoryLimit'],
    ] as const) {
      const limit = getPath(cj, ['spec', limitField]);
      if (typeof limit !== 'number') continue;
      const finished = jobs.filter((j) => jobFinished(j) === outcome && !isBeingDeleted(j)).sort(byStartTime);
      for (const job of finished.slice(0, Math.max(0, finished.length - limit))) changed = this.deleteJob(cj, status, job) || changed;
    }
    return changed;
  }

  private deleteJob(cj: JsonObject, status: JsonObject, job: JsonObject): boolean {
    this.writes.deleteInternal(JOBS_KEY, namespaceOf(job), nameOf(job), 'Background');
    setActive(
      status,
      activeRefs(status).filter((r) => r.uid !== uidOf(job)),
    );
    this.recorder.record(cj, 'Normal', 'SuccessfulDelete', `Deleted job ${nameOf(job)}`, COMPONENT);
    return true;
  }

  /** Brings the status up to date with the Jobs and starts one when it is due; returns when to sync next. */
  private syncCronJob(cj: JsonObject, status: JsonObject, jobs: JsonObject[]): number | undefined {
    const now = this.clock.now();
    const ns = namespaceOf(cj);
    for (const job of jobs) {
      const inActive = activeRefs(status).some((r) => r.uid === uidOf(job));
      const finished = jobFinished(job);
      if (!inActive && !finished) {
        this.recorder.record(
          cj,
          'Warning',
          'UnexpectedJob',
          `Saw a job that the controller did not create or forgot: ${nameOf(job)}`,
          COMPONENT,
        );
      } else if (inActive && finished) {
        setActive(
          status,
          activeRefs(status).filter((r) => r.uid !== uidOf(job)),
        );
        this.recorder.record(cj, 'Normal', 'SawCompletedJob', `Saw completed job: ${nameOf(job)}, status: ${finished}`, COMPONENT);
      } else if (finished === 'Complete') {
        const completed = timeOf(getPath(job, ['status', 'completionTime']));
        const last = timeOf(status.lastSuccessfulTime);
        if (completed !== undefined && (last === undefined || completed > last))
          status.lastSuccessfulTime = getPath(job, ['status', 'completionTime']) ?? null;
      }
    }
    const uids = new Set(jobs.map(uidOf));
    for (const ref of activeRefs(status)) {
      if (uids.has(String(ref.uid)) || this.store.get(JOBS_KEY, ns, String(ref.name))) continue;
      this.recorder.record(cj, 'Normal', 'MissingJob', `Active job went missing: ${String(ref.name)}`, COMPONENT);
      setActive(
        status,
        activeRefs(status).filter((r) => r.uid !== ref.uid),
      );
    }
    if (isBeingDeleted(cj)) return undefined;

    const timeZone = getPath(cj, ['spec', 'timeZone']);
    const zoneError = typeof timeZone === 'string' ? timeZoneError(timeZone) : undefined;
    if (zoneError) {
      this.recorder.record(cj, 'Warning', 'UnknownTimeZone', `invalid timeZone: ${JSON.stringify(timeZone)}: ${zoneError}`, COMPONENT);
      return undefined;
    }
    if (getPath(cj, ['spec', 'suspend']) === true) return undefined;
    const schedule = scheduleOf(cj);
    if (schedule instanceof CronError) {
      this.recorder.record(
        cj,
        'Warning',
        'UnparseableSchedule',
        `unparseable schedule: ${JSON.stringify(getPath(cj, ['spec', 'schedule']) ?? '')} : ${schedule.message}`,
        COMPONENT,
      );
      return undefined;
    }
    const withStatus = { ...cj, status };
    const missed = mostRecentScheduleTime(withStatus, now, schedule, true);
    if (missed.error) {
      this.recorder.record(
        cj,
        'Warning',
        'InvalidSchedule',
        `invalid schedule: ${String(getPath(cj, ['spec', 'schedule']))} : ${missed.error}`,
        COMPONENT,
      );
      return undefined;
    }
    const scheduled = missed.mostRecent;
    if (scheduled === undefined || scheduled > now) return untilNextSchedule(withStatus, now, schedule);
    if (missed.count > TOO_MANY_MISSED) {
      this.recorder.record(
        cj,
        'Warning',
        'TooManyMissedTimes',
        'too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew',
        COMPONENT,
      );
    }
    const deadline = deadlineSeconds(cj);
    if (deadline !== undefined && scheduled + deadline * 1000 < now) {
      this.recorder.record(cj, 'Warning', 'MissSchedule', `Missed scheduled time to start a job: ${rfc1123z(scheduled)}`, COMPONENT);
      return untilNextSchedule(withStatus, now, schedule);
    }
    const jobName = `${nameOf(cj)}-${Math.floor(scheduled / 60_000)}`;
    if (activeRefs(status).some((r) => r.name === jobName) || timeOf(status.lastScheduleTime) === scheduled)
      return untilNextSchedule(withStatus, now, schedule);
    const policy = getPath(cj, ['spec', 'concurrencyPolicy']);
    if (policy === 'Forbid' && activeRefs(status).length > 0) {
      this.recorder.record(
        cj,
        'Normal',
        'JobAlreadyActive',
        'Not starting job because prior execution is running and concurrency policy is Forbid',
        COMPONENT,
      );
      return untilNextSchedule(withStatus, now, schedule);
    }
    if (policy === 'Replace') {
      for (const ref of activeRefs(status)) {
        const job = this.store.get(JOBS_KEY, ns, String(ref.name));
        if (job) this.deleteJob(cj, status, job);
      }
    }
    const created = this.writes.createInternal(
      JOBS_KEY,
      this.jobFromTemplate(cj, jobName, scheduled, schedule.timeZone),
      CONTROLLER_MANAGER,
    );
    if (created) this.recorder.record(cj, 'Normal', 'SuccessfulCreate', `Created job ${jobName}`, COMPONENT);
    // Otherwise created before the status recorded it; a Job someone else made keeps its own status.
    const job = created ?? this.store.get(JOBS_KEY, ns, jobName);
    // Not started (the name taken by another's Job, or the create refused): the next scheduled time
    // still comes, as the real controller's retries reach it; without a timer nothing would wake this one.
    if (!job || controllerUid(job) !== uidOf(cj) || (!created && activeRefs(status).some((r) => r.uid === uidOf(job))))
      return untilNextSchedule(withStatus, now, schedule);
    setActive(status, [
      ...activeRefs(status),
      { kind: 'Job', namespace: ns, name: jobName, uid: uidOf(job), apiVersion: 'batch/v1', resourceVersion: resourceVersionOf(job) },
    ]);
    status.lastScheduleTime = timestamp(new Date(scheduled));
    return untilNextSchedule(withStatus, now, schedule);
  }

  /** The Job of one scheduled time (getJobFromTemplate2): the template's labels, annotations and spec. */
  private jobFromTemplate(cj: JsonObject, name: string, scheduled: number, timeZone: string | undefined): JsonObject {
    const template = getPath(cj, ['spec', 'jobTemplate']);
    const labels = getPath(template, ['metadata', 'labels']);
    const annotations = getPath(template, ['metadata', 'annotations']);
    const metadata: JsonObject = {
      name,
      namespace: namespaceOf(cj),
      annotations: { ...(isJsonObject(annotations) ? annotations : {}), [SCHEDULED_TIMESTAMP]: rfc3339In(scheduled, timeZone) },
      ownerReferences: [controllerRef(cj)],
    };
    if (isJsonObject(labels) && Object.keys(labels).length > 0) metadata.labels = { ...labels };
    return { apiVersion: 'batch/v1', kind: 'Job', metadata, spec: structuredClone(getPath(template, ['spec']) ?? {}) };
  }

  close(): void {
    this.unsubscribe();
    this.timers.close();
    this.queue.close();
  }
}
