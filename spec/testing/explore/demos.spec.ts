import { expect } from 'chai';
import type { Operator } from '../../../lib/index.js';
import { explore, formatFailure, replay, type Action, type ExploreOptions, type ExploreResult } from '../../../lib/testing/explore/index.js';
import { CONFIGMAP as TOMCAT_CONFIGMAP, DEPLOYMENT as TOMCAT_DEPLOYMENT, SERVICE as TOMCAT_SERVICE, TOMCAT, tomcat, WEBAPP, webapp } from '../../../demos/tomcat/model.js';
import { crds as tomcatCrds, registerTomcatOperator } from '../../../demos/tomcat/operator.js';
import { CONFIGMAP, DEPLOYMENT, INGRESS, SERVICE, WEBPAGE, webPage, webPageCrd } from '../../../demos/webpage/model.js';
import { variants } from '../../../demos/webpage/variants.js';

/** Runs per demo in CI; `EXPLORE_RUNS=120` (the default budget) for the figures. */
const RUNS = Number(process.env['EXPLORE_RUNS'] ?? 30);

/** The demos registered as their `main` registers them, with the workload their script runs. */
export const demos: readonly { readonly name: string; readonly options: ExploreOptions }[] = [
  // The variants behave alike; CI explores the one `main` runs by default, EXPLORE_ALL=1 all three.
  ...(process.env['EXPLORE_ALL'] ? (['managed', 'low-level', 'standalone'] as const) : (['managed'] as const)).map((variant) => ({
    name: `webpage (${variant})`,
    options: {
      crds: [webPageCrd],
      setup: (operator: Operator) => void operator.register(variants[variant].reconciler, variants[variant].config),
      observe: [WEBPAGE, CONFIGMAP, DEPLOYMENT, SERVICE, INGRESS],
      workload: [
        { op: 'apply', resource: WEBPAGE, object: webPage('hello', '<html><body><h1>Hello</h1></body></html>', { exposed: true }) },
        { op: 'apply', resource: WEBPAGE, object: webPage('about', '<html><body><p>About</p></body></html>') },
        { op: 'apply', resource: WEBPAGE, object: webPage('about', '<html><body><p>Changed at run time.</p></body></html>') },
        { op: 'merge', resource: WEBPAGE, name: 'hello', patch: { spec: { exposed: false } } },
        { op: 'delete', resource: WEBPAGE, name: 'about' },
      ],
    } satisfies ExploreOptions,
  })),
  {
    name: 'tomcat',
    options: {
      crds: tomcatCrds,
      setup: (operator: Operator) => void registerTomcatOperator(operator),
      observe: [TOMCAT, WEBAPP, TOMCAT_DEPLOYMENT, TOMCAT_SERVICE, TOMCAT_CONFIGMAP],
      workload: [
        { op: 'apply', resource: TOMCAT, object: tomcat('main', { version: '10.1', replicas: 2 }) },
        { op: 'apply', resource: WEBAPP, object: webapp('shop', { tomcat: 'main', url: 'https://example.com/wars/shop.war', contextPath: '/shop' }) },
        { op: 'apply', resource: WEBAPP, object: webapp('blog', { tomcat: 'main', url: 'https://example.com/wars/blog.war', contextPath: '/blog' }) },
        { op: 'merge', resource: TOMCAT, name: 'main', patch: { spec: { replicas: 3 } } },
        { op: 'delete', resource: WEBAPP, name: 'shop' },
      ],
    } satisfies ExploreOptions,
  },
];

const figures: string[] = [];

describe('testing: explore finds no failure in the demos (no false alarm on correct operators)', function () {
  this.timeout(600_000);

  after(() => {
    if (figures.length > 0) console.log(`      explore figures:\n${figures.map((f) => `        ${f}`).join('\n')}`);
  });

  it('the tomcat demo settles when a retry is dropped with its deleted Webapp, on a stale view that caught up', async () => {
    const tomcatDemo = demos.find((d) => d.name === 'tomcat')!.options;
    // Tomcat main, Webapp shop, main scaled, shop deleted; a restart after that sees the cluster as after shop was deployed.
    const actions = (tomcatDemo.workload as readonly Action[]).filter((_, i) => i !== 2);
    const verdict = await replay(tomcatDemo, { seed: 0, actions, perturbations: [{ type: 'stale', afterStep: 3, view: { step: 1, at: 'settled' } }] });
    expect(verdict.failed, verdict.message).to.equal(false);
  });

  for (const demo of demos) {
    it(`the ${demo.name} demo: no failure over ${RUNS} runs`, async () => {
      const result: ExploreResult = await explore({ ...demo.options, budget: { runs: RUNS } });
      figures.push(`${demo.name}: ${result.coverage.runs} runs + ${result.coverage.referenceRuns} reference, ${(result.wallMs / 1000).toFixed(1)} s, ${result.coverage.unconfirmed} unconfirmed, ${result.coverage.diverged} diverged`);
      expect(result.failure && formatFailure(result.failure), result.failure && formatFailure(result.failure)).to.equal(undefined);
    });
  }
});
