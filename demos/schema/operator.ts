/**
 * The Schema operator: a workflow of three dependents — the Secret with the credentials (a
 * Kubernetes dependent owned by the Schema), the login role and the schema (external dependents
 * read from PostgreSQL's catalog and polled, so that a schema dropped or a grant revoked behind
 * the operator's back is put back on the next poll). Deleting a Schema drops the schema and the
 * role (a finalizer holds the Schema until that is done) unless it says `deletionPolicy: Retain`.
 */
import { isDeepStrictEqual } from 'node:util';
import type { V1Secret } from '@kubernetes/client-node';
import type pg from 'pg';
import {
  ErrorStatusUpdateControl,
  externalDependent,
  GenericRetry,
  kubernetesDependent,
  resourceKey,
  statusCondition,
  UpdateControl,
  workflow,
  type Context,
  type ControllerConfig,
  type Reconciler,
  type ResourceID,
  type Retry,
  type StatusCondition,
} from '../../lib/index.js';
import {
  connectionFacts,
  createRole,
  createSchema,
  dropRole,
  dropSchema,
  findError,
  generatePassword,
  grantSchema,
  isUnavailable,
  NameConflictError,
  ownerComment,
  passwordDigest,
  readRole,
  readSchema,
  repairRole,
  type RoleState,
  type SchemaState,
} from './database.js';
import { MANAGED_BY, MANAGED_SELECTOR, roleOf, SCHEMA, SECRET, secretNameOf, type Schema, type SchemaStatus } from './model.js';

export interface SchemaOperatorOptions {
  readonly db: pg.Pool;
  /** The URL the pool connects to: the Secret's host, port and database come from it. */
  readonly databaseUrl: string;
  /** How often each Schema's schema and role are read back to find drift (default 10 s). */
  readonly pollIntervalMs?: number;
  /** Retries of failed runs (default: forever, 1 s doubling up to 30 s: the database comes back some time). */
  readonly retry?: Retry;
}

/** The event source of the operator's Secrets. */
const SECRETS = 'secrets';
const decode = (value: string | undefined) => (value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8'));
const encode = (value: string) => Buffer.from(value, 'utf8').toString('base64');
const uidOf = (s: Schema): string => {
  const uid = s.metadata?.uid;
  if (!uid) throw new Error(`Schema ${s.metadata?.name}: no uid yet`);
  return uid;
};
const idOf = (s: Schema): ResourceID => ({ name: s.metadata?.name ?? '', namespace: s.metadata?.namespace });
const commentFor = (s: Schema) => ownerComment({ namespace: s.metadata?.namespace ?? '', name: s.metadata?.name ?? '', uid: uidOf(s) });

export function schemaController(options: SchemaOperatorOptions): { reconciler: Reconciler<Schema>; config: ControllerConfig<Schema> } {
  const { db, databaseUrl } = options;
  const pollIntervalMs = options.pollIntervalMs ?? 10_000;
  // Polls know a primary only by its id: the names and uid it stands for are noted on each run.
  const names = new Map<string, { schema: string; role: string; uid: string | undefined }>();
  const note = (s: Schema) => names.set(resourceKey(idOf(s)), { schema: s.spec.name, role: roleOf(s), uid: s.metadata?.uid });
  let facts: Promise<{ host: string; port: string; database: string }> | undefined;
  const retained = (s: Schema) => s.spec.deletionPolicy === 'Retain';
  const requireOwned = (s: Schema, what: string, actual: { owner: string | undefined }) => {
    if (actual.owner !== uidOf(s)) {
      throw new NameConflictError(
        `${what} already exists and is not managed by this Schema; it is left as it is (choose another name, or drop or hand it over yourself)`,
      );
    }
  };

  const secret = kubernetesDependent<V1Secret, Schema, Context<Schema>>({
    name: 'secret',
    resource: SECRET,
    sourceName: SECRETS,
    labelSelector: MANAGED_SELECTOR,
    desired: async (s, ctx): Promise<V1Secret> => {
      facts ??= connectionFacts(db, databaseUrl).catch((err: unknown) => {
        facts = undefined;
        throw err;
      });
      const { host, port, database } = await facts;
      // The password is made once and then read back: the Secret is where it lives.
      const password = decode(currentSecret(s, ctx)?.data?.['password']) ?? generatePassword();
      const user = roleOf(s);
      const uri = `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@${host}:${port}/${encodeURIComponent(database)}`;
      const data = { host, port, database, user, password, schema: s.spec.name, uri };
      return {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: secretNameOf(s), labels: { ...MANAGED_BY } },
        type: 'Opaque',
        data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, encode(v)])),
      };
    },
  });
  const currentSecret = (s: Schema, ctx: Context<Schema>): V1Secret | undefined =>
    ctx.getSecondaryResources<V1Secret>(SECRETS).find((x) => x.metadata?.name === secretNameOf(s));
  const passwordOf = (s: Schema, ctx: Context<Schema>): string => {
    const password = decode(currentSecret(s, ctx)?.data?.['password']);
    if (password === undefined) throw new Error(`Secret ${secretNameOf(s)} has no password yet`);
    return password;
  };

  const role = externalDependent<RoleState, Schema, Context<Schema>>({
    name: 'role',
    fetch: (s) => {
      note(s);
      return readRole(db, roleOf(s));
    },
    desired: (s, ctx) => ({ name: roleOf(s), owner: uidOf(s), login: true, passwordDigest: passwordDigest(passwordOf(s, ctx)) }),
    create: (_desired, s, ctx) => createRole(db, roleOf(s), passwordOf(s, ctx), s.spec.name, commentFor(s)),
    update: async (actual, _desired, s, ctx) => {
      requireOwned(s, `role "${actual.name}"`, actual);
      await repairRole(db, actual.name, passwordOf(s, ctx), commentFor(s));
    },
    delete: async (actual, s) => {
      if (!retained(s) && actual.owner === uidOf(s)) await dropRole(db, actual.name);
    },
    polling: {
      intervalMs: pollIntervalMs,
      fetch: async (id) => {
        const known = names.get(resourceKey(id));
        if (!known) return undefined;
        const actual = await readRole(db, known.role);
        const drift = !actual ? 'missing' : actual.owner === known.uid && !actual.login ? 'login' : undefined;
        return withDrift(actual ?? { name: known.role, owner: undefined, login: false, passwordDigest: undefined }, drift);
      },
      equals: inSyncAndEqual,
    },
  });

  const schema = externalDependent<SchemaState, Schema, Context<Schema>>({
    name: 'schema',
    fetch: (s) => {
      note(s);
      return readSchema(db, s.spec.name, roleOf(s));
    },
    desired: (s) => ({ name: s.spec.name, owner: uidOf(s), granted: true }),
    create: (_desired, s) => createSchema(db, s.spec.name, roleOf(s), commentFor(s)),
    update: async (actual, _desired, s) => {
      requireOwned(s, `schema "${actual.name}"`, actual);
      await grantSchema(db, actual.name, roleOf(s));
    },
    delete: async (actual, s) => {
      if (!retained(s) && actual.owner === uidOf(s)) await dropSchema(db, actual.name);
    },
    polling: {
      intervalMs: pollIntervalMs,
      fetch: async (id) => {
        const known = names.get(resourceKey(id));
        if (!known) return undefined;
        const actual = await readSchema(db, known.schema, known.role);
        const drift = !actual ? 'missing' : actual.owner === known.uid && !actual.granted ? 'grants' : undefined;
        return withDrift(actual ?? { name: known.schema, owner: undefined, granted: false }, drift);
      },
      equals: inSyncAndEqual,
    },
  });

  const reconciler: Reconciler<Schema> = {
    reconcile(s) {
      const ready = statusCondition(s, {
        type: 'Ready',
        status: true,
        reason: 'Reconciled',
        message: `schema "${s.spec.name}" and role "${roleOf(s)}" exist; the credentials are in Secret ${secretNameOf(s)}`,
      });
      return UpdateControl.patchStatus({ ...s, status: statusOf(s, ready) });
    },
    cleanup(s) {
      names.delete(resourceKey(idOf(s)));
    },
    updateErrorStatus(s, _ctx, error) {
      const conflict = findError(error, NameConflictError);
      const unavailable = !conflict && isUnavailable(error);
      const reason = conflict ? 'NameConflict' : unavailable ? 'DatabaseUnavailable' : 'ReconcileFailed';
      const message =
        conflict?.message ?? (unavailable ? `the database cannot be reached (retrying): ${messageOf(error)}` : messageOf(error));
      const control = ErrorStatusUpdateControl.patchStatus({
        ...s,
        status: statusOf(s, statusCondition(s, { type: 'Ready', status: false, reason, message })),
      });
      // A name conflict is not solved by retrying: the polls run the Schema again when the other object goes.
      return conflict ? control.withNoRetry() : control;
    },
  };

  const config: ControllerConfig<Schema> = {
    resource: SCHEMA,
    name: 'schema',
    observedGeneration: true,
    workflow: workflow<Schema, Context<Schema>>().add(secret).add(role, { dependsOn: secret }).add(schema, { dependsOn: role }),
    sources: [role.pollingSource!, schema.pollingSource!],
    retry: options.retry ?? GenericRetry.unlimited().withInitialMs(1000).withFactor(2).withMaxMs(30_000),
  };
  return { reconciler, config };
}

/**
 * What a poll reads, with what it found wrong. A poll compares with its own last read, so a schema
 * made and dropped between two polls would look unchanged: while something is wrong, every poll
 * triggers the Schema instead (objects of someone else's are not wrong: nothing to repair).
 */
type Polled<S> = S & { readonly drift?: string };
const withDrift = <S extends object>(state: S, drift: string | undefined): Polled<S> => (drift ? { ...state, drift } : state);
const inSyncAndEqual = <S extends object>(before: Polled<S>, now: Polled<S>) => now.drift === undefined && isDeepStrictEqual(before, now);

function statusOf(s: Schema, ready: StatusCondition): SchemaStatus {
  return { secretName: secretNameOf(s), ready: ready.status === 'True', conditions: [ready] };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
