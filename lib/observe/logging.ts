/** Structured logging with pino: the logger, the fields that name a resource, and the level each error is logged at. */
import { pino, type DestinationStream, type Level, type Logger, type LoggerOptions } from 'pino';
import { isKubernetesObject, isRecord, LeaseLostError, objectReference } from '../core/index.js';
import { classifyError } from '../kube/index.js';

export type { Logger } from 'pino';

export interface CreateLoggerOptions {
  /** Minimum level (default: LOG_LEVEL from the environment, else 'info'). */
  level?: Level | 'silent';
  /** Bound as `name` on every line. */
  name?: string;
  /** Where lines go (default stdout). Tests pass a stream to capture them. */
  destination?: DestinationStream;
  /** Any other pino option; wins over the ones above. */
  pino?: LoggerOptions;
}

/**
 * A pino logger; errors under `err` are serialized with pino's standard serializer (or their own
 * toJSON, when they have one). Maps and Sets anywhere in a logged object or error (a workflow
 * error's `byDependent`) are written as objects and arrays: JSON.stringify would write `{}` for
 * them. A Kubernetes object anywhere in a line is written as its reference (apiVersion, kind,
 * namespace, name): a Secret's data never reaches a log.
 */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const level = options.level ?? process.env['LOG_LEVEL'] ?? 'info';
  const config: LoggerOptions = {
    level,
    ...(options.name !== undefined ? { name: options.name } : {}),
    // An err already written by formatters.log (it had a Map) is a plain object by now: kept as it is.
    serializers: { err: (err: unknown) => (err instanceof Error ? loggable(err) : err) },
    formatters: { log: (obj) => (needsRewrite(obj, MAX_DEPTH) ? (loggable(obj) as Record<string, unknown>) : obj) },
    ...options.pino,
  };
  return options.destination ? pino(config, options.destination) : pino(config);
}

/** How deep a logged object is searched for Maps, Sets and Kubernetes objects. */
const MAX_DEPTH = 8;

/** Walked into: arrays and objects without a toJSON of their own (a Date, a Buffer write themselves). */
function isWalkable(value: unknown): value is object {
  return typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}

/**
 * Whether a Map, a Set, a Kubernetes object or an error is in `value`: most lines have none and
 * are logged as they are, uncopied.
 */
function needsRewrite(value: unknown, depth: number, seen = new WeakSet<object>()): boolean {
  if (typeof value !== 'object' || value === null || depth < 0 || seen.has(value)) return false;
  if (value instanceof Map || value instanceof Set || value instanceof Error || isKubernetesObject(value)) return true;
  if (!isWalkable(value)) return false;
  seen.add(value);
  return Object.values(value).some((v) => needsRewrite(v, depth - 1, seen));
}

/**
 * `value` as it may be logged: Maps as objects, Sets as arrays, an Error as pino's serializer
 * writes it (or as its own toJSON says), a Kubernetes object as its reference.
 */
function loggable(value: unknown, depth = MAX_DEPTH, seen = new WeakSet<object>()): unknown {
  if (typeof value !== 'object' || value === null || depth < 0) return value;
  if (isKubernetesObject(value)) return objectReference(value);
  if (value instanceof Error && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return { type: value.name, stack: value.stack, ...(value as unknown as { toJSON(): object }).toJSON() };
  }
  if (!(value instanceof Error) && !isWalkable(value)) return value;
  if (seen.has(value)) return '[Circular]';
  seen.add(value);
  const inner = (v: unknown) => loggable(v, depth - 1, seen);
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), inner(v)]));
  if (value instanceof Set || Array.isArray(value)) return [...value].map(inner);
  const object = value instanceof Error ? pino.stdSerializers.err(value) : value;
  return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, inner(v)]));
}

/** The OB1 fields of one resource, taken from the object (missing fields are left out). */
export interface ResourceLogFields {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  resourceVersion?: string;
  generation?: number;
  uid?: string;
}

/** `{ resource: { apiVersion, kind, name, namespace, resourceVersion, generation, uid } }` for a child logger. */
export function resourceBindings(obj: unknown): { resource: ResourceLogFields } {
  const o = isRecord(obj) ? obj : {};
  const m = isRecord(o['metadata']) ? o['metadata'] : {};
  const resource: ResourceLogFields = {};
  const setString = (key: keyof ResourceLogFields, value: unknown) => {
    if (typeof value === 'string' && value !== '') (resource as Record<string, unknown>)[key] = value;
  };
  setString('apiVersion', o['apiVersion']);
  setString('kind', o['kind']);
  setString('name', m['name']);
  setString('namespace', m['namespace']);
  setString('resourceVersion', m['resourceVersion']);
  if (typeof m['generation'] === 'number') resource.generation = m['generation'];
  setString('uid', m['uid']);
  return { resource };
}

/** OB1: the logger for everything logged during one run: the controller name and the resource's fields. */
export function loggerFor(base: Logger, controllerName: string, obj: unknown): Logger {
  return base.child({ controller: controllerName, ...resourceBindings(obj) });
}

/**
 * The level a failed Kubernetes call is logged at. UP2: a conflict (409) is an ordinary,
 * retried outcome of optimistic concurrency: info. Throttling and transient failures: warn.
 */
export function errorLogLevel(err: unknown): 'info' | 'warn' | 'error' {
  // A lease lost is the framework keeping a second owner out, not a failure of the run.
  if (err instanceof LeaseLostError) return 'warn';
  switch (classifyError(err)) {
    case 'conflict':
      return 'info';
    case 'tooManyRequests':
    case 'transient':
      return 'warn';
    default:
      return 'error';
  }
}
