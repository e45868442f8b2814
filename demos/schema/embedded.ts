/**
 * The embedded database: PGlite (PostgreSQL compiled to WebAssembly, in this process) served over
 * the PostgreSQL wire protocol on loopback by pglite-socket, so the operator talks to it exactly
 * as it talks to any PostgreSQL server.
 *
 * What PGlite is not: it has one backend session, and every connection runs as the superuser
 * `postgres` whatever user and password it sends. Roles, grants and privilege checks work (`SET
 * ROLE` inside a transaction is enforced); logging in as a role is not, so tests that need a real
 * login run against a real server (RXKUBE_TEST_DATABASE_URL). pglite-socket can multiplex several
 * connections onto the one session, but they then share all a session has (settings, SET ROLE,
 * prepared statements, the transaction), and it queues their protocol messages one by one rather
 * than whole queries: the server takes one connection at a time, so use a pool of one (`max: 1`).
 */
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedDatabase {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  readonly url: string;
  readonly port: number;
  readonly pglite: PGlite;
  /** Stops serving: open connections are closed and new ones refused (the data stays). */
  stopServing(): Promise<void>;
  /** Serves again on the same port. */
  serve(): Promise<void>;
  close(): Promise<void>;
}

/** A second connection at a time is refused (see above). */
const MAX_CONNECTIONS = 1;

export async function startEmbeddedDatabase(options: { port?: number } = {}): Promise<EmbeddedDatabase> {
  const pglite = await PGlite.create();
  // PostgreSQL 15 and later (PGlite is 18) no longer let PUBLIC create in `public`: said explicitly
  // so that a role's being kept to its own schema does not rest on a default.
  await pglite.exec('REVOKE CREATE ON SCHEMA public FROM PUBLIC');
  let server: PGLiteSocketServer | undefined;
  let port = options.port ?? 0;
  const serve = async () => {
    if (server) return;
    const next = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port, maxConnections: MAX_CONNECTIONS });
    await next.start();
    port = Number(next.getServerConn().split(':').pop());
    server = next;
  };
  const stopServing = async () => {
    const current = server;
    server = undefined;
    await current?.stop();
  };
  await serve();
  return {
    get url() {
      return `postgres://postgres@127.0.0.1:${port}/postgres`;
    },
    get port() {
      return port;
    },
    pglite,
    serve,
    stopServing,
    close: async () => {
      await stopServing();
      await pglite.close();
    },
  };
}
