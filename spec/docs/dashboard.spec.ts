/**
 * The Grafana dashboard in docs/grafana queries only metrics a running operator exports, and has a
 * panel for every metric family it exports.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { eventually } from '../../lib/testing/index.js';
import { startTestCluster, type TestCluster } from '../../lib/testing/cluster/index.js';
import { allow, generateDevelopmentTls, validatingWebhook } from '../../lib/webhooks/index.js';
import { managedConfig, managedReconciler } from '../../demos/webpage/managed.js';
import { WEBPAGE, webPage, webPageCrd, type WebPage } from '../../demos/webpage/model.js';
import { greeting, type Greeting } from '../webhooks/fixtures.js';

const DASHBOARD = new URL('../../docs/grafana/rxkube-dashboard.json', import.meta.url);

interface Panel {
  readonly title?: string;
  readonly type?: string;
  readonly targets?: readonly { readonly expr?: string }[];
  readonly panels?: readonly Panel[];
}

interface Dashboard {
  readonly panels: readonly Panel[];
  readonly templating?: { readonly list?: readonly { readonly query?: unknown; readonly definition?: string }[] };
}

/** A query given as text, or '' (a query is text in the dashboards we ship). */
const textOf = (query: unknown): string => (typeof query === 'string' ? query : '');

/** Every PromQL expression of the dashboard: its panels' targets and its template variables' queries. */
function expressions(dashboard: Dashboard): string[] {
  const panels = (list: readonly Panel[]): Panel[] => list.flatMap((p) => [p, ...panels(p.panels ?? [])]);
  const targets = panels(dashboard.panels).flatMap((p) => (p.targets ?? []).map((t) => t.expr ?? ''));
  const variables = (dashboard.templating?.list ?? []).map((v) =>
    typeof v.query === 'string'
      ? v.query
      : typeof v.query === 'object' && v.query !== null
        ? textOf((v.query as { query?: unknown }).query)
        : '',
  );
  return [...targets, ...variables].filter((e) => e !== '');
}

/** The metric names an expression reads (rxkube's own: the dashboard reads nothing else). */
function metricNames(expression: string): string[] {
  return [...expression.matchAll(/\b(rxkube_[a-zA-Z0-9_:]+)/g)].map((m) => m[1]);
}

/** The series names a registry exports: a histogram's `_bucket`, `_sum` and `_count`, every other metric's own name. */
async function exportedSeries(registry: Registry): Promise<{ families: string[]; series: Set<string> }> {
  const metrics = await registry.getMetricsAsJSON();
  const series = new Set<string>();
  for (const m of metrics) {
    if (String(m.type) === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) series.add(m.name + suffix);
    else series.add(m.name);
  }
  return { families: metrics.map((m) => m.name).filter((n) => n.startsWith('rxkube_')), series };
}

/** The names the dashboard queries that are not exported, with the expression using each. */
function unknownNames(dashboard: Dashboard, series: ReadonlySet<string>): string[] {
  return expressions(dashboard).flatMap((e) =>
    metricNames(e)
      .filter((n) => !series.has(n))
      .map((n) => `${n} in ${e}`),
  );
}

describe('docs: the Grafana dashboard', function () {
  this.timeout(60_000);
  let cluster: TestCluster;
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;

  before(async () => {
    cluster = await startTestCluster({ crds: [webPageCrd], simulate: { deployments: { readyAfterMs: 50 } } });
  });
  after(() => cluster.close());

  it('every query names a metric a running operator (controllers and webhooks) exports, and every metric family has a panel', async () => {
    const registry = new Registry();
    const webhook = validatingWebhook<Greeting>({ name: 'validate.greetings.example.com', resource: greeting, validate: () => allow() });
    const operator = cluster.operator({
      registry,
      webhooks: { webhooks: [webhook], tls: await generateDevelopmentTls(), port: 0, host: '127.0.0.1' },
    });
    operator.register(managedReconciler, managedConfig);
    await operator.start();
    await cluster.apply(WEBPAGE, webPage('site', '<html><body><h1>Hi</h1></body></html>'));
    await eventually(
      'site ready',
      async () => (await cluster.client.resource<WebPage>(WEBPAGE).find({ name: 'site', namespace: 'default' }))?.status?.ready === true,
    );
    const { families, series } = await exportedSeries(registry);

    expect(unknownNames(dashboard, series)).to.deep.equal([]);
    const queried = new Set(
      expressions(dashboard)
        .flatMap(metricNames)
        .map((n) => n.replace(/_(bucket|sum|count)$/, '')),
    );
    expect(
      families.filter((f) => !queried.has(f)),
      'metric families without a panel',
    ).to.deep.equal([]);
    // The explorer's idle check reads these two by name.
    expect(families).to.include.members(['rxkube_reconciliations_active', 'rxkube_reconciliations_queued']);
  });

  it('the check sees a query of a metric nobody exports', () => {
    const planted: Dashboard = { panels: [{ title: 'typo', targets: [{ expr: 'rate(rxkube_reconciliations_sucess_total[5m])' }] }] };
    expect(unknownNames(planted, new Set(['rxkube_reconciliations_success_total']))).to.deep.equal([
      'rxkube_reconciliations_sucess_total in rate(rxkube_reconciliations_sucess_total[5m])',
    ]);
  });
});
