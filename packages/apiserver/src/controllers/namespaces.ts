/**
 * Namespace lifecycle, after kube-controller-manager's namespace controller: a namespace being
 * deleted has its contents deleted; when nothing is left, the `kubernetes` finalizer leaves
 * spec.finalizers and the namespace goes. Also the namespace strategy's delete behaviour.
 */
import type { ApiCore } from '../api/core.js';
import { isJsonObject } from '../api/json.js';
import { isBeingDeleted, nameOf, namespaceOf } from '../api/meta.js';
import { WorkQueue } from '../api/work-queue.js';
import type { Registry } from '../api/registry.js';
import type { Store, StoreEvent } from '../api/store.js';

export const NAMESPACES_KEY = '/namespaces';
const KUBERNETES_FINALIZER = 'kubernetes';

export class NamespaceController {
  private readonly queue: WorkQueue;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly core: ApiCore,
    private readonly store: Store,
    private readonly registry: Registry,
  ) {
    this.queue = new WorkQueue('namespace controller', (ns) => this.reconcile(ns));
    this.unsubscribe = store.onEvent((e) => this.onEvent(e));
  }

  private onEvent(e: StoreEvent): void {
    if (e.resource === NAMESPACES_KEY) {
      if (e.type !== 'DELETED' && isBeingDeleted(e.object)) this.queue.add(nameOf(e.object));
      return;
    }
    const ns = namespaceOf(e.object);
    if (e.type === 'DELETED' && ns) {
      const nsObj = this.store.get(NAMESPACES_KEY, '', ns);
      if (nsObj && isBeingDeleted(nsObj)) this.queue.add(ns);
    }
  }

  /** Resumes namespaces that were terminating when state was saved. */
  resumeAll(): void {
    for (const ns of this.store.list(NAMESPACES_KEY)) if (isBeingDeleted(ns)) this.queue.add(nameOf(ns));
  }

  private reconcile(name: string): void {
    const ns = this.store.get(NAMESPACES_KEY, '', name);
    if (!ns || !isBeingDeleted(ns)) return;
    let remaining = 0;
    for (const type of this.registry.all()) {
      if (!type.namespaced) continue;
      for (const obj of this.store.list(type.key, name)) {
        if (!isBeingDeleted(obj)) this.core.deleteInternal(type.key, name, nameOf(obj));
      }
      remaining += this.store.list(type.key, name).length;
    }
    if (remaining > 0) return;
    this.core.mutate(
      NAMESPACES_KEY,
      '',
      name,
      (obj) => {
        const spec = isJsonObject(obj.spec) ? obj.spec : (obj.spec = {});
        const finalizers = Array.isArray(spec.finalizers) ? spec.finalizers : [];
        if (!finalizers.includes(KUBERNETES_FINALIZER)) return false;
        spec.finalizers = finalizers.filter((f) => f !== KUBERNETES_FINALIZER);
        return true;
      },
      { subresource: 'finalize', manager: 'kube-controller-manager' },
    );
  }

  close(): void {
    this.unsubscribe();
    this.queue.close();
  }
}
