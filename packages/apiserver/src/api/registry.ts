/**
 * The resource registry: what the server serves (built-ins plus the types CRDs declare), looked
 * up by group/version/plural for requests and by group/kind for owner references.
 */
import type { StatusCause } from '../base/errors.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import type { NameRule } from './validation.js';

/** A column of `kubectl get` output (server-side printing, the Table format). */
export interface PrinterColumn {
  name: string;
  type: string;
  /** For CRDs: the JSON path of the value. Built-ins compute cells with `cell`. */
  jsonPath?: string;
  cell?: (obj: JsonObject) => string | number;
  description?: string;
  priority?: number;
  format?: string;
}

export interface VersionInfo {
  name: string;
  served: boolean;
  storage: boolean;
  statusSubresource: boolean;
  printerColumns: PrinterColumn[];
  /** Extra field-selector paths (`spec.color`), besides metadata.name and metadata.namespace. */
  selectableFields: string[];
  /** A CRD version's openAPIV3Schema, published in /openapi/v3. */
  schema?: JsonValue;
  /** The scale subresource (autoscaling/v1 Scale): where replicas and the selector live. */
  scale?: ScaleInfo;
}

export interface ScaleInfo {
  specReplicasPath: readonly string[];
  statusReplicasPath: readonly string[];
  /** Path of the label selector: an object (Deployment spec.selector) or a string (CRD status field). */
  labelSelectorPath?: readonly string[];
}

export interface StrategyContext {
  now: string;
  allocateClusterIP(): string;
}

/** Per-type behaviour of writes, after the real server's REST strategies. Hooks mutate `obj`. */
export interface Strategy {
  /** Server-owned resets and initial values on create (status reset, namespace finalizers, ...). */
  prepareForCreate?(obj: JsonObject, ctx: StrategyContext): void;
  /** Server-owned values kept from the stored object on update (immutable fields, ...). */
  prepareForUpdate?(obj: JsonObject, old: JsonObject, ctx: StrategyContext): void;
  /** API defaulting, applied to every object written. */
  defaults?(obj: JsonObject): void;
  validate?(obj: JsonObject, old: JsonObject | undefined): StatusCause[];
  /** Removes the fields the kind does not declare; returns their paths (for fieldValidation). */
  pruneUnknownFields?(obj: JsonObject): string[];
  /** Changes made when deletion first marks the object (namespace phase, CRD cleanup finalizer). */
  prepareForDelete?(obj: JsonObject, ctx: StrategyContext): void;
  /** Whether something besides metadata.finalizers holds a deleted object (namespace spec.finalizers). */
  blocksDeletion?(obj: JsonObject): boolean;
  /** Seconds a deletion waits (a bound Pod's grace period), given the one requested; 0 or none deletes at once. */
  gracePeriod?(obj: JsonObject, requested: number | undefined): number;
}

export interface ResourceType {
  /** `group/plural`: the storage key, shared by all versions of the type. */
  readonly key: string;
  readonly group: string;
  readonly plural: string;
  readonly singular: string;
  readonly kind: string;
  readonly listKind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly versions: readonly VersionInfo[];
  readonly storageVersion: string;
  /** A custom resource (CRD-defined): strict updates, 415 for strategic merge, generation on any non-metadata change. */
  readonly custom: boolean;
  readonly tracksGeneration: boolean;
  readonly nameRule: NameRule;
  readonly allowCreateOnUpdate: boolean;
  readonly allowUnconditionalUpdate: boolean;
  /** Paths a write to /status keeps from the stored object (built-ins; CRs keep everything but status). */
  readonly statusKeeps: readonly (readonly string[])[];
  readonly strategy: Strategy;
  /** Whether DELETE answers the deleted object (otherwise a Status Success). */
  readonly returnDeletedObject: boolean;
  readonly extraSubresources?: readonly string[];
  /** The verbs discovery lists (default: all of them); the review kinds are only created. */
  readonly verbs?: readonly string[];
  /**
   * Another group stores these objects (under `key`) in the form of this apiVersion: events.k8s.io
   * Events are a view of core Events. Reads and writes convert (present.ts).
   */
  readonly storedAs?: string;
}

export interface Resolved {
  type: ResourceType;
  version: VersionInfo;
  apiVersion: string;
}

export function apiVersionOf(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

/** Kubernetes version priority: GA before beta before alpha, higher numbers first, others last by name. */
export function compareKubeVersions(a: string, b: string): number {
  const ma = KUBE_VERSION.exec(a);
  const mb = KUBE_VERSION.exec(b);
  if (!ma || !mb) return ma ? -1 : mb ? 1 : a.localeCompare(b);
  const stability = (m: RegExpExecArray): number => (m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0);
  if (stability(ma) !== stability(mb)) return stability(mb) - stability(ma);
  if (Number(ma[1]) !== Number(mb[1])) return Number(mb[1]) - Number(ma[1]);
  return Number(mb[3] ?? 0) - Number(ma[3] ?? 0);
}

export class Registry {
  /** By `group/plural`: what a request names. Two types may share a storage key (a view, `storedAs`). */
  private readonly types = new Map<string, ResourceType>();
  /** Bumped on every change, so discovery and OpenAPI documents can be cached by it. */
  revision = 0;

  add(type: ResourceType): void {
    this.types.set(`${type.group}/${type.plural}`, type);
    this.revision++;
  }

  remove(key: string): void {
    if (this.types.delete(key)) this.revision++;
  }

  get(key: string): ResourceType | undefined {
    return this.types.get(key);
  }

  all(): ResourceType[] {
    return [...this.types.values()];
  }

  resolve(group: string, version: string, plural: string): Resolved | undefined {
    const type = this.types.get(`${group}/${plural}`);
    const v = type?.versions.find((x) => x.name === version && x.served);
    return type && v ? { type, version: v, apiVersion: apiVersionOf(group, version) } : undefined;
  }

  /** The type of an owner reference or a body's apiVersion/kind. */
  byKind(apiVersion: string, kind: string): Resolved | undefined {
    const { group, version } = splitApiVersion(apiVersion);
    for (const type of this.types.values()) {
      if (type.group !== group || type.kind !== kind) continue;
      const v = type.versions.find((x) => x.name === version && x.served);
      if (v) return { type, version: v, apiVersion };
    }
    return undefined;
  }

  /** Served group/versions in discovery order: core first, then groups by name; versions by priority. */
  groupVersions(): { group: string; versions: string[] }[] {
    const groups = new Map<string, Set<string>>();
    for (const t of this.types.values()) {
      const set = groups.get(t.group) ?? new Set<string>();
      for (const v of t.versions) if (v.served) set.add(v.name);
      groups.set(t.group, set);
    }
    const builtinOrder = [
      '',
      'apps',
      'networking.k8s.io',
      'coordination.k8s.io',
      'events.k8s.io',
      'authentication.k8s.io',
      'authorization.k8s.io',
      'rbac.authorization.k8s.io',
      'apiextensions.k8s.io',
    ];
    const rank = (g: string): number => {
      const i = builtinOrder.indexOf(g);
      return i < 0 ? builtinOrder.length : i;
    };
    return [...groups.entries()]
      .filter(([, vs]) => vs.size > 0)
      .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))
      .map(([group, vs]) => ({ group, versions: [...vs].sort(compareKubeVersions) }));
  }

  typesIn(group: string, version: string): { type: ResourceType; version: VersionInfo }[] {
    const out: { type: ResourceType; version: VersionInfo }[] = [];
    for (const type of this.types.values()) {
      if (type.group !== group) continue;
      const v = type.versions.find((x) => x.name === version && x.served);
      if (v) out.push({ type, version: v });
    }
    return out;
  }
}
