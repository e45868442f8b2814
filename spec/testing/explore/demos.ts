/**
 * The demos as the explorer runs them: each registered as its `main` registers it, with the
 * workload its script runs (the schema demo's database shared by every run, emptied before each).
 * Explored in CI by demos.spec.ts and at the default budget by bench/explore-budget.ts.
 */
import type pg from 'pg';
import { GenericRetry, type Operator } from '../../../lib/index.js';
import type { ExploreOptions } from '../../../lib/testing/explore/index.js';
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

export interface Demo {
  readonly name: string;
  readonly options: ExploreOptions;
}

/** The demos registered as their `main` registers them, with the workload their script runs. */
export const demos: readonly Demo[] = [
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

export const schemaDemo: Demo = {
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

/** Stops the schema demo's database, if a run started it. */
export async function closeDemoDatabase(): Promise<void> {
  await database?.pool.end();
  await database?.embedded.close();
  database = undefined;
}
