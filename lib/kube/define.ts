/**
 * A custom resource defined once, with TypeBox: its TypeScript type (`ResourceOf`), its CRD with
 * the structural schema of every version, and its descriptor all come from one definition, so the
 * type the reconciler sees and the schema the API server enforces cannot drift apart.
 */
import type {
  KubernetesObject,
  V1CustomResourceColumnDefinition,
  V1CustomResourceDefinition,
  V1CustomResourceDefinitionVersion,
  V1CustomResourceSubresourceScale,
} from '@kubernetes/client-node';
import type { Static, TSchema } from 'typebox';
import { ConfigurationError } from '../core/index.js';
import { schemaFromJson } from './crd.js';
import { resolveDescriptor, type ResourceDescriptor } from './descriptor.js';
import { structuralSchema, type JsonSchema } from './structural.js';

/** One CEL rule of `x-kubernetes-validations`: `self` is the value of the field it sits on. */
export interface ValidationRule {
  readonly rule: string;
  /** Shown when the rule fails (default: the rule itself). */
  readonly message?: string;
  /** A CEL expression that builds the message; wins over `message`. */
  readonly messageExpression?: string;
  readonly reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  /** The field the error names, relative to `self` (e.g. `.replicas`). */
  readonly fieldPath?: string;
  /** Evaluate on create too, with `oldSelf` an optional (transition rules). */
  readonly optionalOldSelf?: boolean;
}

/**
 * One version of a resource. Give `x-kubernetes-*` extensions and CEL rules as TypeBox options,
 * e.g. `Type.Object({...}, { 'x-kubernetes-validations': [{ rule: 'self.min <= self.max', message: '...' }] })`.
 */
export interface ResourceVersion<Spec extends TSchema = TSchema, Status extends TSchema = TSchema> {
  /** The schema of `spec` (required on every object). */
  readonly spec: Spec;
  /** The schema of `status`; without it status is pruned. */
  readonly status?: Status;
  /** Served by the API server (default true). */
  readonly served?: boolean;
  /** The version objects are stored in: exactly one version is (default: the only version). */
  readonly storage?: boolean;
  /** kubectl warns on every request to a deprecated version. */
  readonly deprecated?: boolean;
  /** The warning instead of the server's default one. */
  readonly deprecationWarning?: string;
  /** Columns of `kubectl get` (jsonPath relative to the object, e.g. `.status.ready`). */
  readonly printerColumns?: readonly V1CustomResourceColumnDefinition[];
  /** Status is a subresource (written through `/status` only); default true when there is a status schema. */
  readonly statusSubresource?: boolean;
  /** The `/scale` subresource, for `kubectl scale` and autoscalers. */
  readonly scale?: V1CustomResourceSubresourceScale;
  /** CEL rules on the whole object (`self.metadata.name`, `self.spec`). */
  readonly validations?: readonly ValidationRule[];
}

/** The versions of a resource by name, e.g. `{ v1: {...}, v1beta1: {...} }`. */
export type ResourceVersions = Readonly<Record<string, ResourceVersion>>;

/** What `defineResource` takes: the names of a resource and its versions' schemas. */
export interface ResourceDefinitionOptions<Versions extends ResourceVersions> {
  /** The API group, a domain with a dot (`sample.rxkube.dev`). */
  readonly group: string;
  /** CamelCase (`WebPage`). */
  readonly kind: string;
  /** The lowercase plural in URLs and RBAC (`webpages`). */
  readonly plural: string;
  /** Default: the kind in lower case. */
  readonly singular?: string;
  /** Short names for kubectl (`wp`). */
  readonly shortNames?: readonly string[];
  /** Groups kubectl expands (`kubectl get all` with `'all'`). */
  readonly categories?: readonly string[];
  /** Default 'Namespaced'. */
  readonly scope?: 'Namespaced' | 'Cluster';
  /** The versions by name; each its own schemas. */
  readonly versions: Versions;
}

/** The name of the version marked `storage: true`, or of any version when none is (a single version). */
export type StorageVersion<Versions extends ResourceVersions> = [
  { [K in keyof Versions & string]: Versions[K] extends { readonly storage: true } ? K : never }[keyof Versions & string],
] extends [never]
  ? keyof Versions & string
  : { [K in keyof Versions & string]: Versions[K] extends { readonly storage: true } ? K : never }[keyof Versions & string];

/** What `defineResource` returns. */
export interface ResourceDefinition<Versions extends ResourceVersions = ResourceVersions> {
  /** As given. */
  readonly group: string;
  /** As given. */
  readonly kind: string;
  /** As given. */
  readonly plural: string;
  /** False for `scope: 'Cluster'`. */
  readonly namespaced: boolean;
  /** The version objects are stored in; `descriptor` and `ResourceOf` default to it. */
  readonly storageVersion: StorageVersion<Versions>;
  /** The TypeBox schemas, as given. */
  readonly versions: Versions;
  /** The descriptor of the storage version: for `register()`, informers and clients. */
  readonly descriptor: ResourceDescriptor;
  /** The descriptor of another served version. */
  descriptorAt(version: keyof Versions & string): ResourceDescriptor;
  /**
   * The CustomResourceDefinition (client-node's typed form, as `customResourceDefinition()` builds
   * it): for `installCustomResourceDefinition`, a module's `crds` for `rxkube manifests`, or kubectl.
   */
  readonly crd: V1CustomResourceDefinition;
}

/**
 * The TypeScript type of a resource's objects at one version (default: the storage version):
 * `KubernetesObject` with the `spec` and `status` of the schemas.
 * `type WebPage = ResourceOf<typeof WebPage>`.
 */
export type ResourceOf<
  Definition extends { readonly versions: ResourceVersions; readonly storageVersion: string },
  Version extends keyof Definition['versions'] = Definition['storageVersion'],
> = KubernetesObject & {
  spec: Static<Definition['versions'][Version]['spec']>;
} & (Definition['versions'][Version] extends { readonly status: infer S extends TSchema } ? { status?: Static<S> } : unknown);

/** The object's root: apiVersion, kind and metadata as every CRD declares them, spec required. */
function rootSchema(kind: string, name: string, version: ResourceVersion): JsonSchema {
  const at = `versions.${name}`;
  return {
    type: 'object',
    description: `${kind} (${name})`,
    required: ['spec'],
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: structuralSchema(version.spec, `${at}.spec`),
      ...(version.status === undefined ? {} : { status: structuralSchema(version.status, `${at}.status`) }),
    },
    ...(version.validations === undefined ? {} : { 'x-kubernetes-validations': version.validations.map((r) => ({ ...r })) }),
  };
}

function storageVersionOf(names: readonly string[], versions: ResourceVersions): string {
  const stored = names.filter((n) => versions[n]?.storage === true);
  if (stored.length === 1) return stored[0];
  if (stored.length === 0 && names.length === 1) return names[0];
  throw new ConfigurationError(
    'versions',
    stored.length === 0
      ? `mark one of ${names.join(', ')} with storage: true`
      : `only one version is stored, but ${stored.join(' and ')} say storage: true`,
  );
}

/**
 * Defines a custom resource once, with TypeBox schemas per version, and derives its CRD and
 * descriptor. Throws ConfigurationError naming what is wrong: the group, kind or plural, the
 * storage version, or a schema node a CRD cannot hold (path and reason).
 *
 * ```ts
 * export const WebPage = defineResource({
 *   group: 'sample.rxkube.dev', kind: 'WebPage', plural: 'webpages',
 *   versions: { v1: { spec: Type.Object({ html: Type.String() }), status: Type.Object({ ready: Type.Optional(Type.Boolean()) }) } },
 * });
 * export type WebPage = ResourceOf<typeof WebPage>;
 * ```
 */
export function defineResource<const Versions extends ResourceVersions>(
  options: ResourceDefinitionOptions<Versions>,
): ResourceDefinition<Versions> {
  const { group, kind, plural } = options;
  const names = Object.keys(options.versions ?? {});
  if (names.length === 0)
    throw new ConfigurationError('versions', `${kind} needs at least one version, e.g. { v1: { spec: Type.Object({...}) } }`);
  const namespaced = (options.scope ?? 'Namespaced') !== 'Cluster';
  if (options.scope !== undefined && options.scope !== 'Namespaced' && options.scope !== 'Cluster') {
    throw new ConfigurationError('scope', `must be 'Namespaced' or 'Cluster', got ${JSON.stringify(options.scope)}`);
  }
  const descriptors = new Map(names.map((name) => [name, { apiVersion: `${group}/${name}`, kind, plural, namespaced }]));
  for (const d of descriptors.values()) resolveDescriptor(d);
  if (!group.includes('.')) {
    throw new ConfigurationError(
      'group',
      `'${group}' must be a domain with a dot (e.g. 'example.com'), as Kubernetes requires of CRD groups`,
    );
  }
  const storageVersion = storageVersionOf(names, options.versions);
  if (!names.some((n) => options.versions[n]?.served !== false))
    throw new ConfigurationError('versions', `${kind}: at least one version must be served`);

  const versions: V1CustomResourceDefinitionVersion[] = names.map((name) => {
    const v = options.versions[name];
    const subresources = {
      ...((v.statusSubresource ?? v.status !== undefined) ? { status: {} } : {}),
      ...(v.scale === undefined ? {} : { scale: { ...v.scale } }),
    };
    return {
      name,
      served: v.served ?? true,
      storage: name === storageVersion,
      ...(v.deprecated === undefined ? {} : { deprecated: v.deprecated }),
      ...(v.deprecationWarning === undefined ? {} : { deprecationWarning: v.deprecationWarning }),
      ...(Object.keys(subresources).length > 0 ? { subresources } : {}),
      schema: { openAPIV3Schema: schemaFromJson(rootSchema(kind, name, v)) },
      ...(v.printerColumns === undefined ? {} : { additionalPrinterColumns: v.printerColumns.map((c) => ({ ...c })) }),
    };
  });
  const crd: V1CustomResourceDefinition = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: namespaced ? 'Namespaced' : 'Cluster',
      names: {
        plural,
        singular: options.singular ?? kind.toLowerCase(),
        kind,
        listKind: `${kind}List`,
        ...(options.shortNames ? { shortNames: [...options.shortNames] } : {}),
        ...(options.categories ? { categories: [...options.categories] } : {}),
      },
      versions,
    },
  };
  return Object.freeze({
    group,
    kind,
    plural,
    namespaced,
    storageVersion: storageVersion as StorageVersion<Versions>,
    versions: options.versions,
    descriptor: descriptors.get(storageVersion) as ResourceDescriptor,
    descriptorAt(version: keyof Versions & string): ResourceDescriptor {
      const d = descriptors.get(version);
      if (d === undefined)
        throw new ConfigurationError('version', `${kind} has no version '${String(version)}' (it has ${names.join(', ')})`);
      return d;
    },
    crd,
  });
}
