/**
 * The parts of one server and their lifecycle: storage, types, the write path, the watch hub and
 * the controllers that run inside it, made in dependency order, seeded as a new cluster is (or
 * restored from a data directory), and closed in reverse.
 */
import { builtinTypes } from './api/builtins/index.js';
import { apiCore, type ApiCore } from './api/core.js';
import { CrdController } from './api/crds.js';
import type { Journal, OpenedJournal } from './storage/durable/journal.js';
import { nameOf } from './base/meta.js';
import { Registry } from './api/registry.js';
import { Store } from './storage/store.js';
import { WatchHub } from './api/watch.js';
import {
  Auth,
  bootstrapClusterRoleBindings,
  bootstrapClusterRoles,
  CLUSTER_ROLE_BINDINGS_KEY,
  CLUSTER_ROLES_KEY,
  ClusterRoleAggregator,
  rbacTypes,
  reviewTypes,
} from './auth/index.js';
import { GarbageCollector } from './controllers/gc.js';
import { NamespaceController, NAMESPACES_KEY } from './controllers/namespaces.js';
import { startSimulation } from './controllers/simulators.js';
import { AdmissionWebhooks, controllerDeletes, ConversionWebhooks } from './admission/index.js';
import { FaultInjector } from './http/faults.js';
import { RequestLog } from './http/request-log.js';
import type { ApiServerOptions } from './options.js';
import { patchEngine } from './patch/engine.js';

const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

export interface ServerParts {
  store: Store;
  registry: Registry;
  core: ApiCore;
  hub: WatchHub;
  /** Names of CRDs being deleted: their resources refuse creates meanwhile. */
  terminating: Set<string>;
  crds: CrdController;
  gc: GarbageCollector;
  namespaces: NamespaceController;
  simulation: ReturnType<typeof startSimulation> | undefined;
  aggregator: ClusterRoleAggregator;
  auth: Auth;
  faults: FaultInjector;
  requests: RequestLog;
  admission: AdmissionWebhooks;
  conversion: ConversionWebhooks;
  journal: Journal | undefined;
}

/** Every part, wired, with nothing in the store yet. */
export function assembleParts(options: ApiServerOptions, journal: Journal | undefined): ServerParts {
  const store = new Store({
    historySize: options.historySize,
    historyBytes: options.historyBytes,
    journal: journal && ((change) => journal.append(change)),
  });
  const registry = new Registry();
  for (const t of [...builtinTypes(), ...rbacTypes(), ...reviewTypes()]) registry.add(t);
  const clock = options.simulate?.clock;
  // Creation and deletion times in the simulation's time, as a real cluster's share one clock.
  const core = apiCore(store, registry, patchEngine, {
    continueTtlMs: options.continueTtlMs,
    now: clock && (() => new Date(clock.now())),
  });
  const hub = new WatchHub(store, { bookmarkIntervalMs: options.bookmarkIntervalMs });
  const terminating = new Set<string>();
  const admission = new AdmissionWebhooks(store, registry, options.webhookServices);
  // The controllers inside delete through admission, as the real ones delete through the API.
  const deletes = controllerDeletes(admission);
  return {
    store,
    registry,
    core,
    hub,
    terminating,
    crds: new CrdController(core.internal, registry, store, hub, terminating),
    gc: new GarbageCollector(core.internal, store, registry, deletes),
    namespaces: new NamespaceController(core.internal, store, registry, deletes),
    simulation: options.simulate ? startSimulation(core.internal, store, options.simulate) : undefined,
    aggregator: new ClusterRoleAggregator(core.internal, store),
    auth: new Auth(store, { adminToken: options.token }),
    faults: new FaultInjector(store, hub, options.random),
    requests: new RequestLog(),
    admission,
    conversion: new ConversionWebhooks(store, registry, options.webhookServices),
    journal,
  };
}

/** The state a cluster starts with: what the data directory held, then the default namespaces and ClusterRoles that are missing. */
export function seedCluster(parts: ServerParts, opened: OpenedJournal | undefined): void {
  const { store, core } = parts;
  if (opened) {
    // Everything as it was, at a resourceVersion past any used before; then the CRDs are served again.
    store.restore(opened.state.resourceVersion, opened.state.objects);
    opened.journal.snapshotFrom(() => store.dump());
    parts.crds.serveAll();
    parts.namespaces.resumeAll();
  }
  for (const ns of DEFAULT_NAMESPACES) {
    if (!store.get(NAMESPACES_KEY, '', ns)) core.internal.createInternal(NAMESPACES_KEY, { metadata: { name: ns } });
  }
  for (const role of bootstrapClusterRoles()) {
    if (!store.get(CLUSTER_ROLES_KEY, '', nameOf(role))) core.internal.createInternal(CLUSTER_ROLES_KEY, role);
  }
  for (const binding of bootstrapClusterRoleBindings()) {
    if (!store.get(CLUSTER_ROLE_BINDINGS_KEY, '', nameOf(binding))) core.internal.createInternal(CLUSTER_ROLE_BINDINGS_KEY, binding);
  }
  parts.aggregator.syncAll();
  parts.simulation?.resume();
}

/** Stops the controllers and ends the watches; the HTTP server and the log close after (server.ts). */
export function stopParts(parts: ServerParts): void {
  parts.faults.clear();
  parts.aggregator.close();
  parts.simulation?.close();
  parts.namespaces.close();
  parts.gc.close();
  parts.crds.close();
  parts.hub.close();
}
