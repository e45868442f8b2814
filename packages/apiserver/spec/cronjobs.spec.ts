import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { startApiServer, type ApiServer, type SimulateOptions } from '../src/index.js';
import { eventually as waitFor, kubectlAvailable, kubectlSession, startWithClients, type Clients, type KubectlSession } from './helpers.js';
import { ManualClock } from './manual-clock.js';

const WAIT_MS = 20_000;
const eventually = <T>(check: () => Promise<T | undefined | false>, what: string): Promise<T> => waitFor(check, what, WAIT_MS);

/** The Job name the controller gives the run at an ISO time: `<cronjob>-<minutes since the epoch>`. */
/** The Job name the controller gives a scheduled time: the minutes since the epoch, as Go divides Unix() by 60. */
const jobAt = (cronJob: string, iso: string): string => `${cronJob}-${Math.floor(Date.parse(iso) / 60_000)}`;

function cronJob(name: string, spec: Partial<k8s.V1CronJobSpec> = {}, backoffLimit = 6): k8s.V1CronJob {
  return {
    metadata: { name },
    spec: {
      schedule: '* * * * *',
      jobTemplate: {
        metadata: { labels: { app: name }, annotations: { team: 'batch' } },
        spec: { backoffLimit, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'a', image: 'a' }] } } },
      },
      ...spec,
    },
  };
}

describe('apiserver: the simulated CronJob controller, in virtual time', function () {
  this.timeout(120_000);
  let c: Clients;
  let batch: k8s.BatchV1Api;
  let clock: ManualClock;

  /** A server whose simulation (and timestamps) run on a clock at 2026-01-01T00:00:30Z. */
  async function start(simulate: Omit<SimulateOptions, 'clock'> = {}): Promise<void> {
    clock = new ManualClock(Date.parse('2026-01-01T00:00:30Z'));
    c = await startWithClients({ simulate: { nodes: 1, ...simulate, clock } });
    batch = c.kc.makeApiClient(k8s.BatchV1Api);
  }
  afterEach(async () => {
    await c?.server.close();
  });

  const jobs = async (owner: string): Promise<k8s.V1Job[]> =>
    (await batch.listNamespacedJob({ namespace: 'default' })).items
      .filter((j) => j.metadata?.ownerReferences?.[0]?.name === owner)
      .sort((a, b) => String(a.metadata?.name).localeCompare(String(b.metadata?.name)));
  const jobNames = async (owner: string): Promise<string[]> => (await jobs(owner)).map((j) => String(j.metadata?.name));
  const read = (name: string) => batch.readNamespacedCronJob({ name, namespace: 'default' });
  const activeNames = async (name: string): Promise<string[]> => ((await read(name)).status?.active ?? []).map((r) => String(r.name));
  const events = async (name: string): Promise<string[]> =>
    (
      await c.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${name},involvedObject.kind=CronJob` })
    ).items.map((e) => `${e.type} ${e.reason}: ${e.message}`);
  const same = (want: string[]) => async (got: () => Promise<string[]>) => {
    const v = await got();
    return JSON.stringify(v) === JSON.stringify(want) ? v : undefined;
  };
  /** Waits until the CronJob's Jobs are exactly `names` (sorted). */
  const jobsAre = (owner: string, ...names: string[]) =>
    eventually(() => same([...names].sort())(() => jobNames(owner)), `jobs ${names.join(', ')}`);
  const hasEvent = (name: string, text: string) =>
    eventually(async () => (await events(name)).some((e) => e.includes(text)), `event ${text}`);
  /** Advances by 0 until the check holds: timers of 0 ms (a Pod starting, a Job's Pod ending) fire. */
  const settle = <T>(check: () => Promise<T | undefined | false>, what: string): Promise<T> =>
    eventually(async () => {
      clock.advance(0);
      return check();
    }, what);
  const complete = async (name: string): Promise<void> => {
    const now = new Date(clock.now()).toISOString().replace(/\.\d+Z$/, 'Z');
    const condition = (type: string) => ({
      type,
      status: 'True',
      lastProbeTime: now,
      lastTransitionTime: now,
      reason: 'CompletionsReached',
      message: 'Reached expected number of succeeded pods',
    });
    await batch.patchNamespacedJobStatus(
      {
        name,
        namespace: 'default',
        body: {
          status: {
            startTime: now,
            completionTime: now,
            succeeded: 1,
            conditions: [condition('SuccessCriteriaMet'), condition('Complete')],
          },
        },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
  };

  it('creates a Job named for each scheduled minute from the template, owned by the CronJob, and records it in status and Events', async () => {
    await start({ jobs: false });
    await batch.createNamespacedCronJob({ namespace: 'default', body: cronJob('every5', { schedule: '*/5 * * * *' }) });
    clock.advanceTo('2026-01-01T00:04:59Z');
    clock.advanceTo('2026-01-01T00:05:00.100Z');
    await jobsAre('every5', jobAt('every5', '2026-01-01T00:05:00Z'));
    const [job] = await jobs('every5');
    expect(job?.metadata?.ownerReferences).to.deep.equal([
      {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        name: 'every5',
        uid: (await read('every5')).metadata?.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(job?.metadata?.annotations).to.deep.include({
      team: 'batch',
      'batch.kubernetes.io/cronjob-scheduled-timestamp': '2026-01-01T00:05:00Z',
    });
    expect(job?.metadata?.labels).to.deep.include({ app: 'every5' });
    expect(job?.spec?.backoffLimit).to.equal(6);
    const cj = await eventually(async () => ((await read('every5')).status?.active?.length === 1 ? read('every5') : undefined), 'active');
    expect(cj.status?.active?.[0]).to.deep.include({
      kind: 'Job',
      apiVersion: 'batch/v1',
      namespace: 'default',
      name: job?.metadata?.name,
      uid: job?.metadata?.uid,
    });
    expect(cj.status?.lastScheduleTime?.toISOString()).to.equal('2026-01-01T00:05:00.000Z');
    // Allow (the default): the next run starts while the first is still active.
    clock.advanceTo('2026-01-01T00:10:00.100Z');
    await jobsAre('every5', jobAt('every5', '2026-01-01T00:05:00Z'), jobAt('every5', '2026-01-01T00:10:00Z'));
    await eventually(async () => (await activeNames('every5')).length === 2, 'two active');
    await hasEvent('every5', `Normal SuccessfulCreate: Created job ${jobAt('every5', '2026-01-01T00:10:00Z')}`);
  });

  it("@every 2m: a Job every two minutes from the CronJob's creation, as the real controller takes robfig's constant delay", async () => {
    await start({ jobs: false });
    await batch.createNamespacedCronJob({ namespace: 'default', body: cronJob('every2m', { schedule: '@every 2m' }) });
    clock.advanceTo('2026-01-01T00:02:29Z');
    expect(await jobNames('every2m')).to.deep.equal([]);
    clock.advanceTo('2026-01-01T00:02:30.100Z');
    await jobsAre('every2m', jobAt('every2m', '2026-01-01T00:02:30Z'));
    clock.advanceTo('2026-01-01T00:04:30.100Z');
    await jobsAre('every2m', jobAt('every2m', '2026-01-01T00:02:30Z'), jobAt('every2m', '2026-01-01T00:04:30Z'));
  });

  it('Forbid skips a run while a Job is active (JobAlreadyActive); a deleted active Job is MissingJob; a finished one SawCompletedJob', async () => {
    await start({ jobs: false });
    await batch.createNamespacedCronJob({ namespace: 'default', body: cronJob('forbid', { concurrencyPolicy: 'Forbid' }) });
    clock.advanceTo('2026-01-01T00:01:00.100Z');
    const first = jobAt('forbid', '2026-01-01T00:01:00Z');
    await jobsAre('forbid', first);
    await eventually(() => same([first])(() => activeNames('forbid')), 'first active');
    clock.advanceTo('2026-01-01T00:02:00.100Z');
    await hasEvent(
      'forbid',
      'Normal JobAlreadyActive: Not starting job because prior execution is running and concurrency policy is Forbid',
    );
    expect(await jobNames('forbid')).to.deep.equal([first]);

    await batch.deleteNamespacedJob({ name: first, namespace: 'default' });
    await hasEvent('forbid', `Normal MissingJob: Active job went missing: ${first}`);
    // The run Forbid held back is still the most recent unmet one: it starts now.
    const second = jobAt('forbid', '2026-01-01T00:02:00Z');
    await jobsAre('forbid', second);
    await eventually(() => same([second])(() => activeNames('forbid')), 'second active');

    await complete(second);
    await hasEvent('forbid', `Normal SawCompletedJob: Saw completed job: ${second}, status: Complete`);
    const cj = await eventually(async () => {
      const x = await read('forbid');
      return !x.status?.active && x.status?.lastSuccessfulTime ? x : undefined;
    }, 'lastSuccessfulTime');
    expect(cj.status?.lastSuccessfulTime?.toISOString()).to.equal('2026-01-01T00:02:00.000Z');
    clock.advanceTo('2026-01-01T00:03:00.100Z');
    await jobsAre('forbid', second, jobAt('forbid', '2026-01-01T00:03:00Z'));
  });

  it('Replace deletes the active Job (SuccessfulDelete) and starts the new one', async () => {
    await start({ jobs: false });
    await batch.createNamespacedCronJob({ namespace: 'default', body: cronJob('replace', { concurrencyPolicy: 'Replace' }) });
    clock.advanceTo('2026-01-01T00:01:00.100Z');
    const first = jobAt('replace', '2026-01-01T00:01:00Z');
    await jobsAre('replace', first);
    await eventually(() => same([first])(() => activeNames('replace')), 'first active');
    clock.advanceTo('2026-01-01T00:02:00.100Z');
    const second = jobAt('replace', '2026-01-01T00:02:00Z');
    await jobsAre('replace', second);
    await eventually(() => same([second])(() => activeNames('replace')), 'only the second active');
    await hasEvent('replace', `Normal SuccessfulDelete: Deleted job ${first}`);
  });

  it('a suspended CronJob starts nothing; resumed, it starts only the most recent missed run, or none past startingDeadlineSeconds', async () => {
    await start({ jobs: false });
    await batch.createNamespacedCronJob({ namespace: 'default', body: cronJob('late', { suspend: true }) });
    await batch.createNamespacedCronJob({ namespace: 'default', body: cronJob('strict', { suspend: true, startingDeadlineSeconds: 10 }) });
    for (const t of ['00:01:00.100', '00:02:00.100', '00:03:00.100', '00:03:30']) clock.advanceTo(`2026-01-01T${t}Z`);
    const resume = { spec: { suspend: false } };
    for (const name of ['late', 'strict']) {
      await batch.patchNamespacedCronJob(
        { name, namespace: 'default', body: resume },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
    }
    await jobsAre('late', jobAt('late', '2026-01-01T00:03:00Z'));
    // 00:03:00 is more than 10 s ago: skipped; the next run is on time.
    clock.advanceTo('2026-01-01T00:04:00.100Z');
    await jobsAre('strict', jobAt('strict', '2026-01-01T00:04:00Z'));
    expect(await jobNames('late')).to.include(jobAt('late', '2026-01-01T00:04:00Z'));
  });

  it('more than 100 missed runs: the Warning TooManyMissedTimes, and only the most recent runs', async () => {
    await start({ jobs: false });
    await batch.createNamespacedCronJob({ namespace: 'default', body: cronJob('asleep', { suspend: true }) });
    clock.advanceTo('2026-01-01T02:00:30Z');
    await batch.patchNamespacedCronJob(
      { name: 'asleep', namespace: 'default', body: { spec: { suspend: false } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await jobsAre('asleep', jobAt('asleep', '2026-01-01T02:00:00Z'));
    await hasEvent(
      'asleep',
      'Warning TooManyMissedTimes: too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew',
    );
  });

  it('keeps successfulJobsHistoryLimit succeeded and failedJobsHistoryLimit failed Jobs, deleting the oldest', async () => {
    // Each Job's first Pod fails: with backoffLimit 0 the Job fails, with 1 its second Pod succeeds.
    await start({ jobs: { failures: 1 } });
    await batch.createNamespacedCronJob({ namespace: 'default', body: cronJob('good', { successfulJobsHistoryLimit: 2 }, 1) });
    await batch.createNamespacedCronJob({ namespace: 'default', body: cronJob('bad', {}, 0) });
    const minutes = ['00:01', '00:02', '00:03', '00:04'];
    for (const m of minutes) {
      clock.advanceTo(`2026-01-01T${m}:00.100Z`);
      const finished = async (owner: string) =>
        (await jobs(owner))
          .find((j) => j.metadata?.name === jobAt(owner, `2026-01-01T${m}:00Z`))
          ?.status?.conditions?.some((x) => x.status === 'True');
      await settle(async () => (await finished('good')) && (await finished('bad')), `runs at ${m} finished`);
    }
    await settle(
      () => same([jobAt('good', '2026-01-01T00:03:00Z'), jobAt('good', '2026-01-01T00:04:00Z')])(() => jobNames('good')),
      'two succeeded kept',
    );
    await settle(() => same([jobAt('bad', '2026-01-01T00:04:00Z')])(() => jobNames('bad')), 'one failed kept');
    await hasEvent('good', `Normal SuccessfulDelete: Deleted job ${jobAt('good', '2026-01-01T00:01:00Z')}`);
    await hasEvent('bad', `Normal SawCompletedJob: Saw completed job: ${jobAt('bad', '2026-01-01T00:04:00Z')}, status: Failed`);
    expect((await read('good')).status?.lastSuccessfulTime).to.be.a('date');
    expect((await read('bad')).status?.lastSuccessfulTime).to.equal(undefined);
  });

  it('runs on the wall clock of spec.timeZone and stamps the scheduled time in it', async () => {
    await start({ jobs: false });
    // 09:00 in Tokyo is 00:00 UTC; the clock starts at 09:00:30 Tokyo time, just past it.
    await batch.createNamespacedCronJob({
      namespace: 'default',
      body: cronJob('tokyo', { schedule: '0 9 * * *', timeZone: 'Asia/Tokyo' }),
    });
    clock.advanceTo('2026-01-01T09:00:00.100Z');
    clock.advanceTo('2026-01-02T00:00:00.100Z');
    const name = jobAt('tokyo', '2026-01-02T00:00:00Z');
    await jobsAre('tokyo', name);
    expect((await jobs('tokyo'))[0]?.metadata?.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp']).to.equal(
      '2026-01-02T09:00:00+09:00',
    );
  });

  it('rejects a time zone Go does not load and a restartPolicy a Job cannot run, as the API server does', async () => {
    await start({ jobs: false });
    const fail = async (body: k8s.V1CronJob): Promise<string> => {
      try {
        await batch.createNamespacedCronJob({ namespace: 'default', body });
        return 'created';
      } catch (err) {
        return String((JSON.parse(String((err as k8s.ApiException<string>).body)) as { message: string }).message);
      }
    };
    expect(await fail(cronJob('mars', { timeZone: 'Mars/Olympus_Mons' }))).to.contain(
      'spec.timeZone: Invalid value: "Mars/Olympus_Mons": unknown time zone Mars/Olympus_Mons',
    );
    const always = cronJob('always');
    always.spec.jobTemplate.spec!.template.spec!.restartPolicy = 'Always';
    expect(await fail(always)).to.contain(
      'spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"',
    );
  });

  it('a run whose Job name another Job holds is skipped, and the next scheduled run still starts', async () => {
    await start({ jobs: false });
    const taken = jobAt('squat', '2026-01-01T00:01:00Z');
    await batch.createNamespacedJob({
      namespace: 'default',
      body: {
        metadata: { name: taken },
        spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'a', image: 'a' }] } } },
      },
    });
    await batch.createNamespacedCronJob({ namespace: 'default', body: cronJob('squat') });
    // A CronJob on the same schedule: once its Job is there, the sync of that minute has run for both.
    await batch.createNamespacedCronJob({ namespace: 'default', body: cronJob('marker') });
    clock.advanceTo('2026-01-01T00:01:00.100Z');
    await jobsAre('marker', jobAt('marker', '2026-01-01T00:01:00Z'));
    expect(await jobNames('squat')).to.deep.equal([]);
    clock.advanceTo('2026-01-01T00:02:00.100Z');
    await jobsAre('squat', jobAt('squat', '2026-01-01T00:02:00Z'));
  });

  it('cronJobs: false leaves CronJobs alone', async () => {
    await start({ jobs: false, cronJobs: false });
    await batch.createNamespacedCronJob({ namespace: 'default', body: cronJob('idle') });
    await batch.createNamespacedCronJob({ namespace: 'default', body: cronJob('marker', { suspend: true }) });
    clock.advanceTo('2026-01-01T00:05:00Z');
    await eventually(async () => (await batch.listNamespacedCronJob({ namespace: 'default' })).items.length === 2, 'both stored');
    expect(await jobNames('idle')).to.deep.equal([]);
    expect(clock.pending()).to.equal(0);
  });
});

describe('apiserver: CronJobs with kubectl v1.32', function () {
  this.timeout(120_000);
  let server: ApiServer;
  let session: KubectlSession;
  let clock: ManualClock;
  let startAt: number;

  before(async function () {
    if (!(await kubectlAvailable())) this.skip(); // kubectl is not on PATH
    // Two minutes ago at :30, so the scheduled times are in the past of the real clock the ages are counted on.
    startAt = Math.floor(Date.now() / 60_000) * 60_000 - 120_000 + 30_000;
    clock = new ManualClock(startAt);
    server = await startApiServer({ clientNode: false, simulate: { jobs: false, clock } });
    session = await kubectlSession(server);
  });
  after(async () => {
    await server?.close();
    await session?.close();
  });
  const kubectl = (...args: string[]): Promise<string> => session.kubectl(...args);

  it('create cronjob; get cronjob shows ACTIVE and LAST SCHEDULE after its time; create job --from=cronjob; describe lists the Events', async () => {
    expect(await kubectl('create', 'cronjob', 'tick', '--image=busybox', '--schedule=* * * * *', '--', 'date')).to.contain(
      'cronjob.batch/tick created',
    );
    expect(await kubectl('get', 'cronjob', 'tick')).to.match(/^tick\s+\* \* \* \* \*\s+<none>\s+False\s+0\s+<none>\s+/m);
    clock.advance(30_100);
    const scheduled = new Date(startAt + 30_000).toISOString().replace('.000Z', 'Z');
    const jobName = `tick-${(startAt + 30_000) / 60_000}`;
    await waitFor(async () => (await kubectl('get', 'jobs', '-o', 'name')).includes(`job.batch/${jobName}`), 'scheduled job', WAIT_MS);
    await waitFor(
      async () => /^tick\s+\* \* \* \* \*\s+<none>\s+False\s+1\s+\d+[sm]\S*\s+/m.test(await kubectl('get', 'cronjob', 'tick')),
      'ACTIVE 1, LAST SCHEDULE',
      WAIT_MS,
    );
    expect(
      await kubectl('get', 'job', jobName, '-o', 'jsonpath={.metadata.annotations.batch\\.kubernetes\\.io/cronjob-scheduled-timestamp}'),
    ).to.equal(scheduled);

    expect(await kubectl('create', 'job', 'by-hand', '--from=cronjob/tick')).to.contain('job.batch/by-hand created');
    const manual = JSON.parse(await kubectl('get', 'job', 'by-hand', '-o', 'json')) as k8s.V1Job;
    expect(manual.metadata?.annotations?.['cronjob.kubernetes.io/instantiate']).to.equal('manual');
    expect(manual.metadata?.ownerReferences?.[0]).to.deep.include({ kind: 'CronJob', name: 'tick', controller: true });
    expect(manual.spec?.template.spec?.containers[0]?.command).to.deep.equal(['date']);

    // The real controller warns about a Job of its CronJob that it did not start.
    const out = await waitFor(
      async () => {
        const text = await kubectl('describe', 'cronjob', 'tick');
        return text.includes('UnexpectedJob') ? text : undefined;
      },
      'UnexpectedJob',
      WAIT_MS,
    );
    expect(out).to.match(
      /Warning\s+UnexpectedJob\s+\S+\s+cronjob-controller\s+Saw a job that the controller did not create or forgot: by-hand/,
    );
    expect(out).to.match(new RegExp(`Normal\\s+SuccessfulCreate\\s+\\S+\\s+cronjob-controller\\s+Created job ${jobName}`));
    expect(out).to.match(/Active Jobs:\s+tick-\d+/);
  });
});
