/**
 * Generates packages/apiserv../src/api/builtin-schemas.data.ts: OpenAPI v3 schemas (types, formats,
 * required fields, descriptions, references) of the built-in kinds the embedded server serves, and
 * of the kinds it is about to serve, derived from the models of @kubernetes/client-node (generated
 * from the Kubernetes OpenAPI definitions; `attributeTypeMap` gives names, types and formats, the
 * .d.ts files the descriptions and optional markers). A data file, so the server does not load
 * client-node at run time.
 *
 *   npm run gen:builtin-schemas
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const pkgJson = require.resolve('@kubernetes/client-node/package.json');
const models = join(dirname(pkgJson), 'dist', 'gen', 'models');
const clientVersion = (JSON.parse(readFileSync(pkgJson, 'utf8')) as { version: string }).version;

/** Root models: [class, group, version, kind, Go package of the definitions]. */
const ROOTS: [string, string, string, string, string][] = [
  ['V1Namespace', '', 'v1', 'Namespace', 'io.k8s.api.core.v1'],
  ['V1ConfigMap', '', 'v1', 'ConfigMap', 'io.k8s.api.core.v1'],
  ['V1Secret', '', 'v1', 'Secret', 'io.k8s.api.core.v1'],
  ['V1Service', '', 'v1', 'Service', 'io.k8s.api.core.v1'],
  ['V1ServiceAccount', '', 'v1', 'ServiceAccount', 'io.k8s.api.core.v1'],
  ['V1Pod', '', 'v1', 'Pod', 'io.k8s.api.core.v1'],
  ['V1PodTemplate', '', 'v1', 'PodTemplate', 'io.k8s.api.core.v1'],
  ['CoreV1Event', '', 'v1', 'Event', 'io.k8s.api.core.v1'],
  ['V1Node', '', 'v1', 'Node', 'io.k8s.api.core.v1'],
  ['V1PersistentVolumeClaim', '', 'v1', 'PersistentVolumeClaim', 'io.k8s.api.core.v1'],
  ['V1PersistentVolume', '', 'v1', 'PersistentVolume', 'io.k8s.api.core.v1'],
  ['V1Endpoints', '', 'v1', 'Endpoints', 'io.k8s.api.core.v1'],
  ['EventsV1Event', 'events.k8s.io', 'v1', 'Event', 'io.k8s.api.events.v1'],
  ['V1Deployment', 'apps', 'v1', 'Deployment', 'io.k8s.api.apps.v1'],
  ['V1ReplicaSet', 'apps', 'v1', 'ReplicaSet', 'io.k8s.api.apps.v1'],
  ['V1StatefulSet', 'apps', 'v1', 'StatefulSet', 'io.k8s.api.apps.v1'],
  ['V1DaemonSet', 'apps', 'v1', 'DaemonSet', 'io.k8s.api.apps.v1'],
  ['V1ControllerRevision', 'apps', 'v1', 'ControllerRevision', 'io.k8s.api.apps.v1'],
  ['V1Job', 'batch', 'v1', 'Job', 'io.k8s.api.batch.v1'],
  ['V1CronJob', 'batch', 'v1', 'CronJob', 'io.k8s.api.batch.v1'],
  ['V1EndpointSlice', 'discovery.k8s.io', 'v1', 'EndpointSlice', 'io.k8s.api.discovery.v1'],
  ['V1Ingress', 'networking.k8s.io', 'v1', 'Ingress', 'io.k8s.api.networking.v1'],
  ['V1IngressClass', 'networking.k8s.io', 'v1', 'IngressClass', 'io.k8s.api.networking.v1'],
  ['V1NetworkPolicy', 'networking.k8s.io', 'v1', 'NetworkPolicy', 'io.k8s.api.networking.v1'],
  ['V1Lease', 'coordination.k8s.io', 'v1', 'Lease', 'io.k8s.api.coordination.v1'],
  ['V1Role', 'rbac.authorization.k8s.io', 'v1', 'Role', 'io.k8s.api.rbac.v1'],
  ['V1ClusterRole', 'rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'io.k8s.api.rbac.v1'],
  ['V1RoleBinding', 'rbac.authorization.k8s.io', 'v1', 'RoleBinding', 'io.k8s.api.rbac.v1'],
  ['V1ClusterRoleBinding', 'rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding', 'io.k8s.api.rbac.v1'],
  ['V1PodDisruptionBudget', 'policy', 'v1', 'PodDisruptionBudget', 'io.k8s.api.policy.v1'],
  ['V2HorizontalPodAutoscaler', 'autoscaling', 'v2', 'HorizontalPodAutoscaler', 'io.k8s.api.autoscaling.v2'],
  ['V1StorageClass', 'storage.k8s.io', 'v1', 'StorageClass', 'io.k8s.api.storage.v1'],
  [
    'V1CustomResourceDefinition',
    'apiextensions.k8s.io',
    'v1',
    'CustomResourceDefinition',
    'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1',
  ],
];

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const META_TYPES = new Set([
  'ObjectMeta',
  'ListMeta',
  'LabelSelector',
  'LabelSelectorRequirement',
  'ManagedFieldsEntry',
  'OwnerReference',
  'Condition',
  'Status',
  'StatusDetails',
  'StatusCause',
]);
/** Maps of strings that hold resource.Quantity values (a number or a string on the wire). */
const QUANTITY_MAPS = new Set(['limits', 'requests', 'capacity', 'allocatable', 'hard', 'used', 'allocatedResources']);
const QUANTITY_FIELDS = new Set(['sizeLimit']);

interface Attribute {
  name: string;
  baseName: string;
  type: string;
  format: string;
}
type Schema = Record<string, unknown>;

const definitions: Record<string, Schema> = {};
const nameOfClass = new Map<string, string>();

function shortName(cls: string): string {
  return cls.replace(/^(?:[A-Z][a-z]+)?V\d+(?:(?:alpha|beta)\d+)?(?=[A-Z])/, '');
}

function docs(cls: string): { description?: string; fields: Map<string, { description?: string; optional: boolean }> } {
  const text = readFileSync(join(models, `${cls}.d.ts`), 'utf8');
  const fields = new Map<string, { description?: string; optional: boolean }>();
  const clean = (c: string) =>
    c
      .split('\n')
      .map((l) => l.replace(/^\s*\*\s?/, '').trim())
      .join(' ')
      .trim();
  const classDoc = /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*export declare class/.exec(text);
  const fieldRe = /(?:\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*)?'([^']+)'(\?)?:/g;
  for (let m = fieldRe.exec(text); m; m = fieldRe.exec(text)) {
    fields.set(m[2], { description: m[1] ? clean(m[1]) : undefined, optional: m[3] === '?' });
  }
  return { description: classDoc ? clean(classDoc[1]) : undefined, fields };
}

function attributes(cls: string): Attribute[] {
  const text = readFileSync(join(models, `${cls}.js`), 'utf8');
  const m = /attributeTypeMap = (\[[\s\S]*?\]);/.exec(text);
  return m ? (JSON.parse(m[1]) as Attribute[]) : [];
}

const ref = (cls: string, pkg: string): Schema => ({ $ref: `#/components/schemas/${define(cls, pkg)}` });

function typeSchema(type: string, format: string, pkg: string, field: string): Schema {
  const arr = /^Array<(.+)>$/.exec(type);
  if (arr) return { type: 'array', items: typeSchema(arr[1], '', pkg, '') };
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) return { type: 'object', additionalProperties: QUANTITY_MAPS.has(field) ? quantity() : typeSchema(map[1], '', pkg, '') };
  switch (type) {
    case 'string':
      if (QUANTITY_FIELDS.has(field)) return quantity();
      return format === 'date-time-micro'
        ? { type: 'string', format: 'date-time' }
        : format
          ? { type: 'string', format }
          : { type: 'string' };
    case 'Date':
    case 'V1MicroTime':
      return { type: 'string', format: 'date-time' };
    case 'number':
      return format === 'double' ? { type: 'number', format: 'double' } : { type: 'integer', format: format || 'int64' };
    case 'boolean':
      return { type: 'boolean' };
    case 'IntOrString':
      return { type: 'string', format: 'int-or-string', 'x-kubernetes-int-or-string': true };
    case 'any':
    case 'object':
      // Any JSON value (JSON, RawExtension, JSONSchemaPropsOrBool, ...): not typed here.
      return { 'x-kubernetes-preserve-unknown-fields': true };
    default:
      return ref(type, pkg);
  }
}

function quantity(): Schema {
  return { type: 'string', format: 'quantity', 'x-kubernetes-int-or-string': true };
}

function define(cls: string, pkg: string): string {
  const known = nameOfClass.get(cls);
  if (known) return known;
  const short = shortName(cls);
  const ownPkg = META_TYPES.has(short) ? META : pkg;
  let name = `${ownPkg}.${short}`;
  if (definitions[name]) name = `${ownPkg}.${cls}`;
  nameOfClass.set(cls, name);
  definitions[name] = {};
  const { description, fields } = docs(cls);
  const properties: Record<string, Schema> = {};
  const required: string[] = [];
  for (const a of attributes(cls)) {
    const doc = fields.get(a.name);
    const s = typeSchema(a.type, a.format, ownPkg, a.baseName);
    const withDoc = typeof s.$ref === 'string' ? { allOf: [s] } : s;
    properties[a.baseName] = doc?.description ? { description: doc.description, ...withDoc } : withDoc;
    if (doc && !doc.optional) required.push(a.baseName);
  }
  definitions[name] = {
    ...(description ? { description } : {}),
    type: 'object',
    ...(required.length ? { required } : {}),
    properties,
  };
  return name;
}

const kinds = ROOTS.map(([cls, group, version, kind, pkg]) => {
  const name = define(cls, pkg);
  definitions[name]['x-kubernetes-group-version-kind'] = [{ group, version, kind }];
  return [group, version, kind, name];
});

const data = JSON.stringify({ kinds, definitions });
const out = new URL('../src/api/builtin-schemas.data.ts', import.meta.url);
writeFileSync(
  out,
  `// Generated by scripts/gen-builtin-schemas.ts from @kubernetes/client-node ${clientVersion} models. Do not edit.\n` +
    `// A string, parsed on first use: the server starts without paying for it.\n` +
    `export const BUILTIN_SCHEMAS_JSON = ${JSON.stringify(data)};\n`,
);
console.log(`${Object.keys(definitions).length} definitions, ${kinds.length} kinds, ${data.length} bytes`);
