import { expect } from 'chai';
import { explore, formatFailure, replay, rerun, type Action, type ExploreResult } from '../../../lib/testing/explore/index.js';
import { closeDemoDatabase, demos, schemaDemo } from './demos.js';

/**
 * Runs per demo in CI (the schema demo's runs each start and drop schemas in PostgreSQL: 4 of
 * them cost what 10 of the others do); `EXPLORE_RUNS=120` (or `npm run bench:explore`) for the
 * default budget's figures.
 */
const runsOf = (demo: string): number => Number(process.env['EXPLORE_RUNS'] ?? (demo === 'schema' ? 4 : 10));

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
    const verdict = await replay(tomcatDemo, {
      seed: 0,
      actions,
      perturbations: [{ type: 'stale', afterStep: 3, view: { step: 1, at: 'settled' } }],
    });
    expect(verdict.failed, verdict.message).to.equal(false);
  });

  it('the tomcat demo settles when the Webapps watch holds the deletion of one it writes for: held events arrive after a few writes', async () => {
    const tomcatDemo = demos.find((d) => d.name === 'tomcat')!.options;
    // Its Deployment ConfigMap is collected with the deleted Webapp and made again on the held view, until the watch catches up.
    const verdict = await rerun(tomcatDemo, {
      seed: 0,
      actions: tomcatDemo.workload as readonly Action[],
      perturbations: [{ type: 'coalesce', fromStep: 4, steps: 1, watch: '/apis/sample.rxkube.dev/v1/webapps' }],
    });
    expect(verdict.failed, verdict.message).to.equal(false);
    expect(
      verdict.log.some((line) =>
        /^the coalesced watch events are delivered after \d+ writes of the operator while they were held$/.test(line),
      ),
      verdict.log.join('\n'),
    ).to.equal(true);
  });

  after(closeDemoDatabase);

  for (const demo of [...demos, schemaDemo]) {
    it(`the ${demo.name} demo: no failure over ${runsOf(demo.name)} runs`, async () => {
      const result: ExploreResult = await explore({ ...demo.options, budget: { runs: runsOf(demo.name) } });
      figures.push(
        `${demo.name}: ${result.coverage.runs} runs + ${result.coverage.referenceRuns} reference, ${(result.wallMs / 1000).toFixed(1)} s, ${result.coverage.unconfirmed} unconfirmed, ${result.coverage.diverged} diverged`,
      );
      expect(result.failure && formatFailure(result.failure), result.failure && formatFailure(result.failure)).to.equal(undefined);
    });
  }
});
