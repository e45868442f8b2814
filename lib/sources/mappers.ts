/** Mappers between secondaries and their primaries: owner references, annotations, indexes. */
import type { KubernetesObject } from '@kubernetes/client-node';
import { resourceIdOf, resourceKey, type ResourceID } from '../core/index.js';
import { parseApiVersion } from '../kube/index.js';
import type { StoreReader } from '../cache/index.js';

/** ES3: which primaries a secondary concerns. Empty: the event is irrelevant. */
export type SecondaryToPrimaryMapper<S> = (secondary: S) => Iterable<ResourceID>;

/** ES3: which secondaries a primary uses (many-to-one, many-to-many). */
export type PrimaryToSecondaryMapper<P> = (primary: P) => Iterable<ResourceID>;

/** The primary type a mapper targets. `namespaced` defaults to true. */
export interface PrimaryKind {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespaced?: boolean | undefined;
}

export interface OwnerReferenceMapperOptions {
  /** Only the owner reference with `controller: true` (default false: any owner of the kind). */
  controllerOnly?: boolean | undefined;
}

/** Annotations `Mappers.fromDefaultAnnotations` reads (and `primaryAnnotations` writes). */
export const PRIMARY_NAME_ANNOTATION = 'rxkube.dev/primary-name';
export const PRIMARY_NAMESPACE_ANNOTATION = 'rxkube.dev/primary-namespace';

const ownerMappers = new WeakSet<object>();

/** True for mappers made by `Mappers.fromOwnerReferences` (their secondaries are found by owner uid). */
export function isOwnerReferenceMapper(mapper: unknown): boolean {
  return typeof mapper === 'function' && ownerMappers.has(mapper);
}

export const Mappers = {
  /**
   * The default: the owner references of the given kind (group and kind compared; the version
   * may differ). Owners live in the secondary's namespace, or none for a cluster-scoped primary.
   */
  fromOwnerReferences(primary: PrimaryKind, options: OwnerReferenceMapperOptions = {}): SecondaryToPrimaryMapper<KubernetesObject> {
    if (!primary || typeof primary.kind !== 'string' || primary.kind === '') {
      throw new Error('Mappers.fromOwnerReferences: the primary kind is required ({ apiVersion, kind })');
    }
    const { group } = parseApiVersion(primary.apiVersion);
    const namespaced = primary.namespaced ?? true;
    const mapper = (secondary: KubernetesObject): ResourceID[] => {
      const namespace = secondary.metadata?.namespace;
      return (secondary.metadata?.ownerReferences ?? [])
        .filter((ref) => ref.kind === primary.kind && groupOf(ref.apiVersion) === group)
        .filter((ref) => !options.controllerOnly || ref.controller === true)
        .map((ref) => (namespaced && namespace ? { name: ref.name, namespace } : { name: ref.name }));
    };
    ownerMappers.add(mapper);
    return mapper;
  },

  /**
   * The primary's name from an annotation; its namespace from another annotation, else the
   * secondary's own namespace. No name annotation: no primary.
   */
  fromAnnotation(nameKey: string, namespaceKey?: string): SecondaryToPrimaryMapper<KubernetesObject> {
    if (typeof nameKey !== 'string' || nameKey === '')
      throw new Error('Mappers.fromAnnotation: nameKey must be a non-empty annotation key');
    return (secondary) => fromMetadata(secondary.metadata?.annotations, nameKey, namespaceKey, secondary.metadata?.namespace);
  },

  /** `fromAnnotation` with rxkube.dev/primary-name and rxkube.dev/primary-namespace. */
  fromDefaultAnnotations(): SecondaryToPrimaryMapper<KubernetesObject> {
    return Mappers.fromAnnotation(PRIMARY_NAME_ANNOTATION, PRIMARY_NAMESPACE_ANNOTATION);
  },

  /** Like fromAnnotation, with labels. */
  fromLabel(nameKey: string, namespaceKey?: string): SecondaryToPrimaryMapper<KubernetesObject> {
    if (typeof nameKey !== 'string' || nameKey === '') throw new Error('Mappers.fromLabel: nameKey must be a non-empty label key');
    return (secondary) => fromMetadata(secondary.metadata?.labels, nameKey, namespaceKey, secondary.metadata?.namespace);
  },

  /** The secondary is its own primary's id (same name and namespace). */
  fromSameName(): SecondaryToPrimaryMapper<KubernetesObject> {
    return (secondary) => [resourceIdOf(secondary)];
  },

  /**
   * Many-to-many, the inverse of a primary → secondary mapping: the primaries whose mapping
   * names the secondary, found through an index on the primary informer's store (which must have
   * been given `primaryToSecondaryIndexer(toSecondaries)` under `indexName`).
   */
  fromPrimaryIndex(
    primaries: Pick<StoreReader<KubernetesObject>, 'byIndex'>,
    indexName: string,
  ): SecondaryToPrimaryMapper<KubernetesObject> {
    return (secondary) => primaries.byIndex(indexName, resourceKey(resourceIdOf(secondary))).map((p) => resourceIdOf(p));
  },
};

/** An indexer for the primary store: a primary's keys are the keys of the secondaries it maps to. */
export function primaryToSecondaryIndexer<P>(toSecondaries: PrimaryToSecondaryMapper<P>): (primary: P) => string[] {
  return (primary) => [...toSecondaries(primary)].map(resourceKey);
}

/** The annotations `Mappers.fromDefaultAnnotations` maps back to the given primary. */
export function primaryAnnotations(primary: ResourceID): Record<string, string> {
  return primary.namespace
    ? { [PRIMARY_NAME_ANNOTATION]: primary.name, [PRIMARY_NAMESPACE_ANNOTATION]: primary.namespace }
    : { [PRIMARY_NAME_ANNOTATION]: primary.name };
}

/** Applies a mapper to an event's object and, for a modify, its old object too (deduplicated). */
export function mapBoth<S>(mapper: SecondaryToPrimaryMapper<S>, object: S, oldObject?: S): ResourceID[] {
  const out = new Map<string, ResourceID>();
  for (const source of oldObject === undefined ? [object] : [object, oldObject]) {
    for (const id of mapper(source)) {
      if (!id || typeof id.name !== 'string' || id.name === '') {
        throw new Error(`secondary-to-primary mapper returned an invalid ResourceID ${JSON.stringify(id)} (a name is required)`);
      }
      out.set(resourceKey(id), id.namespace ? { name: id.name, namespace: id.namespace } : { name: id.name });
    }
  }
  return [...out.values()];
}

function fromMetadata(
  values: Record<string, string> | undefined,
  nameKey: string,
  namespaceKey: string | undefined,
  ownNamespace: string | undefined,
): ResourceID[] {
  const name = values?.[nameKey];
  if (!name) return [];
  const namespace = (namespaceKey ? values?.[namespaceKey] : undefined) || ownNamespace;
  return [namespace ? { name, namespace } : { name }];
}

function groupOf(apiVersion: string | undefined): string {
  if (!apiVersion) return '';
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}
