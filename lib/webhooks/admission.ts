/**
 * Validating and mutating admission webhooks (`admission.k8s.io/v1` AdmissionReview): a handler
 * gets the typed request and answers a verdict (or, mutating, the object as it should be stored,
 * from which rxkube computes the JSONPatch). Underneath, a webhook is a pipeable operator from
 * requests to responses, so users who compose (rate limits, metrics, caches) write that instead.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { catchError, defer, from, map, mergeMap, of, type Observable, type OperatorFunction } from 'rxjs';
import { ConfigurationError, describeValue, isRecord, type MaybePromise } from '../core/index.js';
import { resolveDescriptor, type ResolvedDescriptor, type ResourceDescriptor } from '../kube/index.js';
import { jsonPatch, type JsonPatchOp } from './json-patch.js';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** Who asks, as the API server authenticated them. */
export interface AdmissionUserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** One admission request, typed by the object it admits. */
export interface AdmissionRequest<T extends KubernetesObject = KubernetesObject> {
  /** Echoed in the response: the API server matches them by it. */
  readonly uid: string;
  readonly kind: { readonly group: string; readonly version: string; readonly kind: string };
  readonly resource: { readonly group: string; readonly version: string; readonly resource: string };
  readonly subResource?: string;
  readonly name?: string;
  readonly namespace?: string;
  readonly operation: AdmissionOperation;
  readonly userInfo: AdmissionUserInfo;
  /** The object as it would be stored: undefined on DELETE. */
  readonly object: T | undefined;
  /** The stored object: on UPDATE and DELETE. */
  readonly oldObject: T | undefined;
  /** True when nothing will be stored: a webhook with side effects must not make them. */
  readonly dryRun: boolean;
  /** The operation's options (CreateOptions, UpdateOptions, DeleteOptions), as sent. */
  readonly options?: unknown;
}

/** What a validating handler answers (mutating handlers too, when they change nothing). */
export type AdmissionVerdict =
  | { readonly allowed: true; readonly warnings?: readonly string[] }
  | {
      readonly allowed: false;
      /** Shown to the user, e.g. by kubectl: `admission webhook "..." denied the request: <message>`. */
      readonly message: string;
      /** HTTP status code of the denial (default 403). */
      readonly code?: number;
      /** A Kubernetes StatusReason, e.g. 'Invalid' or 'Forbidden'. */
      readonly reason?: string;
      readonly warnings?: readonly string[];
    };

/** A mutating handler's answer that changes the object: rxkube sends the JSONPatch from the request's object to it. */
export interface AdmissionMutation<T> {
  readonly object: T;
  readonly warnings?: readonly string[];
}

/** The answer to one request, as the server sends it back (`AdmissionReview.response`). */
export interface AdmissionResponse {
  readonly uid: string;
  readonly allowed: boolean;
  readonly status?: { readonly code: number; readonly message: string; readonly reason?: string };
  readonly warnings?: readonly string[];
  readonly patchType?: 'JSONPatch';
  /** Base64 of the JSON of the patch operations. */
  readonly patch?: string;
}

/** A handler that failed (threw): the server answers HTTP 500, and the API server applies the webhook's failurePolicy. */
export interface AdmissionFailure {
  readonly uid: string;
  readonly error: unknown;
}

/** What a webhook's operator emits for each request. */
export type AdmissionAnswer = AdmissionResponse | AdmissionFailure;

export function allow(warnings?: readonly string[]): AdmissionVerdict {
  return warnings === undefined ? { allowed: true } : { allowed: true, warnings };
}

export function deny(message: string, options: { code?: number; reason?: string; warnings?: readonly string[] } = {}): AdmissionVerdict {
  return { allowed: false, message, ...options };
}

/** A value, or a promise of it. */
export type ValidateHandler<T extends KubernetesObject> = (request: AdmissionRequest<T>) => MaybePromise<AdmissionVerdict>;
export type MutateHandler<T extends KubernetesObject> = (
  request: AdmissionRequest<T>,
) => MaybePromise<AdmissionVerdict | AdmissionMutation<T>>;

function respond(uid: string, verdict: AdmissionVerdict): AdmissionResponse {
  const warnings = verdict.warnings && verdict.warnings.length > 0 ? { warnings: [...verdict.warnings] } : {};
  if (verdict.allowed) return { uid, allowed: true, ...warnings };
  const code = verdict.code ?? 403;
  return {
    uid,
    allowed: false,
    status: { code, message: verdict.message, ...(verdict.reason === undefined ? {} : { reason: verdict.reason }) },
    ...warnings,
  };
}

function failure(uid: string): (error: unknown) => Observable<AdmissionFailure> {
  return (error) => of({ uid, error });
}

/** The operator of a validating handler: one answer per request, handlers run concurrently. */
export function validate<T extends KubernetesObject>(handler: ValidateHandler<T>): OperatorFunction<AdmissionRequest<T>, AdmissionAnswer> {
  return mergeMap((request) =>
    defer(() => from(Promise.resolve().then(() => handler(request)))).pipe(
      map((verdict): AdmissionAnswer => respond(request.uid, checkVerdict(verdict))),
      catchError(failure(request.uid)),
    ),
  );
}

/**
 * The operator of a mutating handler. The handler may change the request's object in place or
 * return a new one; either way the patch is computed from the object as it arrived.
 */
export function mutate<T extends KubernetesObject>(handler: MutateHandler<T>): OperatorFunction<AdmissionRequest<T>, AdmissionAnswer> {
  return mergeMap((request) => {
    let original: T | undefined;
    // Inside defer: a request that cannot be copied (nested too deep) fails alone, not the webhook's pipeline.
    return defer(() => {
      // The handler gets a copy, so a handler that edits in place still leaves the original to diff against.
      original = request.object === undefined ? undefined : (JSON.parse(JSON.stringify(request.object)) as T);
      return from(Promise.resolve().then(() => handler(request)));
    }).pipe(
      map((answer): AdmissionAnswer => {
        if (isRecord(answer) && 'object' in answer) {
          const ops = jsonPatch(original, (answer as AdmissionMutation<T>).object);
          return withPatch(respond(request.uid, allow((answer as AdmissionMutation<T>).warnings)), ops);
        }
        const verdict = checkVerdict(answer);
        const ops = verdict.allowed ? jsonPatch(original, request.object) : [];
        return withPatch(respond(request.uid, verdict), ops);
      }),
      catchError(failure(request.uid)),
    );
  });
}

function withPatch(response: AdmissionResponse, ops: readonly JsonPatchOp[]): AdmissionResponse {
  if (ops.length === 0) return response;
  return { ...response, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') };
}

function checkVerdict(verdict: unknown): AdmissionVerdict {
  if (!isRecord(verdict) || typeof verdict['allowed'] !== 'boolean') {
    throw new TypeError(`the handler answered ${describeValue(verdict)}: answer allow(), deny(message) or { allowed, message }`);
  }
  if (verdict['allowed'] === false && typeof verdict['message'] !== 'string')
    throw new TypeError('a denial needs a message (deny(message))');
  return verdict as AdmissionVerdict;
}

/** Thrown (and answered with HTTP 400) for a body that is no `admission.k8s.io/v1` AdmissionReview request. */
export class MalformedReviewError extends Error {
  override readonly name = 'MalformedReviewError';
}

/** Parses an AdmissionReview body (already JSON-parsed) into a typed request. */
export function admissionRequest<T extends KubernetesObject = KubernetesObject>(review: unknown): AdmissionRequest<T> {
  if (!isRecord(review) || review['apiVersion'] !== 'admission.k8s.io/v1' || review['kind'] !== 'AdmissionReview') {
    throw new MalformedReviewError('expected an admission.k8s.io/v1 AdmissionReview');
  }
  const request = review['request'];
  if (!isRecord(request) || typeof request['uid'] !== 'string' || request['uid'] === '')
    throw new MalformedReviewError('AdmissionReview.request.uid is missing');
  const operation = request['operation'];
  if (operation !== 'CREATE' && operation !== 'UPDATE' && operation !== 'DELETE' && operation !== 'CONNECT') {
    throw new MalformedReviewError(`AdmissionReview.request.operation '${String(operation)}' is none of CREATE, UPDATE, DELETE, CONNECT`);
  }
  const object = isRecord(request['object']) ? (request['object'] as unknown as T) : undefined;
  const oldObject = isRecord(request['oldObject']) ? (request['oldObject'] as unknown as T) : undefined;
  return {
    ...(request as object),
    uid: request['uid'],
    kind: request['kind'] as AdmissionRequest['kind'],
    resource: request['resource'] as AdmissionRequest['resource'],
    operation,
    userInfo: (isRecord(request['userInfo']) ? request['userInfo'] : { username: '' }) as unknown as AdmissionUserInfo,
    object,
    oldObject,
    dryRun: request['dryRun'] === true,
  };
}

/** Parses each AdmissionReview into its typed request: the start of a pipeline of your own. */
export function admissionRequests<T extends KubernetesObject = KubernetesObject>(): OperatorFunction<unknown, AdmissionRequest<T>> {
  return map((review) => admissionRequest<T>(review));
}

/** The AdmissionReview the server sends back. */
export interface AdmissionReviewResponse {
  readonly apiVersion: 'admission.k8s.io/v1';
  readonly kind: 'AdmissionReview';
  readonly response: AdmissionResponse;
}

/** The AdmissionReview the server sends back for one answer. */
export function admissionReview(response: AdmissionResponse): AdmissionReviewResponse {
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}

/** What a webhook admits: the rules of its configuration. */
export interface AdmissionWebhookOptions<T extends KubernetesObject> {
  /** The webhook's name in its configuration: a DNS subdomain of at least three segments, e.g. `validate.greetings.example.com`. */
  readonly name: string;
  /** The resource it admits (a `defineResource` result, or `{ apiVersion, kind, plural }`). */
  readonly resource: ResourceDescriptor;
  /** Default CREATE and UPDATE. */
  readonly operations?: readonly AdmissionOperation[];
  /** URL path on the webhook server (default `/validate/<name>` or `/mutate/<name>`). */
  readonly path?: string;
  /** What the API server does when the webhook cannot answer (default Fail). */
  readonly failurePolicy?: 'Fail' | 'Ignore';
  /** How long the API server waits, 1..30 (default 10). */
  readonly timeoutSeconds?: number;
  /** 'None' (the default) also runs on dry-run requests; 'NoneOnDryRun' says the webhook has side effects it skips on dryRun. */
  readonly sideEffects?: 'None' | 'NoneOnDryRun';
  /** Only for this to be typed: `validatingWebhook<Greeting>({...})` sets it. */
  readonly __type?: T;
}

/** Any webhook, whatever it admits: what the server and the manifests take. */
export type AnyAdmissionWebhook = AdmissionWebhook<never>;

/** A validating or mutating webhook: its configuration and the operator that answers its requests. */
export interface AdmissionWebhook<T extends KubernetesObject = KubernetesObject> {
  readonly type: 'validating' | 'mutating';
  readonly name: string;
  readonly path: string;
  readonly resource: ResolvedDescriptor;
  readonly operations: readonly AdmissionOperation[];
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly timeoutSeconds: number;
  readonly sideEffects: 'None' | 'NoneOnDryRun';
  readonly admit: OperatorFunction<AdmissionRequest<T>, AdmissionAnswer>;
}

const WEBHOOK_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?){2,}$/;
const OPERATIONS = new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT', '*']);

function admissionWebhook<T extends KubernetesObject>(
  type: 'validating' | 'mutating',
  options: AdmissionWebhookOptions<T>,
  admit: OperatorFunction<AdmissionRequest<T>, AdmissionAnswer>,
): AdmissionWebhook<T> {
  const { name } = options;
  if (typeof name !== 'string' || name.length > 253 || !WEBHOOK_NAME.test(name)) {
    throw new ConfigurationError(
      'name',
      `'${String(name)}' must be a DNS subdomain with at least three segments, e.g. validate.greetings.example.com`,
    );
  }
  const resource = resolveDescriptor(options.resource);
  const operations = options.operations ?? ['CREATE', 'UPDATE'];
  if (
    !Array.isArray(operations) ||
    operations.length === 0 ||
    operations.some((o: unknown) => typeof o !== 'string' || !OPERATIONS.has(o))
  ) {
    throw new ConfigurationError(
      'operations',
      `must be a non-empty list of CREATE, UPDATE, DELETE, CONNECT (got ${JSON.stringify(operations)})`,
    );
  }
  const path = options.path ?? `/${type === 'validating' ? 'validate' : 'mutate'}/${name}`;
  if (typeof path !== 'string' || !/^\/[-a-zA-Z0-9._~/]*$/.test(path))
    throw new ConfigurationError('path', `'${String(path)}' must be a URL path starting with /`);
  const timeoutSeconds = options.timeoutSeconds ?? 10;
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 30)
    throw new ConfigurationError('timeoutSeconds', `must be a whole number 1..30 (got ${timeoutSeconds})`);
  const failurePolicy = options.failurePolicy ?? 'Fail';
  if (failurePolicy !== 'Fail' && failurePolicy !== 'Ignore')
    throw new ConfigurationError('failurePolicy', `must be Fail or Ignore (got ${String(failurePolicy)})`);
  const sideEffects = options.sideEffects ?? 'None';
  if (sideEffects !== 'None' && sideEffects !== 'NoneOnDryRun')
    throw new ConfigurationError('sideEffects', `must be None or NoneOnDryRun (got ${String(sideEffects)})`);
  return { type, name, path, resource, operations, failurePolicy, timeoutSeconds, sideEffects, admit };
}

/** Exactly one of `validate` (a function) and `admit` (an operator of your own). */
export type ValidatingWebhookOptions<T extends KubernetesObject> = AdmissionWebhookOptions<T> &
  (
    | { readonly validate: ValidateHandler<T>; readonly admit?: never }
    | { readonly admit: OperatorFunction<AdmissionRequest<T>, AdmissionAnswer>; readonly validate?: never }
  );

export type MutatingWebhookOptions<T extends KubernetesObject> = AdmissionWebhookOptions<T> &
  (
    | { readonly mutate: MutateHandler<T>; readonly admit?: never }
    | { readonly admit: OperatorFunction<AdmissionRequest<T>, AdmissionAnswer>; readonly mutate?: never }
  );

/** A validating webhook. Throws ConfigurationError naming a bad option. */
export function validatingWebhook<T extends KubernetesObject = KubernetesObject>(
  options: ValidatingWebhookOptions<T>,
): AdmissionWebhook<T> {
  return admissionWebhook('validating', options, pickAdmit(options.validate, options.admit, 'validate', validate));
}

/** A mutating webhook. Throws ConfigurationError naming a bad option. */
export function mutatingWebhook<T extends KubernetesObject = KubernetesObject>(options: MutatingWebhookOptions<T>): AdmissionWebhook<T> {
  return admissionWebhook('mutating', options, pickAdmit(options.mutate, options.admit, 'mutate', mutate));
}

function pickAdmit<T extends KubernetesObject, H>(
  handler: H | undefined,
  admit: OperatorFunction<AdmissionRequest<T>, AdmissionAnswer> | undefined,
  option: string,
  toOperator: (handler: H) => OperatorFunction<AdmissionRequest<T>, AdmissionAnswer>,
): OperatorFunction<AdmissionRequest<T>, AdmissionAnswer> {
  if ((handler === undefined) === (admit === undefined))
    throw new ConfigurationError(option, `give either ${option} (a function) or admit (an operator), exactly one`);
  if (handler !== undefined) {
    if (typeof handler !== 'function') throw new ConfigurationError(option, 'must be a function of the request');
    return toOperator(handler);
  }
  if (typeof admit !== 'function') throw new ConfigurationError('admit', 'must be an operator function (requests$) => answers$');
  return admit;
}

/**
 * Answers one AdmissionReview body with `webhook` — what the webhook server does per request, and
 * what a unit test calls. Rejects with the handler's error when it failed, MalformedReviewError
 * for a bad body.
 */
export async function reviewAdmission<T extends KubernetesObject>(
  webhook: AdmissionWebhook<T>,
  review: unknown,
): Promise<AdmissionReviewResponse> {
  const request = admissionRequest<T>(review);
  const answer = await new Promise<AdmissionAnswer>((resolve, reject) => {
    of(request)
      .pipe(webhook.admit)
      .subscribe({
        next: (a) => (a.uid === request.uid ? resolve(a) : undefined),
        error: reject,
        complete: () => reject(new Error(`webhook ${webhook.name} gave no answer for request ${request.uid}`)),
      });
  });
  if ('error' in answer) throw answer.error;
  return admissionReview(answer);
}

/** An AdmissionReview as the API server sends it, for tests: `operation` and `object` (and `oldObject`) are enough. */
export function admissionReviewFor<T extends KubernetesObject>(request: {
  readonly operation: AdmissionOperation;
  readonly object?: T;
  readonly oldObject?: T;
  readonly userInfo?: AdmissionUserInfo;
  readonly dryRun?: boolean;
  readonly uid?: string;
  readonly plural?: string;
}): { apiVersion: 'admission.k8s.io/v1'; kind: 'AdmissionReview'; request: Record<string, unknown> } {
  const subject = request.object ?? request.oldObject;
  const [group, version] = (subject?.apiVersion ?? 'v1').includes('/')
    ? (subject?.apiVersion ?? '').split('/')
    : ['', subject?.apiVersion ?? 'v1'];
  const resource = request.plural ?? `${(subject?.kind ?? '').toLowerCase()}s`;
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: request.uid ?? '00000000-0000-0000-0000-000000000000',
      kind: { group, version, kind: subject?.kind ?? '' },
      resource: { group, version, resource },
      ...(subject?.metadata?.name === undefined ? {} : { name: subject.metadata.name }),
      ...(subject?.metadata?.namespace === undefined ? {} : { namespace: subject.metadata.namespace }),
      operation: request.operation,
      userInfo: request.userInfo ?? { username: 'test' },
      ...(request.object === undefined ? {} : { object: request.object }),
      ...(request.oldObject === undefined ? {} : { oldObject: request.oldObject }),
      dryRun: request.dryRun ?? false,
    },
  };
}
