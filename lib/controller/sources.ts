import type { KubernetesObject } from '@kubernetes/client-node';
import { defer, merge, mergeMap, type Observable, Subject } from 'rxjs';
import type { ResourceEvent } from '../core/index.js';
import { errorLogLevel, resourceBindings, type Logger } from '../observe/index.js';
import { type InformerLike, type InformerPool, type Namespaces, type ObjectTransform, type SharedInformerOptions } from '../cache/index.js';
import { SecondarySource, type SecondarySpec } from '../sources/index.js';
import type { EventSourceRegistry } from '../workflow/index.js';
import { resolveSecondary, type ResolvedControllerConfig, type ResolvedSecondary } from './config.js';
import type { SecondaryLookup } from './run.js';
import type { EventSourceInfo, InformerTuning } from './types.js';

/** Where a controller's informers come from: every one of them with the controller's tuning, from the operator's pool. */
export type InformerFactory = <T extends KubernetesObject>(options: SharedInformerOptions<T>) => InformerLike<T>;

/** The informers of one controller: `ControllerConfig.informer` tuning, shared through the pool (one client). */
export function controllerInformers(pool: InformerPool, tuning: InformerTuning): InformerFactory {
  const { transform, timeoutSeconds, deadMarginMs, listTimeoutMs, watchList, backoff } = tuning;
  // A transform keeps the object's kind: what it returns for a T is a T.
  return <T extends KubernetesObject>(options: SharedInformerOptions<T>) =>
    pool.acquire<T>({
      transform: transform as ObjectTransform<T> | undefined,
      timeoutSeconds,
      deadMarginMs,
      listTimeoutMs,
      watchList,
      backoff,
      ...options,
    });
}

export interface ControllerSourcesOptions<P extends KubernetesObject> {
  readonly config: ResolvedControllerConfig<P>;
  readonly informerFor: InformerFactory;
  /** The controller's logger. */
  readonly logger: Logger;
  readonly primaryInformer: InformerLike<P>;
}

/**
 * The secondary sources of one controller: those of its configuration, and those activation
 * conditions register and unregister at run time (WF5). Runs read them here by name; the
 * Controller starts, moves (ES6) and stops their informers.
 */
export class ControllerSources<P extends KubernetesObject> implements SecondaryLookup<P>, EventSourceRegistry {
  private readonly sources = new Map<string, SecondarySource<KubernetesObject, P>>();
  /** Sources that watch the primary's namespaces (ES6). */
  private readonly followingPrimary = new Set<string>();
  /** Sources registered at run time, with the dependents using them. */
  private readonly registered = new Map<string, { readonly users: Set<string>; readonly synced: Promise<void> }>();
  private readonly added = new Subject<SecondarySource<KubernetesObject, P>>();

  constructor(private readonly options: ControllerSourcesOptions<P>) {
    for (const secondary of options.config.secondaries) this.add(secondary);
  }

  get(name: string): SecondarySource<KubernetesObject, P> | undefined {
    return this.sources.get(name);
  }

  keys(): IterableIterator<string> {
    return this.sources.keys();
  }

  /** The events of every source: those there when subscribed, and those registered later. */
  get events$(): Observable<ResourceEvent> {
    return defer(() => merge(...[...this.sources.values()].map((s) => s.events$), this.added.pipe(mergeMap((s) => s.events$))));
  }

  informers(): InformerLike<KubernetesObject>[] {
    return [...this.sources.values()].map((s) => s.informer);
  }

  /** WF5: the first dependent to register a source starts it; later ones wait for the same sync. */
  async register(dependent: string, eventSource: SecondarySpec): Promise<void> {
    const resolved = resolveSecondary<P>(eventSource, `workflow.${dependent}.eventSource`);
    const registered = this.registered.get(resolved.name);
    if (registered) {
      registered.users.add(dependent);
      return registered.synced;
    }
    if (this.sources.has(resolved.name)) return; // a static source of that name serves it
    const source = this.add(resolved);
    source.informer.start();
    this.added.next(source);
    const synced = source.informer.whenSynced({ timeoutMs: this.options.config.cacheSyncTimeoutMs, failOnError: false });
    this.registered.set(resolved.name, { users: new Set([dependent]), synced });
    await synced;
    this.options.logger.info({ source: resolved.name, dependent }, 'event source registered');
  }

  /** WF5: the last dependent to unregister a source stops it. */
  unregister(dependent: string, eventSource: SecondarySpec): void {
    const name = resolveSecondary<P>(eventSource, `workflow.${dependent}.eventSource`).name;
    const users = this.registered.get(name)?.users;
    if (!users?.delete(dependent) || users.size > 0) return;
    this.registered.delete(name);
    const source = this.sources.get(name);
    this.sources.delete(name);
    this.followingPrimary.delete(name);
    source?.informer.stop();
    source?.cache.dispose();
    this.options.logger.info({ source: name, dependent }, 'event source unregistered');
  }

  /** ES6: the sources that follow the primary move with it. */
  setNamespaces(namespaces: Namespaces): void {
    for (const name of this.followingPrimary) this.sources.get(name)?.informer.setNamespaces(namespaces);
  }

  /** As they stand now. */
  list(): EventSourceInfo[] {
    return [...this.sources].map(([name, source]): EventSourceInfo => {
      const users = this.registered.get(name)?.users;
      return { name, type: 'secondary', ...watching(source.informer), ...(users ? { registeredBy: [...users] } : {}) };
    });
  }

  dispose(): void {
    for (const source of this.sources.values()) source.cache.dispose();
  }

  private add(secondary: ResolvedSecondary<P>): SecondarySource<KubernetesObject, P> {
    const { config, informerFor, primaryInformer, logger } = this.options;
    const inf = informerFor<KubernetesObject>({
      resource: secondary.descriptor,
      name: `${config.name}/${secondary.name}`,
      namespaces: secondary.followsPrimary ? primaryInformer.namespaces : (secondary.namespaces ?? 'all'),
      labelSelector: secondary.labelSelector,
      fieldSelector: secondary.fieldSelector,
      indexers: secondary.indexers,
      metadataOnly: secondary.metadataOnly,
    });
    const source = new SecondarySource<KubernetesObject, P>({
      informer: inf,
      name: secondary.name,
      primary: { apiVersion: config.descriptor.apiVersion, kind: config.descriptor.kind },
      toPrimaries: secondary.toPrimaries,
      toSecondaries: secondary.toSecondaries,
      primaryInformer,
      metadataOnly: secondary.metadataOnly,
    });
    logInformerFailures(logger, inf, source);
    this.sources.set(secondary.name, source);
    if (secondary.followsPrimary) this.followingPrimary.add(secondary.name);
    return source;
  }
}

/** What an informer watches, for `listEventSources()`. */
export function watching<T extends KubernetesObject>(inf: InformerLike<T>): Pick<EventSourceInfo, 'resource' | 'namespaces'> {
  return { resource: { apiVersion: inf.resource.apiVersion, kind: inf.resource.kind }, namespaces: inf.namespaces };
}

/** Failed lists and watches are retried by the informer; they are logged here so they are seen. */
export function logInformerFailures<P extends KubernetesObject>(
  logger: Logger,
  inf: InformerLike<KubernetesObject> | InformerLike<P>,
  source?: SecondarySource<KubernetesObject, P>,
): void {
  inf.errors$.subscribe(({ error, informer: name, namespace, phase, delayMs }) =>
    logger[errorLogLevel(error)]({ informer: name, namespace, phase, retryInMs: delayMs, err: error }, `${phase} failed; retrying`),
  );
  // An indexer or mapper that throws drops that object (from its index, from the triggers); logged once per version.
  inf.indexerErrors$.subscribe((error) =>
    logger.error({ informer: inf.name, err: error }, 'an indexer failed; the object is left out of that index'),
  );
  source?.errors$.subscribe(({ source: name, error, object }) =>
    logger.error({ source: name, err: error, object: resourceBindings(object).resource }, 'mapping a secondary to primaries failed'),
  );
}
