/**
 * The Schema custom resource: a PostgreSQL schema, a login role allowed only on it, and a Secret
 * with the connection details. Names are checked by the CRD (OpenAPI pattern, length, CEL for
 * reserved words) so that nothing invalid reaches SQL; the SQL side still quotes every identifier.
 */
import type { KubernetesObject, V1JSONSchemaProps } from '@kubernetes/client-node';
import type { StatusCondition } from '../../lib/index.js';
import { builtinResources, customResourceDefinition, descriptorOf, statusConditionsSchema } from '../../lib/kube.js';

export interface SchemaSpec {
  /** The schema's name in the database: a lowercase SQL identifier, at most 63 bytes. */
  name: string;
  /** The login role allowed on the schema (default: the schema's name). */
  role?: string;
  /** `Delete` (default) drops the schema, its tables and the role when the Schema is deleted; `Retain` keeps them. */
  deletionPolicy?: 'Delete' | 'Retain';
}

export interface SchemaStatus {
  /** The Secret with host, port, database, user, password, schema and uri. */
  secretName?: string;
  ready?: boolean;
  observedGeneration?: number;
  /** `Ready` with its reason: Reconciled, DatabaseUnavailable, NameConflict, ReconcileFailed. */
  conditions?: StatusCondition[];
}

export interface Schema extends KubernetesObject {
  spec: SchemaSpec;
  status?: SchemaStatus;
}

/**
 * PostgreSQL's reserved key words (`pg_get_keywords()` categories R and T in PostgreSQL 18): a
 * schema or role of that name would need quoting in every query an application writes.
 */
export const RESERVED_WORDS: readonly string[] = [
  'all',
  'analyse',
  'analyze',
  'and',
  'any',
  'array',
  'as',
  'asc',
  'asymmetric',
  'authorization',
  'binary',
  'both',
  'case',
  'cast',
  'check',
  'collate',
  'collation',
  'column',
  'concurrently',
  'constraint',
  'create',
  'cross',
  'current_catalog',
  'current_date',
  'current_role',
  'current_schema',
  'current_time',
  'current_timestamp',
  'current_user',
  'default',
  'deferrable',
  'desc',
  'distinct',
  'do',
  'else',
  'end',
  'except',
  'false',
  'fetch',
  'for',
  'foreign',
  'freeze',
  'from',
  'full',
  'grant',
  'group',
  'having',
  'ilike',
  'in',
  'initially',
  'inner',
  'intersect',
  'into',
  'is',
  'isnull',
  'join',
  'lateral',
  'leading',
  'left',
  'like',
  'limit',
  'localtime',
  'localtimestamp',
  'natural',
  'not',
  'notnull',
  'null',
  'offset',
  'on',
  'only',
  'or',
  'order',
  'outer',
  'overlaps',
  'placing',
  'primary',
  'references',
  'returning',
  'right',
  'select',
  'session_user',
  'similar',
  'some',
  'symmetric',
  'system_user',
  'table',
  'tablesample',
  'then',
  'to',
  'trailing',
  'true',
  'union',
  'unique',
  'user',
  'using',
  'variadic',
  'verbose',
  'when',
  'where',
  'window',
  'with',
];

/** Names the database itself uses: never managed by the operator. */
export const SYSTEM_NAMES: readonly string[] = ['public', 'information_schema', 'postgres'];

/** The OpenAPI schema of a schema or role name: what the API server checks before anything runs. */
export function identifierSchema(what: string): V1JSONSchemaProps {
  const list = (words: readonly string[]) => `[${words.map((w) => `'${w}'`).join(', ')}]`;
  return {
    type: 'string',
    minLength: 1,
    // PostgreSQL truncates identifiers to 63 bytes (NAMEDATALEN - 1); ASCII only, so bytes = characters.
    maxLength: 63,
    pattern: '^[a-z_][a-z0-9_]*$',
    description: `The ${what}: a lowercase SQL identifier (a-z, 0-9, _; not starting with a digit), at most 63 bytes, not a reserved word.`,
    x_kubernetes_validations: [
      { rule: `!(self in ${list(RESERVED_WORDS)})`, message: `must not be a PostgreSQL reserved word` },
      {
        rule: `!self.startsWith('pg_') && !(self in ${list(SYSTEM_NAMES)})`,
        message: `must not start with pg_ or be ${SYSTEM_NAMES.join(', ')}`,
      },
    ],
  };
}

export const GROUP = 'sample.rxkube.dev';

export const schemaCrd = customResourceDefinition({
  group: GROUP,
  kind: 'Schema',
  plural: 'schemas',
  shortNames: ['sch'],
  spec: {
    type: 'object',
    required: ['name'],
    properties: {
      name: identifierSchema('schema name'),
      role: identifierSchema('login role'),
      deletionPolicy: { type: 'string', _enum: ['Delete', 'Retain'], _default: 'Delete' },
    },
    // A rename would leave the old schema behind with its data: make a new Schema instead.
    x_kubernetes_validations: [
      { rule: 'self.name == oldSelf.name', message: 'name is immutable' },
      { rule: 'has(self.role) == has(oldSelf.role) && (!has(self.role) || self.role == oldSelf.role)', message: 'role is immutable' },
    ],
  },
  status: {
    type: 'object',
    properties: {
      secretName: { type: 'string' },
      ready: { type: 'boolean' },
      observedGeneration: { type: 'integer' },
      conditions: statusConditionsSchema,
    },
  },
  printerColumns: [
    { name: 'Schema', type: 'string', jsonPath: '.spec.name' },
    { name: 'Ready', type: 'string', jsonPath: `.status.conditions[?(@.type=="Ready")].status` },
    { name: 'Reason', type: 'string', jsonPath: `.status.conditions[?(@.type=="Ready")].reason` },
    { name: 'Secret', type: 'string', jsonPath: '.status.secretName' },
  ],
});

export const SCHEMA = descriptorOf(schemaCrd);
export const { secret: SECRET } = builtinResources;

/** Every Secret the operator writes carries this label, so it watches only its own. */
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'rxkube-schema' } as const;
export const MANAGED_SELECTOR = { matchLabels: MANAGED_BY };

export function schema(name: string, spec: Partial<SchemaSpec> = {}, namespace = 'default'): Schema {
  return {
    apiVersion: SCHEMA.apiVersion,
    kind: SCHEMA.kind,
    metadata: { name, namespace },
    spec: { name: name.replaceAll('-', '_'), ...spec },
  };
}

export const roleOf = (s: Schema): string => s.spec.role ?? s.spec.name;
export const secretNameOf = (s: Schema): string => `${s.metadata?.name ?? ''}-credentials`;
