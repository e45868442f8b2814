/**
 * What the Schema operator does in PostgreSQL, through node-postgres over the wire protocol (any
 * PostgreSQL server, or the embedded PGlite one). Every identifier goes through `escapeIdentifier`
 * and every literal through `escapeLiteral` (DDL takes no bind parameters); catalog reads bind
 * their values. Each object the operator makes carries a comment naming the Schema's uid: that is
 * how it tells its own objects from someone else's, which it never alters or drops.
 */
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';

const { escapeIdentifier: ident, escapeLiteral: literal } = pg;

/** A schema as read from the catalog. */
export interface SchemaState {
  readonly name: string;
  /** The uid of the Schema that made it (from its comment); undefined: not made by this operator. */
  readonly owner: string | undefined;
  /** The login role may use the schema and create objects in it (false when the role does not exist). */
  readonly granted: boolean;
}

/** A role as read from the catalog. */
export interface RoleState {
  readonly name: string;
  readonly owner: string | undefined;
  readonly login: boolean;
  /**
   * A digest of the password it was given (kept in its comment: PostgreSQL does not show a
   * password to anyone but a superuser), so that a Secret whose password changed is noticed.
   */
  readonly passwordDigest: string | undefined;
}

const MARK = 'managed by rxkube-schema for Schema';

/** The comment on every object the operator makes: `managed by rxkube-schema for Schema ns/name uid=...`. */
export function ownerComment(ref: { namespace: string; name: string; uid: string }): string {
  return `${MARK} ${ref.namespace}/${ref.name} uid=${ref.uid}`;
}

export function ownerOf(comment: string | null | undefined): string | undefined {
  if (!comment?.startsWith(MARK)) return undefined;
  return / uid=([0-9a-zA-Z-]+)/.exec(comment)?.[1];
}

function digestIn(comment: string | null | undefined): string | undefined {
  return / password-sha256=([0-9a-f]+)/.exec(comment ?? '')?.[1];
}

export function passwordDigest(password: string): string {
  return createHash('sha256').update(password).digest('hex').slice(0, 16);
}

/** A schema or role of that name exists and was not made by this Schema: reported, never touched. */
export class NameConflictError extends Error {
  override readonly name = 'NameConflictError';
}

export function generatePassword(): string {
  return randomBytes(24).toString('base64url');
}

export interface DatabaseOptions {
  /** postgres://user:password@host:port/database */
  readonly url: string;
  /** Connections in the pool (default 4; 1 for the embedded database, which serves one at a time). */
  readonly max?: number;
  /** A connection attempt fails after this long (default 2000 ms). */
  readonly connectTimeoutMs?: number;
  /** Where errors of idle connections go (a server that went away), instead of crashing the process. */
  readonly onIdleError?: (error: Error) => void;
}

export function createPool(options: DatabaseOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 4,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 2000,
    // Kept open: a server of one connection would refuse the next one while it notices the close.
    idleTimeoutMillis: 0,
  });
  pool.on('error', (error) => options.onIdleError?.(error));
  return pool;
}

export async function readSchema(db: pg.Pool, name: string, role: string): Promise<SchemaState | undefined> {
  const { rows } = await db.query<{ name: string; comment: string | null; usage: boolean | null; create: boolean | null }>(
    `SELECT n.nspname AS name, obj_description(n.oid, 'pg_namespace') AS comment,
            has_schema_privilege(r.oid, n.oid, 'USAGE') AS usage, has_schema_privilege(r.oid, n.oid, 'CREATE') AS create
       FROM pg_namespace n LEFT JOIN pg_roles r ON r.rolname = $2
      WHERE n.nspname = $1`,
    [name, role],
  );
  const row = rows[0];
  return row && { name: row.name, owner: ownerOf(row.comment), granted: row.usage === true && row.create === true };
}

export async function readRole(db: pg.Pool, name: string): Promise<RoleState | undefined> {
  const { rows } = await db.query<{ name: string; comment: string | null; login: boolean }>(
    `SELECT r.rolname AS name, shobj_description(r.oid, 'pg_authid') AS comment, r.rolcanlogin AS login FROM pg_roles r WHERE r.rolname = $1`,
    [name],
  );
  const row = rows[0];
  return row && { name: row.name, owner: ownerOf(row.comment), login: row.login, passwordDigest: digestIn(row.comment) };
}

async function transaction(db: pg.Pool, statements: readonly string[]): Promise<void> {
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    for (const sql of statements) await client.query(sql);
    await client.query('COMMIT');
    client.release();
  } catch (err) {
    // A broken connection is not put back into the pool.
    await client.query('ROLLBACK').then(
      () => client.release(),
      (rollbackError: Error) => client.release(rollbackError),
    );
    throw err;
  }
}

/** `comment` is the owner's; the password's digest is added to it. */
export function createRole(db: pg.Pool, role: string, password: string, schema: string, comment: string): Promise<void> {
  return transaction(db, [
    `CREATE ROLE ${ident(role)} LOGIN PASSWORD ${literal(password)}`,
    `COMMENT ON ROLE ${ident(role)} IS ${literal(`${comment} password-sha256=${passwordDigest(password)}`)}`,
    `ALTER ROLE ${ident(role)} SET search_path TO ${ident(schema)}`,
  ]);
}

/** Login allowed again, with the Secret's password. */
export function repairRole(db: pg.Pool, role: string, password: string, comment: string): Promise<void> {
  return transaction(db, [
    `ALTER ROLE ${ident(role)} LOGIN PASSWORD ${literal(password)}`,
    `COMMENT ON ROLE ${ident(role)} IS ${literal(`${comment} password-sha256=${passwordDigest(password)}`)}`,
  ]);
}

/** Drops what the role owns in this database and its privileges here, then the role. */
export function dropRole(db: pg.Pool, role: string): Promise<void> {
  return transaction(db, [`DROP OWNED BY ${ident(role)}`, `DROP ROLE ${ident(role)}`]);
}

export function createSchema(db: pg.Pool, schema: string, role: string, comment: string): Promise<void> {
  return transaction(db, [
    `CREATE SCHEMA ${ident(schema)}`,
    `COMMENT ON SCHEMA ${ident(schema)} IS ${literal(comment)}`,
    `GRANT USAGE, CREATE ON SCHEMA ${ident(schema)} TO ${ident(role)}`,
  ]);
}

export async function grantSchema(db: pg.Pool, schema: string, role: string): Promise<void> {
  await db.query(`GRANT USAGE, CREATE ON SCHEMA ${ident(schema)} TO ${ident(role)}`);
}

/** The schema and everything in it. */
export async function dropSchema(db: pg.Pool, schema: string): Promise<void> {
  await db.query(`DROP SCHEMA ${ident(schema)} CASCADE`);
}

/** Where the connections go (for the Secret): host, port and database of the pool's server. */
export async function connectionFacts(db: pg.Pool, url: string): Promise<{ host: string; port: string; database: string }> {
  const parsed = new URL(url);
  const { rows } = await db.query<{ database: string }>('SELECT current_database() AS database');
  return {
    host: parsed.hostname,
    port: parsed.port || '5432',
    database: rows[0]?.database ?? decodeURIComponent(parsed.pathname.slice(1)),
  };
}

/** The /readyz check: the database answers a query within the pool's connect timeout. */
export async function databaseHealth(db: pg.Pool): Promise<{ ok: boolean; reason?: string }> {
  try {
    await db.query('SELECT 1');
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: `database: ${err instanceof Error ? err.message || String(err) : String(err)}` };
  }
}

/**
 * The error means the database could not be reached (refused, reset, timed out, shutting down):
 * worth retrying with backoff, unlike a refused statement.
 */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof AggregateError) return error.errors.some(isUnavailable);
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH'].includes(code)) return true;
    // SQLSTATE class 08 (connection exception) and 57P01-57P03 (shutdown, cannot connect now).
    if (code.startsWith('08') || /^57P0[123]$/.test(code)) return true;
  }
  if (/Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(error.message))
    return true;
  return error.cause !== undefined && isUnavailable(error.cause);
}

export function findError<E extends Error>(error: unknown, type: new (...args: never[]) => E): E | undefined {
  if (error instanceof type) return error;
  if (error instanceof AggregateError) return error.errors.map((e: unknown) => findError(e, type)).find((e) => e !== undefined);
  return undefined;
}
