import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import { expect } from 'chai';
import { GenericRetry, UpdateControl, type Operator } from '../../../lib/index.js';
import { builtinResources, customResourceDefinition } from '../../../lib/kube.js';
import { explore, formatFailure, replay, rerun, type ExploreOptions } from '../../../lib/testing/explore/index.js';
import { snapshot } from '../../../lib/testing/explore/state.js';

const crd = customResourceDefinition({
  group: 'alarms.rxkube.dev',
  kind: 'Job',
  plural: 'jobs',
  spec: { type: 'object', properties: { n: { type: 'integer' } } },
  status: { type: 'object', x_kubernetes_preserve_unknown_fields: true },
});
const jobs = { apiVersion: 'alarms.rxkube.dev/v1', kind: 'Job', plural: 'jobs' };
const configMaps = builtinResources.configMap;
type Job = KubernetesObject & { spec?: { n?: number }; status?: { runs?: string[]; byRun?: Record<string, string>; latest?: string } };

/**
 * A correct operator: two run objects per Job made with generateName, found again by label (a
 * surplus from a retried create is deleted), named in the Job's status three ways.
 */
const listsGeneratedNames = (operator: Operator): void =>
  void operator.register<Job>(
    {
      async reconcile(job, ctx) {
        const name = job.metadata?.name ?? '';
        const runs = ctx.client.resource<V1ConfigMap>(configMaps);
        const made = (await runs.list({ namespace: 'default', labelSelector: { job: name } })).items
          .map((m) => m.metadata?.name ?? '')
          .sort();
        if (made.length < 2) {
          await runs.create({ metadata: { generateName: `${name}-run-`, namespace: 'default', labels: { job: name } } });
          return;
        }
        for (const surplus of made.slice(2)) await runs.delete({ name: surplus, namespace: 'default' });
        const names = made.slice(0, 2);
        const status = { runs: names, byRun: Object.fromEntries(names.map((n) => [n, 'done'])), latest: `default/${names[0]}` };
        if (JSON.stringify(job.status ?? {}) !== JSON.stringify(status))
          await ctx.client
            .resource<Job>(jobs)
            .jsonPatchStatus({ name, namespace: 'default' }, [{ op: 'add', path: '/status', value: status }]);
      },
    },
    {
      resource: jobs,
      secondaries: [{ resource: configMaps, toPrimaries: (run) => [{ name: run.metadata?.labels?.['job'] ?? '', namespace: 'default' }] }],
    },
  );

/**
 * A correct operator whose writes are conditional on the resourceVersion it read from its cache:
 * a 409 is retried (without end) until the cache has the newer object.
 */
const conditionalWrites = (operator: Operator): void =>
  void operator.register<Job>(
    {
      async reconcile(job, ctx) {
        const seen = String(job.spec?.n ?? 0);
        if (job.metadata?.annotations?.['seen'] === seen) return;
        await ctx.client
          .resource<Job>(jobs)
          .replace({ ...job, metadata: { ...job.metadata, annotations: { ...job.metadata?.annotations, seen } } });
      },
    },
    { resource: jobs, retry: GenericRetry.unlimited().withInitialMs(20).withFactor(1.5).withMaxMs(100) },
  );

/** A correct operator that acts only on a current view: while a quorum read shows a newer generation than its cache, it looks again shortly, writing nothing. */
const waitsForItsCache = (operator: Operator): void =>
  void operator.register<Job>(
    {
      async reconcile(job, ctx) {
        const name = job.metadata?.name ?? '';
        const fresh = await ctx.client.resource<Job>(jobs).get({ name, namespace: 'default' });
        if ((fresh.metadata?.generation ?? 0) > (job.metadata?.generation ?? 0)) return UpdateControl.noUpdate<Job>().rescheduleAfter(50);
        const status = { runs: [String(job.spec?.n ?? 0)] };
        return JSON.stringify(job.status) === JSON.stringify(status)
          ? UpdateControl.noUpdate<Job>()
          : UpdateControl.patchStatus({ ...job, status });
      },
    },
    { resource: jobs },
  );

const options = (setup: (operator: Operator) => void, extra: Partial<ExploreOptions> = {}): ExploreOptions => ({
  crds: [crd],
  setup,
  observe: [jobs, configMaps],
  workload: [{ op: 'apply', resource: jobs, object: { metadata: { name: 'j' }, spec: { n: 0 } } as Job }],
  ...extra,
});

describe('testing: the explorer raises no false alarm on a correct operator', function () {
  this.timeout(180_000);

  it('compares names made with generateName by their prefix wherever they appear: status lists, map keys, references', () => {
    const job = (runs: string[]): KubernetesObject =>
      ({
        apiVersion: 'v1',
        kind: 'Job',
        metadata: { name: 'j', namespace: 'default' },
        status: { runs, byRun: Object.fromEntries(runs.map((r) => [r, 'done'])), latest: `default/${runs[0]}` },
      }) as KubernetesObject;
    const run = (name: string): KubernetesObject => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, generateName: 'j-run-', namespace: 'default' },
    });
    const one = snapshot([job(['j-run-abcde', 'j-run-fghij']), run('j-run-abcde'), run('j-run-fghij')]);
    const other = snapshot([job(['j-run-zz9yx', 'j-run-k2m4p']), run('j-run-k2m4p'), run('j-run-zz9yx')]);
    expect([...other]).to.deep.equal([...one]);
    expect(one.get('Job default/j')).to.deep.include({
      status: {
        runs: ['j-run-<generated>', 'j-run-<generated>'],
        byRun: { 'j-run-<generated>#1': 'done', 'j-run-<generated>#2': 'done' },
        latest: 'default/j-run-<generated>',
      },
    });
    // A name of an object that is gone, known from the run's history, is masked too; any other name is not.
    const gone = snapshot([job(['j-run-q1w2e'])], [], new Map([['j-run-q1w2e', 'j-run-']]));
    expect(gone.get('Job default/j')).to.deep.include({
      status: { runs: ['j-run-<generated>'], byRun: { 'j-run-<generated>#1': 'done' }, latest: 'default/j-run-<generated>' },
    });
    expect(snapshot([job(['j-run-q1w2e'])]).get('Job default/j')).to.deep.include({
      status: { runs: ['j-run-q1w2e'], byRun: { 'j-run-q1w2e': 'done' }, latest: 'default/j-run-q1w2e' },
    });
  });

  it("leaves out what the server allocates in creation order: a Service's cluster IPs and node ports", () => {
    const service = (ip: string, nodePort: number): KubernetesObject =>
      ({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', namespace: 'default' },
        spec: { clusterIP: ip, clusterIPs: [ip], ports: [{ port: 80, nodePort }] },
      }) as KubernetesObject;
    expect([...snapshot([service('10.96.0.10', 30001)])]).to.deep.equal([...snapshot([service('10.96.0.11', 30002)])]);
  });

  it('no failure for an operator that names its generateName children in its status, over 20 runs', async () => {
    const result = await explore(options(listsGeneratedNames, { budget: { runs: 20 } }));
    expect(result.failure && formatFailure(result.failure), result.failure?.message).to.equal(undefined);
  });

  it("a stale view catches up after a bounded number of the operator's writes on it, as a lagging watch cache does, even while it retries 409s", async () => {
    const verdict = await replay(options(conditionalWrites, { settleTimeoutMs: 5000 }), {
      seed: 0,
      actions: [
        { op: 'apply', resource: jobs, object: { metadata: { name: 'j' }, spec: { n: 0 } } as Job },
        { op: 'merge', resource: jobs, name: 'j', patch: { spec: { n: 1 } } },
      ],
      perturbations: [{ type: 'stale', afterStep: 1, view: { step: 0, at: 'applied' } }],
    });
    expect(verdict.failed, verdict.message).to.equal(false);
    expect(
      verdict.log.some((line) => /^the stale view catches up after \d+ writes of the operator on it$/.test(line)),
      verdict.log.join('\n'),
    ).to.equal(true);
  });

  it('a stale view catches up after a bounded number of runs of an operator that waits for its cache without writing', async () => {
    const verdict = await rerun(options(waitsForItsCache, { settleTimeoutMs: 5000 }), {
      seed: 0,
      actions: [
        { op: 'apply', resource: jobs, object: { metadata: { name: 'j' }, spec: { n: 0 } } },
        { op: 'merge', resource: jobs, name: 'j', patch: { spec: { n: 1 } } },
      ],
      perturbations: [{ type: 'stale', afterStep: 1, view: { step: 0, at: 'settled' } }],
    });
    expect(verdict.failed, verdict.message).to.equal(false);
    expect(verdict.log).to.include('the stale view catches up after 5 runs of the operator on it');
  });

  it('no failure for an operator whose writes are conditional on resourceVersion, over 20 runs', async () => {
    const result = await explore(
      options(conditionalWrites, {
        workload: [
          { op: 'apply', resource: jobs, object: { metadata: { name: 'j' }, spec: { n: 0 } } as Job },
          { op: 'merge', resource: jobs, name: 'j', patch: { spec: { n: 1 } } },
          { op: 'merge', resource: jobs, name: 'j', patch: { spec: { n: 2 } } },
        ],
        budget: { runs: 20 },
      }),
    );
    expect(result.failure && formatFailure(result.failure)).to.equal(undefined);
  });
});
