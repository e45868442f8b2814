/**
 * Server-side printing: the meta.k8s.io/v1 Table that `kubectl get` asks for (Accept with
 * `as=Table`, negotiated in media-target.ts), with columns from the built-in definitions or a CRD's additionalPrinterColumns.
 */
import type { JsonObject, JsonValue } from '../base/json.js';
import { isJsonObject } from '../base/json.js';
import { AGE_COLUMN } from '../api/columns.js';
import { age, readMeta } from '../base/meta.js';
import type { PrinterColumn, ResourceType, VersionInfo } from '../api/registry.js';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** Name, then the type's columns; a CRD without printer columns gets Age, as the real server gives it. */
function columnsOf(type: ResourceType, version: VersionInfo): PrinterColumn[] {
  const name: PrinterColumn = { name: 'Name', type: 'string', format: 'name', cell: (o) => String(readMeta(o).name ?? '') };
  const declared = version.printerColumns;
  if (type.custom && declared.length === 0) return [name, AGE_COLUMN];
  // A type that places its Name column itself (Events: last, in the wide output only).
  return declared.some((c) => c.name === 'Name') ? declared : [name, ...declared];
}

export function columnDefinitions(type: ResourceType, version: VersionInfo): JsonObject[] {
  return columnsOf(type, version).map((c) => {
    const def: JsonObject = {
      name: c.name,
      type: c.type,
      format: c.format ?? '',
      description: c.description ?? c.name,
      priority: c.priority ?? 0,
    };
    return def;
  });
}

/** A CRD printer-column JSONPath: `.a.b`, `.a[0].b`, `.a[?(@.type=="Ready")].status`. */
export function evalJsonPath(obj: JsonValue, path: string): JsonValue | undefined {
  const tokens =
    path
      .replace(/^\{|\}$/g, '')
      .replace(/^\./, '')
      .match(/\[\?\(@\.[^)]*\)\]|\[\d+\]|[^.[\]]+/g) ?? [];
  let cur: JsonValue | undefined = obj;
  for (const t of tokens) {
    if (cur === undefined || cur === null) return undefined;
    const filter = /^\[\?\(@\.([\w.-]+)\s*==\s*["']([^"']*)["']\)\]$/.exec(t);
    if (filter) {
      if (!Array.isArray(cur)) return undefined;
      const [, key = '', want] = filter;
      cur = cur.find((x) => isJsonObject(x) && String(evalJsonPath(x, `.${key}`) ?? '') === want);
      continue;
    }
    const index = /^\[(\d+)\]$/.exec(t);
    if (index) {
      cur = Array.isArray(cur) ? cur[Number(index[1])] : undefined;
      continue;
    }
    cur = isJsonObject(cur) ? cur[t] : undefined;
  }
  return cur;
}

function cellOf(c: PrinterColumn, obj: JsonObject): JsonValue {
  if (c.cell) return c.cell(obj);
  const v = c.jsonPath ? evalJsonPath(obj, c.jsonPath) : undefined;
  if (v === undefined) return null;
  // The server turns date columns into ages (ConvertToHumanReadableDateType).
  if (c.type === 'date' && typeof v === 'string' && !Number.isNaN(Date.parse(v))) return age(v);
  return typeof v === 'object' && v !== null ? JSON.stringify(v) : v;
}

function rowObject(obj: JsonObject, include: IncludeObject): JsonObject | undefined {
  if (include === 'None') return undefined;
  if (include === 'Object') return obj;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: readMeta(obj) };
}

export function toTable(
  type: ResourceType,
  version: VersionInfo,
  items: JsonObject[],
  listMeta: JsonObject,
  include: IncludeObject,
  withColumns = true,
): JsonObject {
  const columns = columnsOf(type, version);
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: withColumns ? columnDefinitions(type, version) : [],
    rows: items.map((obj) => {
      const row: JsonObject = { cells: columns.map((c) => cellOf(c, obj)) };
      const o = rowObject(obj, include);
      if (o) row.object = o;
      return row;
    }),
  };
}

export function parseIncludeObject(v: string | null): IncludeObject {
  return v === 'None' || v === 'Object' ? v : 'Metadata';
}
