/**
 * The subresources beside the main resource's verbs: a workload's Scale (autoscaling/v1) read and
 * changed through it, and a Pod's binding to a Node (pods/binding). The status subresource is the
 * write path's status split (update.ts).
 */
import { badRequest, conflict, fieldInvalid, invalid, MODIFIED_CONFLICT, notFound, uidPreconditionFailed } from '../base/errors.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { deepClone, isJsonObject } from '../base/json.js';
import { getPath, nameOf, readMeta, resourceVersionOf, setPath, timestamp, uidOf } from '../base/meta.js';
import { formatLabelSelector, labelSelectorFromObject } from '../grammar/label-selector.js';
import { bindingTarget, boundPod } from './binding.js';
import type { Resolved } from './registry.js';
import { bodyUid, groupResource, storageKey, withName, type WriteOptions, type WritePath, type WriteResult } from './write-path.js';

const PODS_KEY = '/pods';

export class Subresources {
  constructor(private readonly writes: WritePath) {}

  getScale(r: Resolved, namespace: string, name: string): JsonObject {
    const obj = this.writes.store.get(r.type.key, r.type.namespaced ? namespace : '', name);
    if (!obj) throw notFound(groupResource(r.type), name);
    return this.scaleOf(r, obj);
  }

  /** Changes the replicas of an object through its Scale (`change` turns the current Scale into the wanted one). */
  updateScale(
    r: Resolved,
    namespace: string,
    name: string,
    change: (scale: JsonObject) => JsonValue,
    opts: WriteOptions & { userAgent?: string },
  ): WriteResult {
    const info = r.version.scale;
    const ns = r.type.namespaced ? namespace : '';
    const old = this.writes.store.get(r.type.key, ns, name);
    if (!info) throw notFound(groupResource(r.type), name);
    if (!old) throw notFound(groupResource(r.type), name);
    const wanted = withName(name, () => change(this.scaleOf(r, old)));
    if (!isJsonObject(wanted)) throw badRequest('the body of a scale request must be a Scale object');
    const replicas = isJsonObject(wanted.spec) ? wanted.spec.replicas : undefined;
    if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
      throw invalid('autoscaling', 'Scale', name, [fieldInvalid('spec.replicas', replicas ?? null, 'must be greater than or equal to 0')]);
    }
    const wantedMeta = isJsonObject(wanted.metadata) ? wanted.metadata : {};
    const uid = bodyUid(wantedMeta);
    if (uid !== undefined && uid !== uidOf(old))
      throw uidPreconditionFailed(groupResource(r.type), name, storageKey(r.type, ns, name), uid, uidOf(old));
    const rv = wantedMeta.resourceVersion;
    if (typeof rv === 'string' && rv !== '' && rv !== resourceVersionOf(old))
      throw conflict(groupResource(r.type), name, MODIFIED_CONFLICT);
    const obj = deepClone(old);
    setPath(obj, info.specReplicasPath, replicas);
    const result = this.writes.commitUpdate(r, old, obj, {
      manager: this.writes.managerOf(opts),
      dryRun: opts.dryRun ?? false,
      subresource: 'scale',
    });
    return { status: 200, body: this.scaleOf(r, result) };
  }

  private scaleOf(r: Resolved, obj: JsonObject): JsonObject {
    const info = r.version.scale;
    if (!info) throw notFound(groupResource(r.type), nameOf(obj));
    const meta = readMeta(obj);
    const metadata: JsonObject = {};
    for (const key of ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp'])
      if (meta[key] !== undefined) metadata[key] = meta[key];
    const spec = getPath(obj, info.specReplicasPath);
    const current = getPath(obj, info.statusReplicasPath);
    const status: JsonObject = { replicas: typeof current === 'number' ? current : 0 };
    const sel = info.labelSelectorPath ? getPath(obj, info.labelSelectorPath) : undefined;
    if (typeof sel === 'string') status.selector = sel;
    else if (isJsonObject(sel)) {
      try {
        status.selector = formatLabelSelector(labelSelectorFromObject(sel));
      } catch {
        // an invalid selector is shown as none
      }
    }
    return { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata, spec: { replicas: typeof spec === 'number' ? spec : 0 }, status };
  }

  /** Assigns a Pod to a Node as a v1 Binding asks (binding.ts); `now` stamps PodScheduled (default: this server's time). */
  bind(namespace: string, name: string, binding: JsonValue, opts: WriteOptions & { userAgent?: string; now?: string }): JsonObject {
    const node = bindingTarget(binding, namespace, name);
    const r = this.writes.resolveKey(PODS_KEY);
    const old = this.writes.store.get(PODS_KEY, namespace, name);
    if (!r || !old) throw notFound({ group: '', plural: 'pods' }, name);
    const pod = boundPod(old, node, binding, opts.now ?? timestamp(this.writes.now()));
    return this.writes.commitUpdate(r, old, pod, {
      manager: this.writes.managerOf(opts),
      dryRun: opts.dryRun ?? false,
      subresource: 'binding',
    });
  }
}
