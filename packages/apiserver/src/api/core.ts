/**
 * The API semantics, independent of HTTP, in one object for the server's assembly: the verbs
 * (verbs.ts), the subresources (subresources.ts), deletion (deletion.ts) and the writes of the
 * controllers inside the server (internal-writes.ts), all on one write path (write-path.ts) with
 * the real server's object rules.
 */
import type { Store } from '../storage/store.js';
import { Deletion } from './deletion.js';
import { InternalWrites } from './internal-writes.js';
import type { PatchEngine } from './patch-port.js';
import type { Registry } from './registry.js';
import { Subresources } from './subresources.js';
import { Verbs } from './verbs.js';
import { WritePath } from './write-path.js';

export interface CoreOptions {
  /** How long a list snapshot stays usable for `continue` (the real server's is etcd's compaction interval). */
  continueTtlMs?: number;
  now?: () => Date;
}

export interface ApiCore {
  readonly store: Store;
  readonly verbs: Verbs;
  readonly subresources: Subresources;
  readonly deletion: Deletion;
  /** What the controllers inside the server write through. */
  readonly internal: InternalWrites;
}

export function apiCore(store: Store, registry: Registry, engine: PatchEngine, options: CoreOptions = {}): ApiCore {
  const writes = new WritePath(store, registry, engine, options.now ?? (() => new Date()));
  const subresources = new Subresources(writes);
  const deletion = new Deletion(writes);
  return {
    store,
    verbs: new Verbs(writes, engine, options.continueTtlMs ?? 5 * 60_000),
    subresources,
    deletion,
    internal: new InternalWrites(writes, deletion, subresources),
  };
}
