import { expect } from 'chai';
import type pg from 'pg';
import { GenericRetry, type Operator } from '../../../lib/index.js';
import {
  explore,
  formatFailure,
  replay,
  type Action,
  type ExploreOptions,
  type ExploreResult,
} from '../../../lib/testing/explore/index.js';
import {
  CONFIGMAP as TOMCAT_CONFIGMAP,
  DEPLOYMENT as TOMCAT_DEPLOYMENT,
  SERVICE as TOMCAT_SERVICE,
  TOMCAT,
  tomcat,
  WEBAPP,
  webapp,
} from '../../../demos/tomcat/model.js';
import { crds as tomcatCrds, registerTomcatOperator } from '../../../demos/tomcat/operator.js';
import { CONFIGMAP, DEPLOYMENT, INGRESS, SERVICE, WEBPAGE, webPage, webPageCrd } from '../../../demos/webpage/model.js';
import { variants } from '../../../demos/webpage/variants.js';
import { createPool } from '../../../demos/schema/database.js';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../../../demos/schema/embedded.js';
import { SCHEMA, SECRET, schema, schemaCrd } from '../../../demos/schema/model.js';
import { schemaController } from '../../../demos/schema/operator.js';

/**
 * Runs per demo in CI (the schema demo's runs each start and drop schemas in PostgreSQL: 10 of
 * them cost what 30 of the others do); `EXPLORE_RUNS=120` (the default budget) for the figures.
 */
const runsOf = (demo: string): number => Number(process.env['EXPLORE_RUNS'] ?? (demo === 'schema' ? 10 : 30));

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
        {
          op: 'apply',
          resource: WEBAPP,
          object: webapp('shop', { tomcat: 'main', url: 'https://example.com/wars/shop.war', contextPath: '/shop' }),
        },
        {
          op: 'apply',
          resource: WEBAPP,
          object: webapp('blog', { tomcat: 'main', url: 'https://example.com/wars/blog.war', contextPath: '/blog' }),
        },
        { op: 'merge', resource: TOMCAT, name: 'main', patch: { spec: { replicas: 3 } } },
        { op: 'delete', resource: WEBAPP, name: 'shop' },
      ],
    } satisfies ExploreOptions,
  },
];

/** The schema demo's database: one embedded PostgreSQL for every run, emptied before each. */
let database: { embedded: EmbeddedDatabase; pool: pg.Pool } | undefined;
const db = async (): Promise<{ embedded: EmbeddedDatabase; pool: pg.Pool }> => {
  if (!database) {
    const embedded = await startEmbeddedDatabase();
    database = { embedded, pool: createPool({ url: embedded.url, max: 1, onIdleError: () => undefined }) };
  }
  return database;
};

/** Drops every schema and login role the operator made: what `resetExternal` does for the schema demo. */
async function emptyDatabase(): Promise<void> {
  const { pool } = await db();
  const schemas = await pool.query<{ name: string }>(
    `SELECT nspname AS name FROM pg_namespace WHERE nspname NOT IN ('public', 'information_schema') AND nspname NOT LIKE 'pg\\_%'`,
  );
  for (const { name } of schemas.rows) await pool.query(`DROP SCHEMA "${name}" CASCADE`);
  const roles = await pool.query<{ name: string }>(
    `SELECT rolname AS name FROM pg_roles WHERE rolname <> 'postgres' AND rolname NOT LIKE 'pg\\_%'`,
  );
  for (const { name } of roles.rows) await pool.query(`DROP ROLE "${name}"`);
}

const schemaDemo = {
  name: 'schema',
  options: {
    crds: [schemaCrd],
    setup: async (operator: Operator) => {
      const { embedded, pool } = await db();
      const { reconciler, config } = schemaController({
        db: pool,
        databaseUrl: embedded.url,
        retry: GenericRetry.defaults().withInitialMs(20).withFactor(2).withMaxAttempts(3),
      });
      operator.register(reconciler, config);
    },
    resetExternal: emptyDatabase,
    observe: [SCHEMA, SECRET],
    // The password is random, made once per Secret: a correct run differs there.
    volatile: ['data.password', 'data.uri'],
    workload: [
      { op: 'apply', resource: SCHEMA, object: schema('orders') },
      { op: 'apply', resource: SCHEMA, object: schema('inventory', { deletionPolicy: 'Retain' }) },
      { op: 'delete', resource: SCHEMA, name: 'orders' },
      { op: 'apply', resource: SCHEMA, object: schema('billing') },
    ],
  } satisfies ExploreOptions,
};

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

  after(async () => {
    await database?.pool.end();
    await database?.embedded.close();
    database = undefined;
  });

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
