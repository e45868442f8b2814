/** A secondary source: an informer's events mapped to the primaries they concern, and the reads of a primary's secondaries. */
import type { KubernetesObject } from '@kubernetes/client-node';
import { mergeMap, Observable, Subject } from 'rxjs';
import { compareResourceVersions, OWNER_UID_INDEX, ReadYourWritesCache, type InformerEvent, type InformerLike } from '../cache/index.js';
import { describeError, resourceIdOf, resourceKey, type ResourceEvent, type ResourceID } from '../core/index.js';
import { toPartialObjectMetadata } from '../kube/index.js';
import {
  isOwnerReferenceMapper,
  mapBoth,
  Mappers,
  primaryToSecondaryIndexer,
  type PrimaryKind,
  type PrimaryToSecondaryMapper,
  type SecondaryToPrimaryMapper,
} from './mappers.js';
import { triggersOf } from './resource-events.js';

export interface SecondarySourceOptions<S extends KubernetesObject, P extends KubernetesObject> {
  informer: InformerLike<S>;
  /** Event source name (default: the informer's name). */
  name?: string | undefined;
  /** The primary type; needed for the default mapper (owner references). */
  primary?: PrimaryKind | undefined;
  /** Default `Mappers.fromOwnerReferences(primary)`; with `toSecondaries` and `primaryInformer`, the inverse of that. */
  toPrimaries?: SecondaryToPrimaryMapper<S> | undefined;
  /** Many-to-one or many-to-many: the secondaries a primary uses (then `getSecondaryResources` uses it). */
  toSecondaries?: PrimaryToSecondaryMapper<P> | undefined;
  /** With `toSecondaries` and no `toPrimaries`: secondary events map back through an index on this informer. */
  primaryInformer?: InformerLike<P> | undefined;
  /** The informer caches metadata only: the answers of writes through this source are kept as metadata too. */
  metadataOnly?: boolean | undefined;
}

/**
 * A mapper that threw, or returned something that is not a set of ResourceIDs, on one object:
 * that object maps to no primary (it is dropped from the source's index and triggers nothing).
 * Reported once per object version.
 */
export interface MapperError {
  readonly source: string;
  readonly error: Error;
  /** The object the mapper failed on. */
  readonly object: KubernetesObject;
}

/**
 * ES3: an informer of any kind whose changes trigger the primaries they map to, with
 * read-your-writes for dependents that write these secondaries (`cache.recordWrite`), and the
 * lookups `ctx.getSecondaryResource(s)` needs (`getSecondaryResources`, `getSecondaryResource`).
 */
export class SecondarySource<S extends KubernetesObject = KubernetesObject, P extends KubernetesObject = KubernetesObject> {
  readonly name: string;
  readonly informer: InformerLike<S>;
  /** Reads and own-write filtering for this source; dependents record their writes here. */
  readonly cache: ReadYourWritesCache<S>;
  private readonly toPrimaries: SecondaryToPrimaryMapper<S>;
  private readonly toSecondaries: PrimaryToSecondaryMapper<P> | undefined;
  private readonly primariesIndex: string | undefined;
  private readonly mapperErrors = new Subject<MapperError>();
  /** key → the resourceVersion whose mapper failure was reported: each version is reported once. */
  private readonly reportedFailures = new Map<string, string>();

  constructor(options: SecondarySourceOptions<S, P>) {
    this.informer = options.informer;
    this.name = options.name ?? options.informer.name;
    this.toSecondaries = options.toSecondaries;
    if (this.toSecondaries !== undefined && typeof this.toSecondaries !== 'function') {
      throw new Error(`secondary source ${this.name}: toSecondaries must be a function (primary) => ResourceID[]`);
    }
    this.toPrimaries = this.resolveToPrimaries(options);
    this.cache = new ReadYourWritesCache<S>(
      options.informer,
      options.metadataOnly ? (written) => toPartialObjectMetadata(written) as S : undefined,
    );
    if (!this.toSecondaries && !isOwnerReferenceMapper(this.toPrimaries)) {
      this.primariesIndex = `rxkube/primaries:${this.name}`;
      this.informer.store.addIndexer(this.primariesIndex, (s) => this.primariesOrNone(s).map(resourceKey));
    }
  }

  /** 'trigger' events for the mapped primaries (own writes left out). Mapper failures go to `errors$`. */
  get events$(): Observable<ResourceEvent<S>> {
    return this.cache.events$.pipe(mergeMap((event) => this.triggers(event)));
  }

  /** Like `events$`, but every cached secondary triggers its primaries first (for a late start). */
  get cacheAndEvents$(): Observable<ResourceEvent<S>> {
    return this.cache.cacheAndEvents$.pipe(mergeMap((event) => this.triggers(event)));
  }

  get errors$(): Observable<MapperError> {
    return this.mapperErrors.asObservable();
  }

  /** The primaries a secondary maps to. */
  primariesOf(secondary: S): ResourceID[] {
    return mapBoth(this.toPrimaries, secondary);
  }

  /**
   * The secondaries of a primary, newest versions: through `toSecondaries` when given, else the
   * owner-uid index (owner-reference mapper), else an index of this source's mapper.
   */
  getSecondaryResources(primary: P): S[] {
    if (this.toSecondaries) {
      const out: S[] = [];
      for (const id of this.toSecondaries(primary)) {
        const found = this.cache.get(id);
        if (found) out.push(found);
      }
      return out;
    }
    if (this.primariesIndex === undefined) {
      const uid = primary.metadata?.uid;
      return uid ? this.cache.byIndex(OWNER_UID_INDEX, uid) : [];
    }
    return this.cache.byIndex(this.primariesIndex, resourceKey(resourceIdOf(primary)));
  }

  /** The one secondary of a primary, or undefined; more than one is an error naming them. */
  getSecondaryResource(primary: P): S | undefined {
    const all = this.getSecondaryResources(primary);
    if (all.length > 1) {
      const names = all.map((s) => resourceKey(resourceIdOf(s))).join(', ');
      throw new Error(
        `secondary source ${this.name}: ${resourceKey(resourceIdOf(primary))} has ${all.length} secondaries (${names}); use getSecondaryResources, or a toSecondaries mapper that names one`,
      );
    }
    return all[0];
  }

  private triggers(event: InformerEvent<S>): ResourceEvent<S>[] {
    const events = triggersOf(this.name, (s: S) => this.primariesOrNone(s), event);
    if (event.type === 'deleted') this.reportedFailures.delete(resourceKey(resourceIdOf(event.object)));
    return events;
  }

  /** The mapper's answer; when it fails, none (the object is dropped), reported once per version. */
  private primariesOrNone(secondary: S): ResourceID[] {
    const key = secondary.metadata?.name ? resourceKey(resourceIdOf(secondary)) : '(unnamed)';
    try {
      const ids = mapBoth(this.toPrimaries, secondary);
      this.reportedFailures.delete(key);
      return ids;
    } catch (err) {
      const rv = secondary.metadata?.resourceVersion ?? '';
      const reported = this.reportedFailures.get(key);
      // An update maps the old version too: a version no newer than the one reported is not reported again.
      if (reported !== undefined && (compareResourceVersions(rv, reported) ?? 1) <= 0) return [];
      this.reportedFailures.set(key, rv);
      const what = `${secondary.kind ?? 'object'} ${key} (resourceVersion ${rv || 'none'})`;
      const error = new Error(
        `secondary source ${this.name}: toPrimaries failed on ${what}, which triggers nothing: ${describeError(err)}`,
        { cause: err },
      );
      this.mapperErrors.next({ source: this.name, error, object: secondary });
      return [];
    }
  }

  private resolveToPrimaries(options: SecondarySourceOptions<S, P>): SecondaryToPrimaryMapper<S> {
    if (options.toPrimaries !== undefined) {
      if (typeof options.toPrimaries !== 'function') {
        throw new Error(`secondary source ${this.name}: toPrimaries must be a function (secondary) => ResourceID[]`);
      }
      return options.toPrimaries;
    }
    if (options.toSecondaries && options.primaryInformer) {
      const indexName = `rxkube/secondaries:${this.name}`;
      options.primaryInformer.store.addIndexer(indexName, primaryToSecondaryIndexer(options.toSecondaries));
      return Mappers.fromPrimaryIndex(options.primaryInformer.store, indexName);
    }
    if (!options.primary) {
      throw new Error(
        `secondary source ${this.name}: give toPrimaries, or primary ({ apiVersion, kind }) for owner references, or toSecondaries with primaryInformer`,
      );
    }
    return Mappers.fromOwnerReferences(options.primary);
  }
}

/** Creates a secondary source (the informer is started by whoever owns it). */
export function secondarySource<S extends KubernetesObject = KubernetesObject, P extends KubernetesObject = KubernetesObject>(
  options: SecondarySourceOptions<S, P>,
): SecondarySource<S, P> {
  return new SecondarySource<S, P>(options);
}
