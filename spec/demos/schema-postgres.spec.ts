/**
 * The Schema operator against a real PostgreSQL server, where a role's login and password are
 * enforced (PGlite lets every connection in as its superuser). Runs when RXKUBE_TEST_DATABASE_URL
 * names a server the operator may create schemas and roles on (CI starts one with
 * .ci/start-postgres); skipped otherwise. Every name it uses starts with rxkube_test_.
 */
import type { V1Secret } from '@kubernetes/client-node';
import { expect } from 'chai';
import pg from 'pg';
import { GenericRetry, type Operator } from '../../lib/index.js';
import { eventually } from '../../lib/testing/index.js';
import { startTestCluster, type TestCluster } from '../../lib/testing/cluster/index.js';
import { createPool } from '../../demos/schema/database.js';
import { schema, SCHEMA, schemaCrd, SECRET, type Schema } from '../../demos/schema/model.js';
import { schemaController } from '../../demos/schema/operator.js';

const URL_ENV = 'RXKUBE_TEST_DATABASE_URL';
const databaseUrl = process.env[URL_ENV];
const WAIT_MS = 15_000;
const CLEANUP = `DO $$ DECLARE r record; BEGIN
  FOR r IN SELECT nspname FROM pg_namespace WHERE nspname LIKE 'rxkube\\_test\\_%' LOOP EXECUTE format('DROP SCHEMA %I CASCADE', r.nspname); END LOOP;
  FOR r IN SELECT rolname FROM pg_roles WHERE rolname LIKE 'rxkube\\_test\\_%' LOOP
    EXECUTE format('DROP OWNED BY %I', r.rolname);
    EXECUTE format('DROP ROLE %I', r.rolname);
  END LOOP;
END $$`;

describe('demo schema: the Schema operator on a real PostgreSQL server', function () {
  this.timeout(60_000);
  let cluster: TestCluster;
  let db: pg.Pool;
  let operator: Operator;

  before(async function () {
    if (!databaseUrl) {
      console.log(`    (skipped: set ${URL_ENV} to a PostgreSQL server, e.g. the one .ci/start-postgres starts)`);
      this.skip();
    }
    db = createPool({ url: databaseUrl });
    const { rows } = await db.query<{ version: string }>('SELECT version()');
    console.log(`    against ${rows[0]?.version.split(' on ')[0]}`);
    await db.query(CLEANUP);
  });
  after(async () => {
    await db?.query(CLEANUP);
    await db?.end();
  });

  beforeEach(async () => {
    cluster = await startTestCluster({ crds: [schemaCrd] });
    operator = cluster.operator();
    const { reconciler, config } = schemaController({
      db,
      databaseUrl: databaseUrl!,
      pollIntervalMs: 150,
      retry: GenericRetry.unlimited().withInitialMs(100).withMaxMs(400),
    });
    operator.register(reconciler, config);
    await operator.start();
  });
  afterEach(async () => {
    await operator?.stop();
    await cluster?.close();
    await db.query(CLEANUP);
  });

  const ready = (name: string) =>
    eventually(
      `schema ${name} Ready`,
      async () => {
        const s = await cluster.client.resource<Schema>(SCHEMA).find({ name, namespace: 'default' });
        return s?.status?.conditions?.find((c) => c.type === 'Ready' && c.reason === 'Reconciled') && s;
      },
      WAIT_MS,
    );
  const credentials = async (name: string) => {
    const secret = await cluster.client.resource<V1Secret>(SECRET).get({ name: `${name}-credentials`, namespace: 'default' });
    return Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
  };
  /** Connects with `uri` and runs `sql`: 'ok' or the error's message. */
  const run = async (uri: string, sql: string): Promise<string> => {
    const client = new pg.Client({ connectionString: uri });
    try {
      await client.connect();
      await client.query(sql);
      return 'ok';
    } catch (err) {
      return (err as Error).message;
    } finally {
      await client.end().catch(() => undefined);
    }
  };

  it("a login with the Secret's credentials creates tables in its schema and nowhere else; a wrong password is refused", async () => {
    await cluster.apply(SCHEMA, schema('orders', { name: 'rxkube_test_orders', role: 'rxkube_test_orders' }));
    await cluster.apply(SCHEMA, schema('stock', { name: 'rxkube_test_stock', role: 'rxkube_test_stock' }));
    await ready('orders');
    await ready('stock');
    const orders = await credentials('orders');
    const stock = await credentials('stock');

    expect(await run(orders['uri'], 'CREATE TABLE items (id int)')).to.equal('ok');
    expect((await db.query(`SELECT schemaname FROM pg_tables WHERE tablename = 'items'`)).rows).to.deep.equal([
      { schemaname: 'rxkube_test_orders' },
    ]);
    expect(await run(orders['uri'], 'CREATE TABLE public.items (id int)')).to.match(/permission denied for schema public/);
    expect(await run(stock['uri'], 'SELECT * FROM rxkube_test_orders.items')).to.match(/permission denied for schema rxkube_test_orders/);
    expect(await run(stock['uri'], 'CREATE TABLE rxkube_test_orders.mine (id int)')).to.match(
      /permission denied for schema rxkube_test_orders/,
    );

    const wrong = new URL(orders['uri']);
    wrong.password = 'not-the-password';
    expect(await run(wrong.href, 'SELECT 1')).to.match(/password authentication failed for user "rxkube_test_orders"/);
  });

  it('ES5: a schema dropped behind the operator is created again by the next poll', async () => {
    await cluster.apply(SCHEMA, schema('orders', { name: 'rxkube_test_orders', role: 'rxkube_test_orders' }));
    await ready('orders');
    const orders = await credentials('orders');
    expect(await run(orders['uri'], 'CREATE TABLE items (id int)')).to.equal('ok');
    await db.query('DROP SCHEMA rxkube_test_orders CASCADE');
    await eventually('schema created again', async () => (await run(orders['uri'], 'CREATE TABLE items (id int)')) === 'ok', WAIT_MS);
  });

  it('a Secret deleted behind the operator gets a new password, and the role takes it', async () => {
    await cluster.apply(SCHEMA, schema('orders', { name: 'rxkube_test_orders', role: 'rxkube_test_orders' }));
    await ready('orders');
    const before = await credentials('orders');
    await cluster.client.resource(SECRET).delete({ name: 'orders-credentials', namespace: 'default' });
    const after = await eventually(
      'a new Secret with another password',
      async () => {
        const now = await cluster.client.resource<V1Secret>(SECRET).find({ name: 'orders-credentials', namespace: 'default' });
        const password = now?.data?.['password'] && Buffer.from(now.data['password'], 'base64').toString();
        return password && password !== before['password'] ? credentials('orders') : undefined;
      },
      WAIT_MS,
    );
    await eventually('the role takes the new password', async () => (await run(after['uri'], 'SELECT 1')) === 'ok', WAIT_MS);
    expect(await run(before['uri'], 'SELECT 1')).to.match(/password authentication failed/);
  });

  it('FZ1: deleting the Schema drops the schema and the role: its credentials no longer log in', async () => {
    await cluster.apply(SCHEMA, schema('orders', { name: 'rxkube_test_orders', role: 'rxkube_test_orders' }));
    await ready('orders');
    const orders = await credentials('orders');
    expect(await run(orders['uri'], 'CREATE TABLE items (id int)')).to.equal('ok');
    await cluster.client.resource(SCHEMA).delete({ name: 'orders', namespace: 'default' });
    await eventually(
      'Schema gone',
      async () => (await cluster.client.resource(SCHEMA).find({ name: 'orders', namespace: 'default' })) === undefined,
      WAIT_MS,
    );
    expect((await db.query(`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = 'rxkube_test_orders'`)).rows[0]).to.deep.equal({
      n: 0,
    });
    expect(await run(orders['uri'], 'SELECT 1')).to.match(/password authentication failed|role "rxkube_test_orders" does not exist/);
  });
});
