/** The one declaration of a controller's secondary source (SecondarySpec) and what it writes. */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { FieldSelector, LabelSelector, ResourceDescriptor } from '../kube/index.js';
import type { PrimaryToSecondaryMapper, SecondaryToPrimaryMapper } from './mappers.js';
import type { Indexer } from '../cache/index.js';

/**
 * A kind of write the reconciler makes through `ctx.secondaryClient(source)`, by the client's
 * methods: `apply` (server-side apply: `apply`), `create`, `update` (`replace`), `patch`
 * (`mergePatch`, `jsonPatch`, `patch`), `delete`, and `status` (the `...Status` methods).
 */
export type SecondaryWrite = 'apply' | 'create' | 'update' | 'patch' | 'delete' | 'status';

/**
 * ES3: a secondary resource type whose changes trigger the primaries they map to — what a
 * controller's `secondaries` list and a dependent's `eventSource` both declare. Sources with the
 * same name are one source (the first one's settings are used).
 */
export interface SecondarySpec<S extends KubernetesObject = KubernetesObject, P extends KubernetesObject = KubernetesObject> {
  /** The source name for `ctx.getSecondaryResource(name)` (default: the resource's plural). */
  readonly name?: string;
  readonly resource: ResourceDescriptor;
  /** Default: the primary's namespaces, following `changeNamespaces` (ES6). */
  readonly namespaces?: 'all' | readonly string[];
  readonly labelSelector?: LabelSelector | undefined;
  readonly fieldSelector?: FieldSelector | undefined;
  /** Default: owner references to the primary kind. */
  readonly toPrimaries?: SecondaryToPrimaryMapper<S>;
  /** Many-to-one or many-to-many: the secondaries a primary uses. */
  readonly toSecondaries?: PrimaryToSecondaryMapper<P>;
  readonly indexers?: Readonly<Record<string, Indexer<S>>>;
  /**
   * Cache the secondaries' metadata only (`PartialObjectMetadata`): enough to map them to their
   * primaries and to read their names, labels and owners, a fraction of the memory for Secrets,
   * Pods or ConfigMaps with data. Declare `S` as `PartialObjectMetadata`.
   */
  readonly metadataOnly?: boolean | undefined;
  /**
   * The writes the reconciler makes through `ctx.secondaryClient(name)`, so that the RBAC
   * `operatorManifests` generates grants them and the operator checks them when it starts:
   * `apply` needs get, create and patch. Default none: a source is only read (get, list, watch).
   */
  readonly writes?: readonly SecondaryWrite[];
}
