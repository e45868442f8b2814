/**
 * The Schema operator (demos/schema) against the embedded API server and PGlite served over the
 * wire protocol. PGlite runs every connection as its one superuser whatever the login says, so
 * what a role may do is checked with `SET LOCAL ROLE` (its privileges are enforced); logging in
 * with the Secret's password for real is in schema-postgres.spec.ts, against a real server.
 */
import type { V1Secret } from '@kubernetes/client-node';
import { expect } from 'chai';
import pg from 'pg';
import { GenericRetry, type Operator } from '../../lib/index.js';
import { eventually } from '../../lib/testing/index.js';
import { startTestCluster, type TestCluster } from '../../lib/testing/cluster/index.js';
import { createPool, databaseHealth } from '../../demos/schema/database.js';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../../demos/schema/embedded.js';
import { schema, SCHEMA, schemaCrd, SECRET, type Schema } from '../../demos/schema/model.js';
import { schemaController } from '../../demos/schema/operator.js';

const POLL_MS = 150;
/** Drops every schema and role a test made. */
const RESET = `DO $$ DECLARE r record; BEGIN
  FOR r IN SELECT nspname FROM pg_namespace WHERE nspname NOT IN ('public', 'information_schema') AND nspname NOT LIKE 'pg\\_%' LOOP
    EXECUTE format('DROP SCHEMA %I CASCADE', r.nspname);
  END LOOP;
  FOR r IN SELECT rolname FROM pg_roles WHERE rolname <> current_user AND rolname NOT LIKE 'pg\\_%' LOOP
    EXECUTE format('DROP OWNED BY %I', r.rolname);
    EXECUTE format('DROP ROLE %I', r.rolname);
  END LOOP;
END $$`;
const WAIT_MS = 15_000;

describe('demo schema: the Schema operator on PGlite', function () {
  this.timeout(60_000);
  let cluster: TestCluster;
  let database: EmbeddedDatabase;
  let db: pg.Pool;
  let admin: pg.Pool;
  let operator: Operator | undefined;

  /** The operator, its schemas and roles polled every `pollIntervalMs`, /readyz with the database's health. */
  const startOperator = async (pollIntervalMs = POLL_MS) => {
    operator = cluster.operator({ health: { port: 0, host: '127.0.0.1', checks: { database: () => databaseHealth(db) } } });
    const { reconciler, config } = schemaController({
      db,
      databaseUrl: database.url,
      pollIntervalMs,
      retry: GenericRetry.unlimited().withInitialMs(100).withMaxMs(400),
    });
    operator.register(reconciler, config);
    await operator.start();
    return operator;
  };

  // PGlite takes seconds to start: one database for the file, emptied after each test.
  before(async () => {
    database = await startEmbeddedDatabase();
    // One connection (the embedded server serves one at a time): the operator's and the test's
    // statements go through it in turn.
    db = createPool({ url: database.url, max: 1, connectTimeoutMs: 500 });
    admin = db;
  });
  after(async () => {
    await db.end();
    await database.close();
  });

  beforeEach(async () => {
    cluster = await startTestCluster({ crds: [schemaCrd] });
    operator = undefined;
  });
  afterEach(async () => {
    await operator?.stop();
    await cluster.close();
    await database.serve();
    await admin.query(RESET);
  });

  const get = (name: string) => cluster.client.resource<Schema>(SCHEMA).find({ name, namespace: 'default' });
  const secretOf = (name: string) => cluster.client.resource<V1Secret>(SECRET).find({ name: `${name}-credentials`, namespace: 'default' });
  const ready = (name: string, reason = 'Reconciled') => {
    let last: Schema | undefined;
    return eventually(
      () => `schema ${name} Ready with ${reason} (last status ${JSON.stringify(last?.status)})`,
      async () => {
        last = await get(name);
        const condition = last?.status?.conditions?.find((c) => c.type === 'Ready');
        return condition?.reason === reason && condition.observedGeneration === last?.metadata?.generation ? last : undefined;
      },
      WAIT_MS,
    );
  };
  const catalog = async (schemaName: string, role: string) => {
    const { rows } = await admin.query<{ schema: boolean; role: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS schema, EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $2) AS role',
      [schemaName, role],
    );
    return rows[0];
  };
  /** Runs `sql` with the privileges of `role` (PGlite cannot log in as it), in a transaction rolled back unless `commit`. */
  const asRole = async (role: string, sql: string, commit = false): Promise<string> => {
    const client = await admin.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SET LOCAL ROLE ${pg.escapeIdentifier(role)}`);
      await client.query(sql);
      await client.query(commit ? 'COMMIT' : 'ROLLBACK');
      return 'ok';
    } catch (err) {
      await client.query('ROLLBACK');
      return (err as Error).message;
    } finally {
      client.release();
    }
  };

  it('a Schema gets its schema, a login role allowed on it, and a Secret owned by the Schema', async () => {
    await startOperator();
    await cluster.apply(SCHEMA, schema('orders'));
    const done = await ready('orders');
    expect(done.status).to.include({ secretName: 'orders-credentials', ready: true });
    expect(await catalog('orders', 'orders')).to.deep.equal({ schema: true, role: true });
    const secret = await secretOf('orders');
    const data = Object.fromEntries(Object.entries(secret!.data!).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
    expect(data).to.include({ host: '127.0.0.1', port: String(database.port), database: 'postgres', user: 'orders', schema: 'orders' });
    expect(data['password']).to.match(/^[A-Za-z0-9_-]{32}$/);
    expect(data['uri']).to.equal(`postgres://orders:${data['password']}@127.0.0.1:${database.port}/postgres`);
    expect(secret!.metadata!.ownerReferences).to.deep.include({
      apiVersion: SCHEMA.apiVersion,
      kind: 'Schema',
      name: 'orders',
      uid: done.metadata!.uid!,
      controller: true,
      blockOwnerDeletion: true,
    });

    expect(await asRole('orders', 'CREATE TABLE orders.items (id int)')).to.equal('ok');
    expect(await asRole('orders', 'CREATE TABLE public.items (id int)')).to.match(/permission denied for schema public/);
  });

  it("ES5: a schema dropped and a grant revoked behind the operator's back are put back by the next poll", async () => {
    await startOperator();
    await cluster.apply(SCHEMA, schema('orders'));
    await ready('orders');
    await admin.query('DROP SCHEMA orders CASCADE');
    await eventually('schema orders created again', async () => (await catalog('orders', 'orders')).schema, WAIT_MS);
    expect(await asRole('orders', 'CREATE TABLE orders.items (id int)')).to.equal('ok');

    await admin.query('REVOKE CREATE ON SCHEMA orders FROM orders');
    expect(await asRole('orders', 'CREATE TABLE orders.items (id int)')).to.match(/permission denied/);
    await eventually('CREATE granted again', async () => (await asRole('orders', 'CREATE TABLE orders.items (id int)')) === 'ok', WAIT_MS);

    await admin.query('ALTER ROLE orders NOLOGIN');
    await eventually(
      'login allowed again',
      async () =>
        (await admin.query<{ rolcanlogin: boolean }>('SELECT rolcanlogin FROM pg_roles WHERE rolname = $1', ['orders'])).rows[0]
          ?.rolcanlogin === true,
      WAIT_MS,
    );
  });

  it('ES5: a schema dropped twice in a row, the second time soon after it was made again, is made again each time', async () => {
    await startOperator(1500);
    await cluster.apply(SCHEMA, schema('orders'));
    await ready('orders');
    await admin.query('DROP SCHEMA orders CASCADE');
    // A poll read no schema and the Schema made it again; dropped again before the next poll, that
    // poll reads what the last one read.
    await eventually('schema orders created again', async () => (await catalog('orders', 'orders')).schema, 5000);
    await admin.query('DROP SCHEMA orders CASCADE');
    await eventually('schema orders created once more', async () => (await catalog('orders', 'orders')).schema, 5000);
  });

  it('FZ1: deleting a Schema drops its schema, tables and role; with deletionPolicy Retain they stay', async () => {
    await startOperator();
    await cluster.apply(SCHEMA, schema('orders'));
    await cluster.apply(SCHEMA, schema('archive', { deletionPolicy: 'Retain' }));
    await ready('orders');
    await ready('archive');
    expect(await asRole('orders', 'CREATE TABLE orders.items (id int)')).to.equal('ok');
    expect(await asRole('archive', 'CREATE TABLE archive.items (id int)', true)).to.equal('ok');

    await cluster.client.resource(SCHEMA).delete({ name: 'orders', namespace: 'default' });
    await cluster.client.resource(SCHEMA).delete({ name: 'archive', namespace: 'default' });
    await eventually('both Schemas gone', async () => (await get('orders')) === undefined && (await get('archive')) === undefined, WAIT_MS);
    expect(await catalog('orders', 'orders')).to.deep.equal({ schema: false, role: false });
    expect(await catalog('archive', 'archive')).to.deep.equal({ schema: true, role: true });
    expect((await admin.query('SELECT count(*)::int AS n FROM archive.items')).rows[0]).to.deep.equal({ n: 0 });
  });

  it('EP7, OB3: with the database down, runs are retried, Ready is False with DatabaseUnavailable and /readyz fails; back up, it recovers', async () => {
    await startOperator();
    const readyz = async () => {
      const response = await fetch(`${operator!.healthUrl}/readyz`);
      return { status: response.status, body: await response.text() };
    };
    await database.stopServing();
    await cluster.apply(SCHEMA, schema('orders'));
    const down = await ready('orders', 'DatabaseUnavailable');
    expect(down.status?.conditions?.[0]?.message).to.match(/the database cannot be reached \(retrying\)/);
    expect(await readyz())
      .to.include({ status: 503 })
      .and.property('body')
      .to.match(/\[-\]database failed: database: /);

    await database.serve();
    await ready('orders');
    expect(await catalog('orders', 'orders')).to.deep.equal({ schema: true, role: true });
    expect(await readyz())
      .to.include({ status: 200 })
      .and.property('body')
      .to.include('[+]database ok');
  });

  it("two Schemas do not see each other's data", async () => {
    await startOperator();
    await cluster.apply(SCHEMA, schema('orders'));
    await cluster.apply(SCHEMA, schema('inventory'));
    await ready('orders');
    await ready('inventory');
    expect(await asRole('inventory', 'CREATE TABLE inventory.stock (sku text)', true)).to.equal('ok');
    expect(await asRole('orders', 'SELECT * FROM inventory.stock')).to.match(/permission denied for schema inventory/);
    expect(await asRole('orders', 'CREATE TABLE inventory.mine (id int)')).to.match(/permission denied for schema inventory/);
    expect(await asRole('inventory', 'CREATE TABLE orders.theirs (id int)')).to.match(/permission denied for schema orders/);
  });

  it('a schema of that name the operator did not make is reported as NameConflict and never altered or dropped', async () => {
    await startOperator();
    await admin.query('CREATE SCHEMA billing');
    await admin.query('CREATE TABLE billing.invoices (id int)');
    await cluster.apply(SCHEMA, schema('billing'));
    const clash = await ready('billing', 'NameConflict');
    expect(clash.status?.conditions?.[0]?.message).to.match(/schema "billing" already exists and is not managed by this Schema/);
    expect((await admin.query(`SELECT has_schema_privilege('billing', 'billing', 'USAGE') AS usage`)).rows[0]).to.deep.equal({
      usage: false,
    });

    await cluster.client.resource(SCHEMA).delete({ name: 'billing', namespace: 'default' });
    await eventually('Schema billing gone', async () => (await get('billing')) === undefined, WAIT_MS);
    expect((await admin.query('SELECT count(*)::int AS n FROM billing.invoices')).rows[0]).to.deep.equal({ n: 0 });
  });

  it('a second Schema naming the same schema in another namespace is a NameConflict; the first keeps it', async () => {
    await startOperator();
    await cluster.createNamespace('team-b');
    await cluster.apply(SCHEMA, schema('orders'));
    await ready('orders');
    await cluster.apply(SCHEMA, schema('orders', {}, 'team-b'));
    await eventually(
      'team-b/orders in conflict',
      async () =>
        (await cluster.client.resource<Schema>(SCHEMA).find({ name: 'orders', namespace: 'team-b' }))?.status?.conditions?.[0]?.reason ===
        'NameConflict',
      WAIT_MS,
    );
    await cluster.client.resource(SCHEMA).delete({ name: 'orders', namespace: 'team-b' });
    await eventually(
      'team-b/orders gone',
      async () => (await cluster.client.resource(SCHEMA).find({ name: 'orders', namespace: 'team-b' })) === undefined,
      WAIT_MS,
    );
    expect(await catalog('orders', 'orders')).to.deep.equal({ schema: true, role: true });
  });

  it('OB3: a health check that is not a function is a ConfigurationError naming it', () => {
    expect(() => cluster.operator({ health: { checks: { database: 'up' as never } } })).to.throw(
      /health\.checks\.database: must be a function/,
    );
  });

  it('names that are not plain SQL identifiers are refused by the API server before any SQL runs', async () => {
    await startOperator();
    const refused = async (spec: Partial<Schema['spec']>) => {
      try {
        await cluster.apply(SCHEMA, schema('bad', spec));
        return 'accepted';
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect(await refused({ name: 'select' })).to.match(/spec\.name.*must not be a PostgreSQL reserved word/);
    expect(await refused({ name: 'pg_temp_x' })).to.match(/spec\.name.*must not start with pg_/);
    expect(await refused({ name: 'public' })).to.match(/spec\.name.*must not start with pg_ or be public/);
    expect(await refused({ name: 'Orders' })).to.match(/spec\.name.*should match/);
    expect(await refused({ name: '1orders' })).to.match(/spec\.name.*should match/);
    expect(await refused({ name: 'a"; DROP SCHEMA x; --' })).to.match(/spec\.name.*should match/);
    expect(await refused({ name: 'a'.repeat(64) })).to.match(/spec\.name.*63/);
    expect(await refused({ name: 'ok', role: 'user' })).to.match(/spec\.role.*reserved word/);
    expect(await refused({ name: 'a'.repeat(63) })).to.equal('accepted');
    expect(await refused({ name: 'renamed' })).to.match(/name is immutable/);
  });
});
