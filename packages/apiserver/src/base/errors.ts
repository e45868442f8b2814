/**
 * Kubernetes `Status` errors. Every failure the server answers is an ApiError, rendered as the
 * Status-shaped JSON body real clients parse (client-node's ApiException, kubectl's messages).
 */
import type { JsonObject } from './json.js';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toStatus(): JsonObject {
    const status: JsonObject = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      details: detailsJson(this.details),
      code: this.code,
    };
    return status;
  }
}

function detailsJson(d: StatusDetails | undefined): JsonObject {
  const out: JsonObject = {};
  if (!d) return out;
  if (d.name !== undefined) out.name = d.name;
  if (d.group) out.group = d.group;
  if (d.kind !== undefined) out.kind = d.kind;
  if (d.uid !== undefined) out.uid = d.uid;
  if (d.causes?.length) out.causes = d.causes.map((c) => ({ ...c }));
  if (d.retryAfterSeconds !== undefined) out.retryAfterSeconds = d.retryAfterSeconds;
  return out;
}

/** What an error message names: the resource (plural) and its group, like `deployments.apps`. */
export interface GroupResource {
  group: string;
  plural: string;
}

export function qualified(gr: GroupResource): string {
  return gr.group ? `${gr.plural}.${gr.group}` : gr.plural;
}

export function notFound(gr: GroupResource, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualified(gr)} "${name}" not found`, {
    name,
    group: gr.group,
    kind: gr.plural,
  });
}

export function pathNotFound(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
}

export function alreadyExists(gr: GroupResource, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualified(gr)} "${name}" already exists`, {
    name,
    group: gr.group,
    kind: gr.plural,
  });
}

export function conflict(gr: GroupResource, name: string, why: string, causes?: StatusCause[]): ApiError {
  return new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${why}`, {
    name,
    group: gr.group,
    kind: gr.plural,
    causes,
  });
}

export const MODIFIED_CONFLICT = 'the object has been modified; please apply your changes to the latest version and try again';

/** 422 Invalid. `kind` is the object's Kind, as the real server reports it. */
/**
 * A write whose body names another object's uid (the real server turns the body's uid into a
 * storage precondition, so the message is etcd's storage error wrapped in a Conflict). `have` is
 * empty when no object exists under the name.
 */
export function uidPreconditionFailed(gr: GroupResource, name: string, storageKey: string, want: string, have: string): ApiError {
  return conflict(
    gr,
    name,
    `StorageError: invalid object, Code: 4, Key: ${storageKey}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${want}, UID in object meta: ${have}`,
  );
}

/** DeleteOptions.preconditions that do not hold; named by kind, as the real server's BeforeDelete names them. */
export function deletePreconditionFailed(
  group: string,
  kind: string,
  name: string,
  field: 'UID' | 'ResourceVersion',
  want: string,
  have: string,
): ApiError {
  const why = field === 'UID' ? 'The object might have been deleted and then recreated' : 'The object might have been modified';
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${group ? `${kind}.${group}` : kind} "${name}": the ${field} in the precondition (${want}) does not match the ${field} in record (${have}). ${why}`,
    {
      name,
      group,
      kind,
    },
  );
}

export function invalid(group: string, kind: string, name: string, causes: StatusCause[]): ApiError {
  const list = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : String(c.message))).join(', ');
  const shown = causes.length > 1 ? `[${list}]` : list;
  // The real server names the group-qualified kind: Deployment.apps, Widget.example.com.
  const qualified = group ? `${kind}.${group}` : kind;
  return new ApiError(422, 'Invalid', `${qualified}${name ? ` "${name}"` : ''} is invalid: ${shown}`, {
    name,
    group,
    kind,
    causes,
  });
}

export function fieldInvalid(field: string, value: unknown, detail: string): StatusCause {
  return { reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(value)}: ${detail}`, field };
}

/** field.NotSupported: a value outside a fixed set, listing the set. */
export function fieldNotSupported(field: string, value: unknown, supported: readonly string[]): StatusCause {
  return {
    reason: 'FieldValueNotSupported',
    message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${supported.map((v) => JSON.stringify(v)).join(', ')}`,
    field,
  };
}

export function fieldRequired(field: string, detail: string): StatusCause {
  return { reason: 'FieldValueRequired', message: `Required value${detail ? `: ${detail}` : ''}`, field };
}

export function fieldForbidden(field: string, detail: string): StatusCause {
  return { reason: 'FieldValueForbidden', message: `Forbidden: ${detail}`, field };
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message, {});
}

/** 403 as the real server's NewForbidden: the object named when there is a name. */
export function forbidden(gr: GroupResource, name: string, why: string, causes?: StatusCause[]): ApiError {
  return new ApiError(403, 'Forbidden', `${qualified(gr)}${name ? ` ${JSON.stringify(name)}` : ''} is forbidden: ${why}`, {
    name,
    group: gr.group,
    kind: gr.plural,
    causes,
  });
}

export function methodNotAllowed(): ApiError {
  return new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
}

export function unsupportedMediaType(contentType: string, accepted: string[]): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format (${contentType || 'none'}) - accepted media types include: ${accepted.join(', ')}`,
    {},
  );
}

/** apimachinery's NewNotAcceptableError wording, as a Status (kube-openapi itself sends a bare 406). */
export function notAcceptable(accepted: string[]): ApiError {
  return new ApiError(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`, {});
}

export function expired(message: string): ApiError {
  return new ApiError(410, 'Expired', message, {});
}

/**
 * A read from a resourceVersion the server has not reached (after waiting for it), as the real
 * server's watch cache answers it: 504 Timeout, cause ResourceVersionTooLarge, retry after 1 s.
 */
export function resourceVersionTooLarge(requested: number, current: number): ApiError {
  return new ApiError(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
}

/** A resourceVersion that is not a number, in the words of the real server's storage layer. */
export function invalidResourceVersion(text: string, why: 'invalid syntax' | 'value out of range' = 'invalid syntax'): ApiError {
  return badRequest(
    `invalid resource version: resourceVersion: Invalid value: ${JSON.stringify(text)}: strconv.ParseUint: parsing ${JSON.stringify(text)}: ${why}`,
  );
}

export function tooLarge(limit: number): ApiError {
  return new ApiError(
    413,
    'RequestEntityTooLarge',
    `the server has rejected the request because the request body is too large (limit is ${limit} bytes)`,
    {},
    {
      connection: 'close',
    },
  );
}

export function unauthorized(): ApiError {
  return new ApiError(401, 'Unauthorized', 'Unauthorized', {});
}

export function internalError(message: string): ApiError {
  return new ApiError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

/** The reason the real server gives for a status code, for errors built from a code alone (faults). */
export function reasonForCode(code: number): string {
  const reasons: Record<number, string> = {
    400: 'BadRequest',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'NotFound',
    405: 'MethodNotAllowed',
    406: 'NotAcceptable',
    409: 'Conflict',
    410: 'Expired',
    413: 'RequestEntityTooLarge',
    415: 'UnsupportedMediaType',
    422: 'Invalid',
    429: 'TooManyRequests',
    500: 'InternalError',
    503: 'ServiceUnavailable',
    504: 'Timeout',
  };
  return reasons[code] ?? 'Unknown';
}
