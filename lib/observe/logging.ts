import { pino, type DestinationStream, type Level, type Logger, type LoggerOptions } from 'pino';
import { isRecord, LeaseLostError } from '../core/index.js';
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

/** A pino logger; errors under `err` are serialized with pino's standard serializer. */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const level = options.level ?? process.env['LOG_LEVEL'] ?? 'info';
  const config: LoggerOptions = {
    level,
    ...(options.name !== undefined ? { name: options.name } : {}),
    ...options.pino,
  };
  return options.destination ? pino(config, options.destination) : pino(config);
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

