/**
 * Namespace lifecycle, after kube-controller-manager's namespace controller: a namespace being
 * deleted has its contents deleted; when nothing is left, the `kubernetes` finalizer leaves
 * spec.finalizers and the namespace goes. Also the namespace strategy's delete behaviour.
 */
import type { DeleteAdmission } from '../api/admission-port.js';
import type { InternalWrites } from '../api/internal-writes.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../base/json.js';
import { finalizersOf, isBeingDeleted, nameOf, namespaceOf, resourceVersionOf, timestamp, uidOf } from '../base/meta.js';
import { WorkQueue } from '../base/work-queue.js';
import type { Registry, Resolved } from '../api/registry.js';
import type { Store, StoreEvent } from '../storage/store.js';

export const NAMESPACES_KEY = '/namespaces';
const KUBERNETES_FINALIZER = 'kubernetes';
/** The kube-system ServiceAccount the real namespace controller deletes as. */
const NAMESPACE_ACCOUNT = 'namespace-controller';

/** The conditions the real namespace deleter keeps, with their reason and message while nothing fails. */
const DELETION_CONDITIONS: [type: string, okReason: string, okMessage: string][] = [
  ['NamespaceDeletionDiscoveryFailure', 'ResourcesDiscovered', 'All resources successfully discovered'],
  ['NamespaceDeletionGroupVersionParsingFailure', 'ParsedGroupVersions', 'All legacy kube types successfully parsed'],
  ['NamespaceDeletionContentFailure', 'ContentDeleted', 'All content successfully deleted, may be waiting on finalization'],
  ['NamespaceContentRemaining', 'ContentRemoved', 'All content successfully removed'],
  ['NamespaceFinalizersRemaining', 'ContentRemoved', 'All content successfully removed'],
];

/** What a pass of content deletion left: the refusals (one per resource), and what remains. */
export interface DeletionOutcome {
  failures: string[];
  /** `resource.group` (`configmaps.` for the core group) to the number of objects left. */
  remaining: Map<string, number>;
  /** Finalizer to the number of objects left that carry it. */
  finalizers: Map<string, number>;
}

/**
 * The namespace's status conditions after a pass, as the real deleter's condition updater words
 * them (a failing condition True with its reason, the others False with their ok wording);
 * undefined when nothing changed. lastTransitionTime moves only when a status does.
 */
export function deletionConditions(current: JsonValue | undefined, outcome: DeletionOutcome, now: string): JsonObject[] | undefined {
  const counted = (m: Map<string, number>, format: (k: string, n: number) => string): string =>
    [...m]
      .filter(([, n]) => n > 0)
      .map(([k, n]) => format(k, n))
      .sort()
      .join(', ');
  const resources = counted(outcome.remaining, (k, n) => `${k} has ${n} resource instances`);
  const finalizers = counted(outcome.finalizers, (k, n) => `${k} in ${n} resource instances`);
  const failing: Record<string, [reason: string, message: string] | undefined> = {
    NamespaceDeletionContentFailure: outcome.failures.length
      ? [
          'ContentDeletionFailed',
          `Failed to delete all resource types, ${outcome.failures.length} remaining: ${[...outcome.failures].sort().join(', ')}`,
        ]
      : undefined,
    NamespaceContentRemaining: resources ? ['SomeResourcesRemain', `Some resources are remaining: ${resources}`] : undefined,
    NamespaceFinalizersRemaining: finalizers ? ['SomeFinalizerRemain', `Some finalizers are remaining: ${finalizers}`] : undefined,
  };
  const conditions = Array.isArray(current) ? current.filter(isJsonObject).map((c) => ({ ...c })) : [];
  let changed = false;
  for (const [type, okReason, okMessage] of DELETION_CONDITIONS) {
    const [reason, message] = failing[type] ?? [okReason, okMessage];
    const status = failing[type] ? 'True' : 'False';
    const old = conditions.find((c) => c.type === type);
    if (!old) {
      conditions.push({ type, status, lastTransitionTime: now, reason, message });
      changed = true;
    } else if (old.status !== status || old.reason !== reason || old.message !== message) {
      if (old.status !== status) old.lastTransitionTime = now;
      Object.assign(old, { status, reason, message });
      changed = true;
    }
  }
  return changed ? conditions : undefined;
}

export class NamespaceController {
  private readonly queue: WorkQueue;
  private readonly unsubscribe: () => void;
  /** Namespaces whose content admission is deciding on, and those to reconcile again once it has. */
  private readonly admitting = new Set<string>();
  private readonly again = new Set<string>();
  private closed = false;

  constructor(
    private readonly writes: InternalWrites,
    private readonly store: Store,
    private readonly registry: Registry,
    private readonly admission?: DeleteAdmission,
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
    if (this.admitting.has(name)) {
      this.again.add(name);
      return;
    }
    const ns = this.store.get(NAMESPACES_KEY, '', name);
    if (!ns || !isBeingDeleted(ns)) return;
    let remaining = 0;
    const admitted: { r: Resolved; objects: JsonObject[] }[] = [];
    for (const type of this.registry.all()) {
      if (!type.namespaced) continue;
      const r = this.writes.resolveKey(type.key);
      const objects: JsonObject[] = [];
      for (const obj of this.store.list(type.key, name)) {
        if (isBeingDeleted(obj)) continue;
        if (r && this.admission?.covers(r, obj)) objects.push(obj);
        else this.writes.deleteInternal(type.key, name, nameOf(obj));
      }
      if (r && objects.length) admitted.push({ r, objects });
      remaining += this.store.list(type.key, name).length;
    }
    if (admitted.length) {
      this.deleteThroughAdmission(name, admitted);
      return;
    }
    if (remaining > 0) return;
    this.writes.mutate(
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

  /**
   * Deletes what admission may see through it, as the real controller deletes through the API: per
   * resource one object after another, the first refusal ending that resource (as a DELETE of its
   * collection ends). A refusal keeps the namespace Terminating, reported in its conditions, and
   * the namespace is tried again later.
   */
  private deleteThroughAdmission(namespace: string, admitted: { r: Resolved; objects: JsonObject[] }[]): void {
    const admission = this.admission as DeleteAdmission;
    this.admitting.add(namespace);
    const failures: string[] = [];
    const pass = async (): Promise<void> => {
      for (const { r, objects } of admitted) {
        for (const obj of objects) {
          const refusal = await admission.admit(r, obj, NAMESPACE_ACCOUNT);
          if (this.closed) return;
          if (refusal) {
            failures.push(refusal.message);
            break;
          }
          // Admission answered for the object as it was; one changed meanwhile waits for the next pass.
          const now = this.store.get(r.type.key, namespace, nameOf(obj));
          if (now && resourceVersionOf(now) !== resourceVersionOf(obj)) this.again.add(namespace);
          else this.writes.deleteInternal(r.type.key, namespace, nameOf(obj), 'Background', uidOf(obj));
        }
      }
    };
    pass()
      .catch((err: unknown) => {
        console.error(`rxkube apiserver: namespace controller failed to admit the deletion of the content of ${namespace}`, err);
        failures.push(String((err as Error)?.message ?? err));
      })
      .finally(() => {
        this.admitting.delete(namespace);
        if (this.closed) return;
        this.report(namespace, failures);
        if (failures.length) this.queue.retryLater(namespace);
        else this.queue.forget(namespace);
        if (this.again.delete(namespace) || !failures.length) this.queue.add(namespace);
      });
  }

  /** The pass's outcome in the namespace's status conditions. */
  private report(namespace: string, failures: string[]): void {
    const outcome: DeletionOutcome = { failures, remaining: new Map(), finalizers: new Map() };
    for (const type of this.registry.all()) {
      if (!type.namespaced) continue;
      const left = this.store.list(type.key, namespace);
      if (left.length) outcome.remaining.set(`${type.plural}.${type.group}`, left.length);
      for (const obj of left) for (const f of finalizersOf(obj)) outcome.finalizers.set(f, (outcome.finalizers.get(f) ?? 0) + 1);
    }
    this.writes.mutate(
      NAMESPACES_KEY,
      '',
      namespace,
      (obj) => {
        const status = isJsonObject(obj.status) ? obj.status : (obj.status = {});
        const conditions = deletionConditions(status.conditions, outcome, timestamp());
        if (!conditions) return false;
        status.conditions = conditions;
        return true;
      },
      { subresource: 'status', manager: 'kube-controller-manager' },
    );
  }

  close(): void {
    this.closed = true;
    this.unsubscribe();
    this.queue.close();
  }
}
