/**
 * How a built-in kind is declared (BuiltinSpec) and becomes a ResourceType, with the column
 * helpers the kinds' printers share.
 */
import type { JsonObject, JsonValue } from '../../base/json.js';
import { isJsonObject } from '../../base/json.js';
import type { PrinterColumn, ResourceType, ScaleInfo, Strategy, VersionInfo } from '../registry.js';
import { AGE_COLUMN } from '../columns.js';
import type { NameRule } from '../validation.js';

export const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export interface BuiltinSpec {
  /** The verbs it serves, when not all of them (discovery lists these; others are 405). */
  verbs?: readonly string[];
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  status?: boolean;
  generation?: boolean;
  nameRule?: NameRule;
  createOnUpdate?: boolean;
  statusKeeps?: string[][];
  strategy?: Strategy;
  columns?: PrinterColumn[];
  returnDeletedObject?: boolean;
  extraSubresources?: string[];
  /** Whether `kubectl get` shows an Age column last (all but a few types). */
  age?: boolean;
  scale?: ScaleInfo;
  /** A view of another group's objects: stored under its key, in the form of this apiVersion. */
  storedAs?: { key: string; apiVersion: string };
}

/** Age closes the default columns; the wide ones (priority > 0) follow it, as the real printers order them. */
function withAge(columns: PrinterColumn[], age: boolean): PrinterColumn[] {
  return age ? [...columns.filter((c) => !c.priority), AGE_COLUMN, ...columns.filter((c) => c.priority)] : columns;
}

/** A built-in type from its spec (also used by auth/ for the RBAC and review types). */
export function builtin(s: BuiltinSpec): ResourceType {
  const version: VersionInfo = {
    name: s.version,
    served: true,
    storage: true,
    statusSubresource: s.status ?? false,
    printerColumns: withAge(s.columns ?? [], s.age !== false),
    // Built-in field selectors are listed per kind in selectors.ts.
    selectableFields: [],
    scale: s.scale,
  };
  return {
    key: s.storedAs?.key ?? `${s.group}/${s.plural}`,
    group: s.group,
    plural: s.plural,
    singular: s.kind.toLowerCase(),
    kind: s.kind,
    listKind: `${s.kind}List`,
    namespaced: s.namespaced,
    shortNames: s.shortNames ?? [],
    categories: s.categories ?? [],
    versions: [version],
    storageVersion: s.version,
    custom: false,
    tracksGeneration: s.generation ?? false,
    nameRule: s.nameRule ?? 'subdomain',
    allowCreateOnUpdate: s.createOnUpdate ?? false,
    allowUnconditionalUpdate: true,
    statusKeeps: s.statusKeeps ?? [['spec']],
    strategy: s.strategy ?? {},
    returnDeletedObject: s.returnDeletedObject ?? false,
    extraSubresources: s.extraSubresources,
    ...(s.verbs ? { verbs: s.verbs } : {}),
    ...(s.storedAs ? { storedAs: s.storedAs.apiVersion } : {}),
  };
}

export const str = (v: JsonValue | undefined): string =>
  v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v);
export const count = (v: JsonValue | undefined): number => (isJsonObject(v) ? Object.keys(v).length : 0);
export const num = (v: JsonValue | undefined): number => (typeof v === 'number' ? v : 0);

export const column = (name: string, type: string, cell: (o: JsonObject) => string | number, priority = 0): PrinterColumn => ({
  name,
  type,
  cell,
  priority,
});
