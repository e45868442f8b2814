/**
 * The Schema demo (`npm run demo:schema`): the Schema operator against an embedded API server and
 * an embedded PostgreSQL (PGlite over the wire protocol), or a real cluster (--kubeconfig,
 * --context) and a real PostgreSQL (--database-url). Creates two Schemas, uses one's credentials,
 * shows a bad name refused and a name clash reported, repairs drift made behind the operator's
 * back, rides out the database going away (embedded only), deletes them, and keeps running until
 * Ctrl-C (or exits with --once).
 */
import { createWriteStream, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { KubeConfig, V1Secret } from '@kubernetes/client-node';
import pg from 'pg';
import { startApiServer, type ApiServer } from '@rxkube/apiserver';
import { createLogger, GenericRetry, Operator } from '../../lib/index.js';
import { informer, type Informer } from '../../lib/pipeline.js';
import { createKubeClient, errorMessage, installCustomResourceDefinition, loadKubeConfig, type KubeClient } from '../../lib/kube.js';
import { parseFlags, UsageError, untilSignal } from '../cli.js';
import { StatusBoard } from '../status-board.js';
import { createPool, databaseHealth } from './database.js';
import { startEmbeddedDatabase, type EmbeddedDatabase } from './embedded.js';
import { schema, SCHEMA, schemaCrd, SECRET, type Schema } from './model.js';
import { schemaController } from './operator.js';

const FLAGS = {
  kubeconfig: 'string',
  context: 'string',
  'database-url': 'string',
  port: 'number',
  'poll-ms': 'number',
  once: 'boolean',
  help: 'boolean',
} as const;

const USAGE = `usage: npm run demo:schema -- [--kubeconfig FILE] [--context NAME] [--database-url URL] [--port N] [--poll-ms MS] [--once]
  --kubeconfig FILE     run against the cluster of that kubeconfig (default: an embedded API server;
                        an exported KUBECONFIG is not used unless you pass it here)
  --context NAME        run against that context of --kubeconfig (or of ~/.kube/config)
  --database-url URL    postgres://user:password@host:port/database of a PostgreSQL server whose user may
                        create schemas and roles (default: an embedded PGlite on a free loopback port)
  --port N              port of the embedded API server (default: a free one)
  --poll-ms MS          how often each Schema's schema and role are read back for drift (default 1000)
  --once                exit after the scripted steps instead of running until Ctrl-C`;

const NAMESPACE = 'default';
const DEMO_MANAGER = 'rxkube-schema-demo';
const WAIT_MS = 60_000;
/** The schemas and roles the script makes. */
const DEMO_NAMES = ['orders', 'inventory', 'billing', 'reports'];

export async function main(args: readonly string[]): Promise<number> {
  let flags;
  try {
    flags = parseFlags(args, FLAGS);
    if (flags['poll-ms'] === 0) throw new UsageError('--poll-ms must be > 0');
    if (flags['database-url'] !== undefined && !/^postgres(ql)?:\/\//.test(flags['database-url'])) {
      throw new UsageError(`--database-url must be a postgres:// URL, got '${flags['database-url']}'`);
    }
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`schema demo: ${err.message} (see npm run demo:schema -- --help)`);
    return 2;
  }
  if (flags.help) {
    console.log(USAGE);
    return 0;
  }
  const workDir = mkdtempSync(join(tmpdir(), 'rxkube-schema-demo-'));
  const live = process.stdout.isTTY === true;
  const logFile = join(workDir, 'operator.log');
  // stdout is the demo's story: JSON logs go to a file on a terminal, to stderr otherwise.
  const logger = createLogger({
    name: 'schema-demo',
    level: 'warn',
    destination: live ? createWriteStream(logFile, { flags: 'a' }) : process.stderr,
  });

  let server: ApiServer | undefined;
  let embedded: EmbeddedDatabase | undefined;
  let db: pg.Pool | undefined;
  let operator: Operator | undefined;
  let schemas: Informer<Schema> | undefined;
  let board: StatusBoard<Schema> | undefined;
  const shutdown = async () => {
    board?.close();
    schemas?.stop();
    await operator?.stop();
    await server?.close();
    await db?.end();
    await embedded?.close();
  };
  try {
    let kubeConfig: KubeConfig;
    if (flags.kubeconfig !== undefined || flags.context !== undefined) {
      kubeConfig = loadKubeConfig({
        ...(flags.kubeconfig !== undefined ? { kubeconfigPath: flags.kubeconfig } : {}),
        ...(flags.context !== undefined ? { context: flags.context } : {}),
      });
      say(`cluster ${kubeConfig.getCurrentCluster()?.server ?? '(no server)'}, context ${kubeConfig.getCurrentContext()}`);
    } else {
      if (process.env['KUBECONFIG']) say(`KUBECONFIG is set but not used: pass --kubeconfig "$KUBECONFIG" to run against that cluster`);
      server = await startApiServer({ port: flags.port ?? 0 });
      kubeConfig = server.kubeConfig();
      const kubeconfigPath = join(workDir, 'kubeconfig');
      await server.writeKubeconfig(kubeconfigPath);
      say(`embedded API server at ${server.url}`);
      say(`try: kubectl --kubeconfig ${kubeconfigPath} get schemas,secrets`);
    }
    let databaseUrl = flags['database-url'];
    if (databaseUrl === undefined) {
      embedded = await startEmbeddedDatabase();
      databaseUrl = embedded.url;
      say(`embedded PostgreSQL (PGlite) at ${databaseUrl} (one connection at a time: the operator's)`);
    } else {
      say(`PostgreSQL at ${redact(databaseUrl)}`);
    }
    // The embedded server takes one connection at a time: the operator's pool is that one.
    db = createPool({
      url: databaseUrl,
      max: embedded ? 1 : 4,
      onIdleError: (err) => logger.warn({ err: err.message }, 'idle database connection failed'),
    });
    if (live) say(`operator log: ${logFile}`);

    const client = createKubeClient(kubeConfig);
    await installCustomResourceDefinition(client, schemaCrd);
    operator = new Operator({
      kubeConfig,
      logger,
      health: { port: 0, host: '127.0.0.1', checks: { database: () => databaseHealth(db!) } },
    });
    const { reconciler, config } = schemaController({
      db,
      databaseUrl,
      pollIntervalMs: flags['poll-ms'] ?? 1000,
      retry: GenericRetry.unlimited().withInitialMs(500).withFactor(2).withMaxMs(5000),
    });
    operator.register(reconciler, config);
    await operator.start();
    say(`operator health: ${operator.healthUrl}/readyz`);
    schemas = informer<Schema>({ resource: SCHEMA, kubeConfig, namespaces: [NAMESPACE] });
    schemas.start();
    await schemas.whenSynced();
    board = new StatusBoard(schemas, { live, describe, deleted: (name) => `schema/${name.padEnd(10)} deleted` });
    await script({ client, db, embedded, board, healthUrl: operator.healthUrl! });

    if (!flags.once) {
      board.note('running; Ctrl-C to stop');
      await untilSignal();
      say('shutting down');
    }
    await shutdown();
    return 0;
  } catch (err) {
    board?.close();
    console.error(`schema demo: ${errorMessage(err)}`);
    await shutdown().catch(() => undefined);
    return 1;
  }
}

interface Stage {
  readonly client: KubeClient;
  readonly db: pg.Pool;
  readonly embedded: EmbeddedDatabase | undefined;
  readonly board: StatusBoard<Schema>;
  readonly healthUrl: string;
}

/** The scripted steps; each ends with a note saying what happened. */
async function script({ client, db, embedded, board, healthUrl }: Stage): Promise<void> {
  const api = client.resource<Schema>(SCHEMA);
  const apply = (s: Schema) => api.apply(s, { fieldManager: DEMO_MANAGER, force: true });
  const reason = (name: string) => (all: Map<string, Schema>) => all.get(name)?.status?.conditions?.find((c) => c.type === 'Ready')?.reason;
  const exists = async (what: 'nspname' | 'rolname', name: string) =>
    (await db.query(`SELECT 1 FROM ${what === 'nspname' ? 'pg_namespace' : 'pg_roles'} WHERE ${what} = $1`, [name])).rowCount === 1;
  const readyz = async () => {
    const response = await fetch(`${healthUrl}/readyz`);
    return `${response.status} ${(await response.text()).split('\n').find((l) => l.includes('database')) ?? ''}`;
  };

  const taken = [];
  for (const name of DEMO_NAMES) if ((await exists('nspname', name)) || (await exists('rolname', name))) taken.push(name);
  if (taken.length > 0)
    throw new Error(`the database already has a schema or role named ${taken.join(', ')}: the demo needs ${DEMO_NAMES.join(', ')} free`);

  const started = Date.now();
  await apply(schema('orders'));
  await apply(schema('inventory', { deletionPolicy: 'Retain' }));
  await board.until((all) => reason('orders')(all) === 'Reconciled' && reason('inventory')(all) === 'Reconciled', WAIT_MS);
  board.note(
    `2/2 Schemas ready in ${((Date.now() - started) / 1000).toFixed(1)} s: schemas, login roles and Secrets orders-credentials, inventory-credentials`,
  );

  const secret = await client.resource<V1Secret>(SECRET).get({ name: 'orders-credentials', namespace: NAMESPACE });
  const uri = Buffer.from(secret.data?.['uri'] ?? '', 'base64').toString();
  const inSchema = await asOrders(db, embedded, uri, 'CREATE TABLE orders.items (id int)');
  const outside = await asOrders(db, embedded, uri, 'CREATE TABLE public.items (id int)');
  board.note(
    `as role orders${embedded ? ' (SET ROLE: PGlite lets every login in as its superuser)' : ", logged in with the Secret's uri"}: CREATE TABLE orders.items ${inSchema}; CREATE TABLE public.items ${outside}`,
  );

  const refused = await apply(schema('bad', { name: 'select' })).then(
    () => 'accepted (unexpected)',
    (err: unknown) => errorMessage(err),
  );
  board.note(`Schema with name "select" refused by the API server: ${refused}`);

  await db.query('CREATE SCHEMA billing');
  await apply(schema('billing'));
  await board.until((all) => reason('billing')(all) === 'NameConflict', WAIT_MS);
  board.note('schema billing was made by someone else: Schema billing reports NameConflict and leaves it alone');

  await db.query('DROP SCHEMA orders CASCADE');
  board.note("dropped schema orders behind the operator's back");
  await board.until(() => exists('nspname', 'orders'), WAIT_MS);
  board.note('the next poll noticed: schema orders is back');
  await db.query('REVOKE CREATE ON SCHEMA inventory FROM inventory');
  board.note("revoked CREATE on schema inventory from its role behind the operator's back");
  await board.until(
    async () =>
      (await db.query<{ ok: boolean }>(`SELECT has_schema_privilege('inventory', 'inventory', 'CREATE') AS ok`)).rows[0]?.ok === true,
    WAIT_MS,
  );
  board.note('the next poll noticed: CREATE granted again');

  if (embedded) {
    await embedded.stopServing();
    board.note('stopped the embedded database server');
    await apply(schema('reports'));
    await board.until((all) => reason('reports')(all) === 'DatabaseUnavailable', WAIT_MS);
    board.note(`Schema reports waits, retried with backoff; /readyz: ${await readyz()}`);
    await embedded.serve();
    await board.until((all) => reason('reports')(all) === 'Reconciled', WAIT_MS);
    board.note(`database back: Schema reports ready; /readyz: ${await readyz()}`);
  }

  for (const name of ['orders', 'inventory', 'billing', 'reports']) await api.delete({ name, namespace: NAMESPACE }).catch(() => undefined);
  await board.until((all) => all.size === 0, WAIT_MS);
  const left = await Promise.all(
    ['orders', 'inventory', 'billing'].map(async (n) => `${n}: ${(await exists('nspname', n)) ? 'kept' : 'dropped'}`),
  );
  board.note(`deleted the Schemas; schemas ${left.join(', ')} (inventory says Retain; billing was never the operator's)`);
  if (!embedded) {
    await db.query('DROP SCHEMA inventory CASCADE; DROP SCHEMA billing; DROP OWNED BY inventory; DROP ROLE inventory');
    board.note('dropped what the demo left in that database (schemas inventory and billing, role inventory)');
  }
}

/** Runs `sql` as role orders: logged in with the Secret's uri on a real server; with SET ROLE on PGlite. */
async function asOrders(db: pg.Pool, embedded: EmbeddedDatabase | undefined, uri: string, sql: string): Promise<string> {
  if (embedded) {
    const client = await db.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL ROLE orders');
      await client.query(sql);
      await client.query('COMMIT');
      return 'ok';
    } catch (err) {
      await client.query('ROLLBACK');
      return `refused (${errorMessage(err)})`;
    } finally {
      client.release();
    }
  }
  const client = new pg.Client({ connectionString: uri });
  try {
    await client.connect();
    await client.query(sql);
    return 'ok';
  } catch (err) {
    return `refused (${errorMessage(err)})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function say(line: string): void {
  console.log(line);
}

function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.href;
}

function describe(s: Schema): string {
  const ready = s.status?.conditions?.find((c) => c.type === 'Ready');
  const state = !ready ? 'reconciling' : ready.status === 'True' ? 'ready' : `${ready.reason}: ${ready.message}`;
  const facts = ready?.status === 'True' ? ` schema=${s.spec.name} role=${s.spec.role ?? s.spec.name} secret=${s.status?.secretName}` : '';
  const deleting = s.metadata?.deletionTimestamp ? ' (deleting)' : '';
  return `schema/${(s.metadata?.name ?? '').padEnd(10)} ${state}${facts}${s.spec.deletionPolicy === 'Retain' ? ' retain' : ''}${deleting}`;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2));
}
