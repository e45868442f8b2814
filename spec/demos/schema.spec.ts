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
import { eventually, startTestCluster, type TestCluster } from '../../lib/testing/index.js';
import { createPool, databaseHealth } from '../../demos/schema/database.js';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../../demos/schema/embedded.js';
import { schema, SCHEMA, schemaCrd, SECRET, type Schema } from '../../demos/schema/model.js';
import { schemaController } from '../../demos/schema/operator.js';

const POLL_MS = 150;
const WAIT_MS = 15_000;

describe('demo schema: the Schema operator on PGlite', function () {
  this.timeout(60_000);
  let cluster: TestCluster;
  let database: EmbeddedDatabase;
  let db: pg.Pool;
  let admin: pg.Pool;
  let operator: Operator;

  beforeEach(async () => {
    database = await startEmbeddedDatabase();
    cluster = await startTestCluster({ crds: [schemaCrd] });
    db = createPool({ url: database.url, connectTimeoutMs: 500 });
    admin = createPool({ url: database.url });
    operator = cluster.operator({ health: { port: 0, host: '127.0.0.1', checks: { database: () => databaseHealth(db) } } });
    const { reconciler, config } = schemaController({
      db,
      databaseUrl: database.url,
      pollIntervalMs: POLL_MS,
      retry: GenericRetry.unlimited().withInitialInterval(100).withMaxInterval(400),
    });
    operator.register(reconciler, config);
    await operator.start();
  });
  afterEach(async () => {
    await operator.stop();
    await cluster.close();
    await db.end();
    await admin.end();
    await database.close();
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
    return rows[0]!;
  };
  /** Runs `sql` with the privileges of `role` (PGlite cannot log in as it), in a transaction rolled back. */
  const asRole = async (role: string, sql: string): Promise<string> => {
    const client = await admin.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SET LOCAL ROLE ${pg.escapeIdentifier(role)}`);
      await client.query(sql);
      await client.query('COMMIT');
      return 'ok';
    } catch (err) {
      await client.query('ROLLBACK');
      return (err as Error).message;
    } finally {
      client.release();
    }
  };

  it('a Schema gets its schema, a login role allowed on it, and a Secret owned by the Schema', async () => {
    await cluster.apply(SCHEMA, schema('orders'));
    const done = await ready('orders');
    expect(done.status).to.include({ secretName: 'orders-credentials', ready: true });
    expect(await catalog('orders', 'orders')).to.deep.equal({ schema: true, role: true });
    const secret = await secretOf('orders');
    const data = Object.fromEntries(Object.entries(secret!.data!).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
    expect(data).to.include({ host: '127.0.0.1', port: String(database.port), database: 'postgres', user: 'orders', schema: 'orders' });
    expect(data['password']).to.match(/^[A-Za-z0-9_-]{32}$/);
    expect(data['uri']).to.equal(`postgres://orders:${data['password']}@127.0.0.1:${database.port}/postgres`);
    expect(secret!.metadata!.ownerReferences).to.deep.include({ apiVersion: SCHEMA.apiVersion, kind: 'Schema', name: 'orders', uid: done.metadata!.uid!, controller: true, blockOwnerDeletion: true });

    expect(await asRole('orders', 'CREATE TABLE orders.items (id int)')).to.equal('ok');
    expect(await asRole('orders', 'CREATE TABLE public.items (id int)')).to.match(/permission denied for schema public/);
  });
});
