import { expect } from 'chai';
import { Registry, register as globalRegistry } from 'prom-client';
import type { ReconcileOutcome } from '../../lib/core/index.js';
import { controllerLabels, createMetrics } from '../../lib/observe/index.js';

async function series(registry: Registry): Promise<Map<string, Array<Record<string, string | number>>>> {
  const out = new Map<string, Array<Record<string, string | number>>>();
  for (const metric of await registry.getMetricsAsJSON()) {
    out.set(
      metric.name,
      metric.values.map((v) => {
        const metricName = (v as { metricName?: string }).metricName;
        return { ...v.labels, value: v.value, ...(metricName ? { metricName } : {}) };
      }),
    );
  }
  return out;
}

async function seriesCount(registry: Registry): Promise<number> {
  return (await registry.getMetricsAsJSON()).reduce((n, m) => n + m.values.length, 0);
}

const outcome = (name: string, result: ReconcileOutcome['result'], retry = false): ReconcileOutcome => ({
  id: { name, namespace: 'web' },
  cause: retry ? { type: 'retry', attempt: 1 } : { type: 'event', source: 'primary', action: 'added', primary: true, coalesced: 1 },
  startedAt: 1_000,
  endedAt: 1_250,
  result,
});

describe('observe/metrics', () => {
  const labels = controllerLabels('webpages', { apiVersion: 'sample.rxkube.dev/v1', kind: 'WebPage' });

  it('OB2: registers rxkube_-prefixed metrics on the given registry only', async () => {
    const registry = new Registry();
    const before = (await globalRegistry.getMetricsAsJSON()).length;
    createMetrics(registry);
    const names = (await registry.getMetricsAsJSON()).map((m) => m.name).sort();
    expect(names).to.deep.equal([
      'rxkube_cache_known_objects',
      'rxkube_cache_size',
      'rxkube_controller_ready',
      'rxkube_events_dropped_total',
      'rxkube_events_received_total',
      'rxkube_events_recorded_total',
      'rxkube_leader',
      'rxkube_max_concurrent_reconciliations',
      'rxkube_reconcile_duration_seconds',
      'rxkube_reconcile_queue_duration_seconds',
      'rxkube_reconcile_timeouts_total',
      'rxkube_reconciliations_active',
      'rxkube_reconciliations_failure_total',
      'rxkube_reconciliations_queued',
      'rxkube_reconciliations_retries_total',
      'rxkube_reconciliations_skipped_total',
      'rxkube_reconciliations_started_total',
      'rxkube_reconciliations_success_total',
      'rxkube_shard_handovers_total',
      'rxkube_shard_members',
      'rxkube_shard_owned_resources',
      'rxkube_source_errors_total',
      'rxkube_startup_seconds',
    ]);
    expect((await globalRegistry.getMetricsAsJSON()).length).to.equal(before);
  });

  it('OB2: records runs, events, queue, cache size and leader status with bounded labels', async () => {
    const registry = new Registry();
    const m = createMetrics(registry);
    m.reconcileStarted(labels);
    m.reconcileStarted(labels, { retry: true });
    m.reconcileEnded(labels, 'success', 0.2);
    m.eventReceived(labels, 'primary', 'added');
    m.eventReceived(labels, 'configmaps', 'modified');
    m.setQueued(labels, 7);
    m.setCacheSize({ ...labels, source: 'primary' }, 12);
    m.setLeader(true);

    const s = await series(registry);
    const base = { controller: 'webpages', group: 'sample.rxkube.dev', version: 'v1', kind: 'WebPage' };
    expect(s.get('rxkube_reconciliations_started_total')).to.deep.equal([{ ...base, value: 2 }]);
    expect(s.get('rxkube_reconciliations_retries_total')).to.deep.equal([{ ...base, value: 1 }]);
    expect(s.get('rxkube_reconciliations_success_total')).to.deep.equal([{ ...base, value: 1 }]);
    expect(s.get('rxkube_reconciliations_active')).to.deep.equal([{ ...base, value: 1 }]);
    expect(s.get('rxkube_reconciliations_queued')).to.deep.equal([{ ...base, value: 7 }]);
    expect(s.get('rxkube_events_received_total')).to.deep.equal([
      { ...base, source: 'primary', action: 'added', value: 1 },
      { ...base, source: 'configmaps', action: 'modified', value: 1 },
    ]);
    expect(s.get('rxkube_cache_size')).to.deep.equal([{ ...base, source: 'primary', value: 12 }]);
    expect(s.get('rxkube_leader')).to.deep.equal([{ value: 1 }]);
    const count = s.get('rxkube_reconcile_duration_seconds')?.find((v) => v['metricName'] === 'rxkube_reconcile_duration_seconds_count');
    expect(count).to.include({ ...base, result: 'success', value: 1 });
  });

  it("OB2: records the core's outcomes (result, retry cause, duration from startedAt/endedAt)", async () => {
    const registry = new Registry();
    const m = createMetrics(registry);
    m.recordOutcome(labels, outcome('a', 'failure'));
    m.recordOutcome(labels, outcome('a', 'success', true));
    m.recordOutcome(labels, outcome('b', 'skipped'));
    const s = await series(registry);
    expect(s.get('rxkube_reconciliations_started_total')?.[0]?.['value']).to.equal(2);
    expect(s.get('rxkube_reconciliations_failure_total')?.[0]?.['value']).to.equal(1);
    expect(s.get('rxkube_reconciliations_success_total')?.[0]?.['value']).to.equal(1);
    expect(s.get('rxkube_reconciliations_retries_total')?.[0]?.['value']).to.equal(1);
    expect(s.get('rxkube_reconciliations_skipped_total')?.[0]?.['value']).to.equal(1);
    const sum = s.get('rxkube_reconcile_duration_seconds')?.filter((v) => v['metricName'] === 'rxkube_reconcile_duration_seconds_sum');
    expect(sum?.map((v) => [v['result'], v['value']])).to.have.deep.members([
      ['failure', 0.25],
      ['success', 0.25],
    ]);
  });

  it('OB2: a thousand resources add no series (bounded cardinality)', async () => {
    const registry = new Registry();
    const m = createMetrics(registry);
    const exercise = (name: string) => {
      // extra fields on the labels object (a ResourceID, say) must not become labels
      const leaky = { ...labels, name, namespace: `ns-${name}` } as typeof labels;
      m.reconcileStarted(leaky, { retry: true });
      m.reconcileEnded(leaky, 'failure', 0.01);
      m.recordOutcome(leaky, outcome(name, 'success'));
      m.eventReceived(leaky, 'primary', 'modified');
      m.setCacheSize({ ...leaky, source: 'primary' }, 1);
    };
    exercise('first');
    const after1 = await seriesCount(registry);
    for (let i = 0; i < 1000; i++) exercise(`r-${i}`);
    expect(await seriesCount(registry)).to.equal(after1);
    const text = await registry.metrics();
    expect(text).to.not.match(/r-999|ns-/);
    expect((await series(registry)).get('rxkube_reconciliations_started_total')?.[0]?.['value']).to.equal(2002);
  });

  it('shares metrics when two controllers use one registry', async () => {
    const registry = new Registry();
    const a = createMetrics(registry);
    const b = createMetrics(registry);
    a.reconcileStarted(labels);
    b.reconcileStarted(controllerLabels('configmaps', { apiVersion: 'v1', kind: 'ConfigMap' }));
    const started = (await series(registry)).get('rxkube_reconciliations_started_total');
    expect(started?.map((v) => [v['controller'], v['group']])).to.deep.equal([
      ['webpages', 'sample.rxkube.dev'],
      ['configmaps', ''],
    ]);
  });

  it('rejects a missing registry and a bad controller name', () => {
    expect(() => createMetrics(undefined as never)).to.throw(/registry must be a prom-client Registry/);
    expect(() => controllerLabels('', { apiVersion: 'v1', kind: 'ConfigMap' })).to.throw(/controller name/);
  });
});
