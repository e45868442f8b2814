/**
 * PersistentVolumeClaims bound to PersistentVolumes, as the persistentvolume-controller and a
 * dynamic provisioner do it (no storage is made): a `standard` StorageClass marked default; a
 * claim without a class gets the default one (retroactive default class assignment); a claim binds
 * to an Available volume that fits it (class, access modes, volume mode, capacity; the smallest
 * first) or to the volume it names, else a volume `pvc-<claim uid>` is provisioned for it with the
 * class's reclaim policy. Volume and claim then are `Bound` (`claimRef`, `volumeName`,
 * `status.capacity`). A claim deleted releases its volume, which goes with reclaim policy Delete.
 * `volumeBindingMode: WaitForFirstConsumer` binds at once, like Immediate.
 */
import type { InternalWrites } from '../api/internal-writes.js';
import { DEFAULT_STORAGE_CLASS } from '../api/builtins/index.js';
import { parseQuantity } from '../grammar/cel.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { isJsonObject } from '../base/json.js';
import { getPath, isBeingDeleted, nameOf, namespaceOf, readMeta, resourceVersionOf, uidOf } from '../base/meta.js';
import type { Store, StoreEvent } from '../storage/store.js';
import { WorkQueue } from '../base/work-queue.js';
import type { ServerEventRecorder } from './recorder.js';

export const PVCS_KEY = '/persistentvolumeclaims';
export const PVS_KEY = '/persistentvolumes';
export const STORAGE_CLASSES_KEY = 'storage.k8s.io/storageclasses';
export const DEFAULT_CLASS_NAME = 'standard';
export const SIMULATED_PROVISIONER = 'rxkube.dev/simulated';
const NO_PROVISIONER = 'kubernetes.io/no-provisioner';
const COMPONENT = 'persistentvolume-controller';
const BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';

function defaultClass(): JsonObject {
  return {
    metadata: { name: DEFAULT_CLASS_NAME, annotations: { [DEFAULT_STORAGE_CLASS]: 'true' } },
    provisioner: SIMULATED_PROVISIONER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
  };
}

const strings = (v: JsonValue | undefined): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** A storage quantity in nano-units (0 when missing or malformed). */
function storageOf(obj: JsonObject, path: string[]): bigint {
  const v = getPath(obj, path);
  return (v === undefined || v === null ? undefined : parseQuantity(String(v))) ?? 0n;
}

/** The class a volume or claim names ('' for none, as the controller compares them). */
function classOf(obj: JsonObject): string {
  const c = getPath(obj, ['spec', 'storageClassName']);
  return typeof c === 'string' ? c : '';
}

function claimRefOf(pv: JsonObject): JsonObject | undefined {
  const ref = getPath(pv, ['spec', 'claimRef']);
  return isJsonObject(ref) ? ref : undefined;
}

/** Whether the volume is (pre-)bound to this claim: namespace and name, and the uid if it has one. */
function refersTo(pv: JsonObject, pvc: JsonObject): boolean {
  const ref = claimRefOf(pv);
  return ref !== undefined && ref.namespace === namespaceOf(pvc) && ref.name === nameOf(pvc) && (!ref.uid || ref.uid === uidOf(pvc));
}

/** Whether an unclaimed volume fits the claim (findMatchingVolume's checks, without selectors and node affinity). */
function fits(pv: JsonObject, pvc: JsonObject): boolean {
  const modes = strings(getPath(pv, ['spec', 'accessModes']));
  return (
    claimRefOf(pv) === undefined &&
    !isBeingDeleted(pv) &&
    classOf(pv) === classOf(pvc) &&
    (getPath(pv, ['spec', 'volumeMode']) ?? 'Filesystem') === (getPath(pvc, ['spec', 'volumeMode']) ?? 'Filesystem') &&
    strings(getPath(pvc, ['spec', 'accessModes'])).every((m) => modes.includes(m)) &&
    storageOf(pv, ['spec', 'capacity', 'storage']) >= storageOf(pvc, ['spec', 'resources', 'requests', 'storage'])
  );
}

export class VolumeController {
  private readonly queue: WorkQueue;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly writes: InternalWrites,
    private readonly store: Store,
    private readonly recorder: ServerEventRecorder,
  ) {
    this.queue = new WorkQueue('persistentvolume controller', (key) => this.sync(key));
    this.unsubscribe = store.onEvent((e) => this.onEvent(e));
  }

  /** Creates the default class (unless one of its name exists: a class changed later is left as it is) and picks up stored objects. */
  resumeAll(): void {
    if (!this.store.get(STORAGE_CLASSES_KEY, '', DEFAULT_CLASS_NAME)) this.writes.createInternal(STORAGE_CLASSES_KEY, defaultClass());
    for (const pv of this.store.list(PVS_KEY)) this.queue.add(`volume/${nameOf(pv)}`);
    this.queuePendingClaims();
  }

  private queuePendingClaims(): void {
    for (const pvc of this.store.list(PVCS_KEY))
      if (!getPath(pvc, ['spec', 'volumeName']) || getPath(pvc, ['status', 'phase']) !== 'Bound')
        this.queue.add(`claim/${namespaceOf(pvc)}/${nameOf(pvc)}`);
  }

  private onEvent(e: StoreEvent): void {
    if (e.resource === PVCS_KEY) {
      if (e.type !== 'DELETED') this.queue.add(`claim/${namespaceOf(e.object)}/${nameOf(e.object)}`);
      else for (const pv of this.store.list(PVS_KEY)) if (claimRefOf(pv)?.uid === uidOf(e.object)) this.queue.add(`volume/${nameOf(pv)}`);
    } else if (e.resource === PVS_KEY && e.type !== 'DELETED') {
      this.queue.add(`volume/${nameOf(e.object)}`);
      if (e.type === 'ADDED') {
        // A new volume may be the one a waiting claim fits; one made for a claim (claimRef: every one
        // provisioned here) only that claim, so provisioning n claims is not n passes over them all.
        const ref = claimRefOf(e.object);
        if (ref) this.queue.add(`claim/${String(ref.namespace ?? '')}/${String(ref.name ?? '')}`);
        else this.queuePendingClaims();
      }
    } else if (e.resource === STORAGE_CLASSES_KEY && e.type === 'ADDED') {
      this.queuePendingClaims();
    }
  }

  private sync(key: string): void {
    const [kind, a = '', b = ''] = key.split('/');
    if (kind === 'claim') this.syncClaim(a, b);
    else this.syncVolume(a);
  }

  private syncClaim(ns: string, name: string): void {
    let pvc = this.store.get(PVCS_KEY, ns, name);
    if (!pvc || isBeingDeleted(pvc)) return;
    const volumeName = getPath(pvc, ['spec', 'volumeName']);
    if (typeof volumeName === 'string' && volumeName !== '') {
      const pv = this.store.get(PVS_KEY, '', volumeName);
      if (pv && (claimRefOf(pv) === undefined || refersTo(pv, pvc))) this.bind(pv, pvc);
      return;
    }
    const fallback = (getPath(pvc, ['spec', 'storageClassName']) ?? undefined) === undefined ? this.defaultClassName() : undefined;
    if (fallback) {
      // Binding goes on in the same pass, as if admission had set the class at creation.
      pvc = this.writes.mutate(PVCS_KEY, ns, name, (c) => void ((c.spec as JsonObject).storageClassName = fallback), {
        manager: COMPONENT,
      });
      if (!pvc) return;
    }
    const className = classOf(pvc);
    const volumes = this.store.list(PVS_KEY);
    const match =
      volumes.find((pv) => refersTo(pv, pvc) && !isBeingDeleted(pv)) ?? volumes.filter((pv) => fits(pv, pvc)).sort(smallestFirst)[0];
    if (match) {
      this.bind(match, pvc);
      return;
    }
    if (className === '') return;
    const storageClass = this.store.get(STORAGE_CLASSES_KEY, '', className);
    if (!storageClass) {
      this.recorder.record(pvc, 'Warning', 'ProvisioningFailed', `storageclass.storage.k8s.io "${className}" not found`, COMPONENT);
      return;
    }
    if (storageClass.provisioner === NO_PROVISIONER) return;
    const pv = this.provision(pvc, storageClass);
    if (pv) this.bind(pv, pvc);
  }

  /** The newest class marked default, as the admission plugin and the controller pick it. */
  private defaultClassName(): string | undefined {
    const defaults = this.store
      .list(STORAGE_CLASSES_KEY)
      .filter((c) => getPath(c, ['metadata', 'annotations', DEFAULT_STORAGE_CLASS]) === 'true')
      .sort((x, y) => String(readMeta(y).creationTimestamp).localeCompare(String(readMeta(x).creationTimestamp)));
    return defaults[0] ? nameOf(defaults[0]) : undefined;
  }

  private provision(pvc: JsonObject, storageClass: JsonObject): JsonObject | undefined {
    const name = `pvc-${uidOf(pvc)}`;
    const existing = this.store.get(PVS_KEY, '', name);
    if (existing) return existing;
    const provisioner = String(storageClass.provisioner);
    const pv = this.writes.createInternal(
      PVS_KEY,
      {
        metadata: { name, annotations: { 'pv.kubernetes.io/provisioned-by': provisioner } },
        spec: {
          capacity: { storage: getPath(pvc, ['spec', 'resources', 'requests', 'storage']) ?? '0' },
          accessModes: getPath(pvc, ['spec', 'accessModes']) ?? [],
          persistentVolumeReclaimPolicy: storageClass.reclaimPolicy ?? 'Delete',
          storageClassName: nameOf(storageClass),
          volumeMode: getPath(pvc, ['spec', 'volumeMode']) ?? 'Filesystem',
          hostPath: { path: `/var/lib/rxkube/volumes/${name}`, type: 'DirectoryOrCreate' },
          claimRef: this.claimRef(pvc),
        },
      },
      provisioner,
    );
    if (pv) this.recorder.record(pvc, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${name}`, provisioner);
    return pv;
  }

  private claimRef(pvc: JsonObject): JsonObject {
    return {
      kind: 'PersistentVolumeClaim',
      namespace: namespaceOf(pvc),
      name: nameOf(pvc),
      uid: uidOf(pvc),
      apiVersion: 'v1',
      resourceVersion: resourceVersionOf(pvc),
    };
  }

  /** Binds both ways (volume first, as bindVolumeToClaim then bindClaimToVolume), then both statuses. */
  private bind(pv: JsonObject, pvc: JsonObject): void {
    const ns = namespaceOf(pvc);
    const claimName = nameOf(pvc);
    const volumeName = nameOf(pv);
    this.writes.mutate(
      PVS_KEY,
      '',
      volumeName,
      (v) => {
        if (refersTo(v, pvc) && claimRefOf(v)?.uid) return false;
        (v.spec as JsonObject).claimRef = this.claimRef(pvc);
        const meta = v.metadata as JsonObject;
        meta.annotations = { ...(isJsonObject(meta.annotations) ? meta.annotations : {}), [BOUND_BY_CONTROLLER]: 'yes' };
      },
      { manager: COMPONENT },
    );
    const boundPv = this.writes.mutate(
      PVS_KEY,
      '',
      volumeName,
      (v) => void (v.status = { ...(isJsonObject(v.status) ? v.status : {}), phase: 'Bound' }),
      { subresource: 'status', manager: COMPONENT },
    );
    if (!boundPv) return;
    this.writes.mutate(
      PVCS_KEY,
      ns,
      claimName,
      (c) => {
        const spec = c.spec as JsonObject;
        const meta = c.metadata as JsonObject;
        const annotations: JsonObject = {
          ...(isJsonObject(meta.annotations) ? meta.annotations : {}),
          'pv.kubernetes.io/bind-completed': 'yes',
        };
        if (spec.volumeName !== volumeName) annotations[BOUND_BY_CONTROLLER] = 'yes';
        const provisioner = getPath(boundPv, ['metadata', 'annotations', 'pv.kubernetes.io/provisioned-by']);
        if (typeof provisioner === 'string' && volumeName === `pvc-${uidOf(c)}`) {
          annotations['volume.beta.kubernetes.io/storage-provisioner'] = provisioner;
          annotations['volume.kubernetes.io/storage-provisioner'] = provisioner;
        }
        spec.volumeName = volumeName;
        meta.annotations = annotations;
      },
      { manager: COMPONENT },
    );
    this.writes.mutate(
      PVCS_KEY,
      ns,
      claimName,
      (c) => {
        c.status = {
          ...(isJsonObject(c.status) ? c.status : {}),
          phase: 'Bound',
          accessModes: getPath(boundPv, ['spec', 'accessModes']) ?? [],
          capacity: getPath(boundPv, ['spec', 'capacity']) ?? {},
        };
      },
      { subresource: 'status', manager: COMPONENT },
    );
  }

  /** A volume without a claim is Available; one whose claim is gone is Released, and deleted if its policy says so. */
  private syncVolume(name: string): void {
    const pv = this.store.get(PVS_KEY, '', name);
    if (!pv || isBeingDeleted(pv)) return;
    const ref = claimRefOf(pv);
    const phase = String(getPath(pv, ['status', 'phase']) ?? 'Pending');
    let want = phase;
    if (!ref) want = 'Available';
    else {
      const claim = this.store.get(PVCS_KEY, String(ref.namespace ?? ''), String(ref.name ?? ''));
      const claimGone = ref.uid ? !claim || uidOf(claim) !== ref.uid : false;
      if (claimGone && phase === 'Bound') {
        if (getPath(pv, ['spec', 'persistentVolumeReclaimPolicy']) === 'Delete') {
          this.writes.deleteInternal(PVS_KEY, '', name);
          return;
        }
        want = 'Released';
      } else if (!ref.uid && phase !== 'Bound') want = 'Available';
    }
    if (want !== phase)
      this.writes.mutate(PVS_KEY, '', name, (v) => void (v.status = { ...(isJsonObject(v.status) ? v.status : {}), phase: want }), {
        subresource: 'status',
        manager: COMPONENT,
      });
  }

  close(): void {
    this.unsubscribe();
    this.queue.close();
  }
}

/** The smallest volume first, as the real binder picks the smallest that fits; equal sizes by name, so the pick is the same every time. */
function smallestFirst(x: JsonObject, y: JsonObject): number {
  const a = storageOf(x, ['spec', 'capacity', 'storage']);
  const b = storageOf(y, ['spec', 'capacity', 'storage']);
  return a < b ? -1 : a > b ? 1 : nameOf(x).localeCompare(nameOf(y));
}
