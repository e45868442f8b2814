/**
 * Admission webhooks as the real server calls them: the MutatingWebhookConfigurations' webhooks
 * one after another (configurations in name order, webhooks in their order; reinvocationPolicy
 * IfNeeded calls a webhook once more when a later one changed the object), then the
 * ValidatingWebhookConfigurations' in parallel. Each gets an admission.k8s.io/v1 AdmissionReview
 * and must answer one with the request's uid; a denial is the webhook's status with the real
 * wording, a failure to call it (unreachable, timeout, bad certificate, invalid answer) is an
 * internal error under failurePolicy Fail and skipped under Ignore. Requests on the configurations
 * themselves are never sent to webhooks (so a broken webhook cannot lock itself in).
 */
import { randomUUID } from 'node:crypto';
import { builtinDefinitionName, decodeBuiltin } from '../api/builtin-schema.js';
import { ApiError, badRequest, internalError } from '../base/errors.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { deepEqual, isJsonObject } from '../base/json.js';
import { present } from '../api/present.js';
import type { Registry, Resolved } from '../api/registry.js';
import { apiVersionOf } from '../api/registry.js';
import type { Store } from '../storage/store.js';
import type { UserInfo } from '../auth/index.js';
import { applyJsonPatch } from '../patch/index.js';
import { answerText, postJson, WebhookCallError, webhookTarget, type ServiceAddresses } from './client.js';
import { AdmissionPolicies } from './policies.js';
import { evaluateConditions, matchedVersion, objectSelected, selects, type Operation, type RuleAttributes } from './match.js';

export const ADMISSION_GROUP = 'admissionregistration.k8s.io';
export const VALIDATING_WEBHOOKS_KEY = `${ADMISSION_GROUP}/validatingwebhookconfigurations`;
export const MUTATING_WEBHOOKS_KEY = `${ADMISSION_GROUP}/mutatingwebhookconfigurations`;

/** What a webhook is told about a write. */
export interface AdmissionRequest {
  operation: Operation;
  resolved: Resolved;
  subresource: string;
  namespace: string;
  name: string;
  dryRun: boolean;
  user: UserInfo;
  /** CreateOptions, UpdateOptions, PatchOptions or DeleteOptions. */
  options: JsonObject;
  /** The kind of object a subresource takes when it is not the resource's own (an autoscaling/v1 Scale). */
  objectKind?: { group: string; version: string; kind: string };
}

interface Hook {
  configuration: string;
  spec: JsonObject;
}

interface Invocation {
  hook: Hook;
  name: string;
  version: string;
}

function hooksOf(store: Store, key: string): Hook[] {
  const hooks: Hook[] = [];
  for (const config of store.list(key)) {
    const configuration = String((config.metadata as JsonObject | undefined)?.name ?? '');
    for (const spec of Array.isArray(config.webhooks) ? config.webhooks : []) if (isJsonObject(spec)) hooks.push({ configuration, spec });
  }
  return hooks;
}

function userInfoJson(user: UserInfo): JsonObject {
  const out: JsonObject = { username: user.username, groups: [...user.groups] };
  if (user.uid) out.uid = user.uid;
  if (user.extra) out.extra = Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]]));
  return out;
}

/** The real server's ToStatusErr: the webhook's status, its message prefixed, a code of at least 400. */
function denial(webhook: string, result: JsonValue | undefined): ApiError {
  const r = isJsonObject(result) ? result : {};
  const deniedBy = `admission webhook ${JSON.stringify(webhook)} denied the request`;
  const message =
    typeof r.message === 'string' && r.message !== ''
      ? `${deniedBy}: ${r.message}`
      : typeof r.reason === 'string' && r.reason !== ''
        ? `${deniedBy}: ${r.reason}`
        : `${deniedBy} without explanation`;
  const code = typeof r.code === 'number' && r.code >= 400 && r.code <= 599 ? r.code : 400;
  const details = isJsonObject(r.details) ? (r.details as ApiError['details']) : undefined;
  return new ApiError(code, typeof r.reason === 'string' ? r.reason : '', message, details);
}

function callFailure(webhook: string, reason: string): ApiError {
  return internalError(`failed calling webhook ${JSON.stringify(webhook)}: ${reason}`);
}

/** The answer a webhook gave, checked as VerifyAdmissionResponse checks it. */
interface Verdict {
  allowed: boolean;
  result: JsonValue | undefined;
  patch: JsonValue | undefined;
  warnings: string[];
}

function verify(uid: string, mutating: boolean, answer: JsonValue): Verdict {
  const invalid = (why: string): WebhookCallError => new WebhookCallError(`received invalid webhook response: ${why}`);
  if (!isJsonObject(answer) || answer.apiVersion !== 'admission.k8s.io/v1' || answer.kind !== 'AdmissionReview') {
    const got = isJsonObject(answer) ? `${answerText(answer.apiVersion ?? '')}, Kind=${answerText(answer.kind ?? '')}` : typeof answer;
    throw invalid(`expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${got}`);
  }
  const response = answer.response;
  if (!isJsonObject(response)) throw invalid('webhook response was absent');
  if (response.uid !== uid) throw invalid(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(response.uid ?? '')}`);
  if (typeof response.allowed !== 'boolean') throw invalid('response.allowed must be a boolean');
  const warnings = Array.isArray(response.warnings) ? response.warnings.filter((w): w is string => typeof w === 'string') : [];
  let patch: JsonValue | undefined;
  if (response.patch !== undefined && response.patch !== null && response.patch !== '') {
    if (!mutating) throw invalid('validating webhook may not return response.patch');
    if (response.patchType === undefined || response.patchType === null || response.patchType === '')
      throw invalid('webhook returned response.patch but not response.patchType');
    if (response.patchType !== 'JSONPatch')
      throw invalid(`webhook returned invalid response.patchType of ${JSON.stringify(response.patchType)}`);
    if (typeof response.patch !== 'string') throw invalid('response.patch must be base64-encoded JSON');
    try {
      patch = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as JsonValue;
    } catch (err) {
      throw new WebhookCallError(`received undecodable patch in webhook response: ${(err as Error).message}`);
    }
  }
  return { allowed: response.allowed, result: response.status, patch, warnings };
}

/** Fields of an object that only the server sets: kept from the write, whatever a webhook made of them. */
const SERVER_OWNED_META = [
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'generation',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
];

/** `target` turned into `mutated` in place, with the server-owned metadata `target` had. */
export function replaceWithMutated(target: JsonObject, mutated: JsonObject): void {
  const meta = isJsonObject(target.metadata) ? target.metadata : {};
  const kept: JsonObject = {};
  for (const k of SERVER_OWNED_META) if (meta[k] !== undefined) kept[k] = meta[k];
  for (const k of Object.keys(target)) delete target[k];
  Object.assign(target, structuredClone(mutated));
  const newMeta = isJsonObject(target.metadata) ? target.metadata : (target.metadata = {});
  for (const k of SERVER_OWNED_META) delete newMeta[k];
  Object.assign(newMeta, kept);
}

export class AdmissionWebhooks {
  /** The ValidatingAdmissionPolicies, which run with the validating webhooks (before them, as in the real plugin order). */
  private readonly policies: AdmissionPolicies;

  constructor(
    private readonly store: Store,
    registry: Registry,
    private readonly services: ServiceAddresses = {},
  ) {
    this.policies = new AdmissionPolicies(store, registry);
  }

  /** Whether the request is one webhooks may see at all (not a write to the webhook configurations themselves). */
  private exempt(req: AdmissionRequest): boolean {
    return req.resolved.type.group === ADMISSION_GROUP;
  }

  private attributes(req: AdmissionRequest): RuleAttributes {
    return {
      operation: req.operation,
      type: req.resolved.type,
      version: req.resolved.version.name,
      subresource: req.subresource,
      namespaced: req.resolved.type.namespaced,
    };
  }

  /** Whether some webhook's rules cover the request (before selectors and conditions): cheap, and false for most requests. */
  mayApply(req: AdmissionRequest): boolean {
    if (this.exempt(req)) return false;
    const a = this.attributes(req);
    if (this.policies.mayApply({ rules: a, name: req.name })) return true;
    return [MUTATING_WEBHOOKS_KEY, VALIDATING_WEBHOOKS_KEY].some((key) =>
      hooksOf(this.store, key).some((h) => matchedVersion(h.spec.rules, h.spec.matchPolicy, a) !== undefined),
    );
  }

  /** The namespace whose labels namespaceSelector sees (a namespace's own for namespaces), if any. */
  private namespaceLabels(req: AdmissionRequest, object: JsonObject | undefined): Record<string, string> | undefined {
    if (req.resolved.type.group === '' && req.resolved.type.plural === 'namespaces')
      return ((object?.metadata as JsonObject | undefined)?.labels as Record<string, string> | undefined) ?? {};
    if (!req.resolved.type.namespaced) return undefined;
    const ns = this.store.get('/namespaces', '', req.namespace);
    return ((ns?.metadata as JsonObject | undefined)?.labels as Record<string, string> | undefined) ?? {};
  }

  /** The AdmissionRequest a webhook called at `version` gets. */
  private review(req: AdmissionRequest, version: string, object: JsonObject | undefined, oldObject: JsonObject | undefined): JsonObject {
    const t = req.resolved.type;
    const own = req.objectKind;
    const at = (o: JsonObject | undefined): JsonValue => (o === undefined ? null : present(o, objectApiVersion(req, version)));
    return {
      uid: randomUUID(),
      kind: own ?? { group: t.group, version, kind: t.kind },
      resource: { group: t.group, version, resource: t.plural },
      ...(req.subresource ? { subResource: req.subresource } : {}),
      requestKind: own ?? { group: t.group, version: req.resolved.version.name, kind: t.kind },
      requestResource: { group: t.group, version: req.resolved.version.name, resource: t.plural },
      ...(req.subresource ? { requestSubResource: req.subresource } : {}),
      name: req.name,
      ...(req.namespace ? { namespace: req.namespace } : {}),
      operation: req.operation,
      userInfo: userInfoJson(req.user),
      object: at(object),
      oldObject: at(oldObject),
      dryRun: req.dryRun,
      options: req.options,
    };
  }

  /**
   * The invocation of a hook for this request, undefined when it does not apply; a matchConditions
   * error is an ApiError under failurePolicy Fail.
   */
  private invocation(
    hook: Hook,
    req: AdmissionRequest,
    object: JsonObject | undefined,
    oldObject: JsonObject | undefined,
  ): Invocation | undefined {
    const spec = hook.spec;
    const version = matchedVersion(spec.rules, spec.matchPolicy, this.attributes(req));
    if (version === undefined) return undefined;
    const nsLabels = this.namespaceLabels(req, object ?? oldObject);
    if (nsLabels !== undefined && !selects(spec.namespaceSelector, nsLabels)) return undefined;
    if (!objectSelected(spec.objectSelector, object, oldObject)) return undefined;
    const name = String(spec.name);
    const request = this.review(req, version, object, oldObject);
    const outcome = evaluateConditions(spec.matchConditions, {
      object: request.object,
      oldObject: request.oldObject,
      request,
      authorizer: null,
    });
    if ('error' in outcome) {
      if (spec.failurePolicy === 'Ignore') return undefined;
      throw callFailure(name, outcome.error);
    }
    return outcome.matched ? { hook, name, version } : undefined;
  }

  /** Calls one webhook; resolves with its verdict, rejects with an ApiError (dry run refused) or a WebhookCallError. */
  private async call(
    inv: Invocation,
    req: AdmissionRequest,
    object: JsonObject | undefined,
    oldObject: JsonObject | undefined,
    mutating: boolean,
  ): Promise<{ verdict: Verdict; sent: JsonObject }> {
    const spec = inv.hook.spec;
    if (req.dryRun && spec.sideEffects !== 'None' && spec.sideEffects !== 'NoneOnDryRun')
      throw badRequest(`admission webhook ${JSON.stringify(inv.name)} does not support dry run`);
    const timeoutSeconds = typeof spec.timeoutSeconds === 'number' ? spec.timeoutSeconds : 10;
    const request = this.review(req, inv.version, object, oldObject);
    const target = webhookTarget(spec.clientConfig, this.services, timeoutSeconds);
    const caBundle = isJsonObject(spec.clientConfig) ? spec.clientConfig.caBundle : undefined;
    const answer = await postJson(
      target,
      caBundle,
      { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request },
      timeoutSeconds * 1000,
    );
    return { verdict: verify(request.uid as string, mutating, answer), sent: request };
  }

  /** A hook's failure as the request's outcome: undefined to go on (failurePolicy Ignore), else the error. */
  private failure(inv: Invocation, err: unknown): ApiError | undefined {
    if (err instanceof WebhookCallError) return inv.hook.spec.failurePolicy === 'Ignore' ? undefined : callFailure(inv.name, err.message);
    if (err instanceof ApiError) return err;
    throw err;
  }

  /**
   * Runs the mutating webhooks on `object` (in the request's version); resolves with the object
   * they made, webhook warnings pushed onto `warnings`.
   */
  async mutate(
    req: AdmissionRequest,
    object: JsonObject | undefined,
    oldObject: JsonObject | undefined,
    warnings: string[],
  ): Promise<JsonObject | undefined> {
    if (this.exempt(req)) return object;
    const hooks = hooksOf(this.store, MUTATING_WEBHOOKS_KEY);
    let current = object;
    /** Indexes of IfNeeded hooks called, and whether a later hook changed the object since. */
    const reinvoke = new Map<number, boolean>();
    const runOne = async (index: number): Promise<void> => {
      const hook = hooks[index];
      const inv = this.invocation(hook, req, current, oldObject);
      if (!inv) return;
      let changed = false;
      try {
        const { verdict, sent } = await this.call(inv, req, current, oldObject, true);
        warnings.push(...verdict.warnings);
        if (!verdict.allowed) throw denial(inv.name, verdict.result);
        if (verdict.patch !== undefined && !(Array.isArray(verdict.patch) && verdict.patch.length === 0)) {
          if (current === undefined || !isJsonObject(sent.object)) {
            throw internalError(
              `admission webhook ${JSON.stringify(inv.name)} attempted to modify the object, which is not supported for this operation`,
            );
          }
          const patched = applyPatch(inv.name, sent.object, verdict.patch);
          if (patched.apiVersion !== sent.object.apiVersion || patched.kind !== sent.object.kind) {
            throw internalError(
              `admission webhook ${JSON.stringify(inv.name)} changed the object's apiVersion or kind to ${JSON.stringify(`${answerText(patched.apiVersion)}, Kind=${answerText(patched.kind)}`)}`,
            );
          }
          decodeAsGoWould(req, inv.version, patched);
          changed = !deepEqual(patched, sent.object);
          current = present(patched, objectApiVersion(req, req.resolved.version.name));
        }
      } catch (err) {
        if (err instanceof ApiError && !(err instanceof WebhookCallError)) throw err;
        const failed = this.failure(inv, err);
        if (failed) throw failed;
      }
      if (changed) for (const k of reinvoke.keys()) reinvoke.set(k, true);
      if (hook.spec.reinvocationPolicy === 'IfNeeded' && !reinvoke.has(index)) reinvoke.set(index, false);
    };
    for (let i = 0; i < hooks.length; i++) await runOne(i);
    const again = [...reinvoke.entries()].filter(([, changedAfter]) => changedAfter).map(([i]) => i);
    for (const i of again) await runOne(i);
    return current;
  }

  /** Runs the admission policies, then the validating webhooks in parallel; rejects with the first refusal (in webhook order). */
  async validate(
    req: AdmissionRequest,
    object: JsonObject | undefined,
    oldObject: JsonObject | undefined,
    warnings: string[],
  ): Promise<void> {
    if (this.exempt(req)) return;
    const rules = this.attributes(req);
    this.policies.validate(
      { rules, name: req.name, namespace: req.namespace, object, oldObject, request: this.review(req, rules.version, object, oldObject) },
      warnings,
    );
    const invocations = hooksOf(this.store, VALIDATING_WEBHOOKS_KEY)
      .map((hook) => this.invocation(hook, req, object, oldObject))
      .filter((inv): inv is Invocation => inv !== undefined);
    const outcomes = await Promise.all(
      invocations.map(async (inv): Promise<{ error?: ApiError; warnings: string[] }> => {
        try {
          const { verdict } = await this.call(inv, req, object, oldObject, false);
          return { error: verdict.allowed ? undefined : denial(inv.name, verdict.result), warnings: verdict.warnings };
        } catch (err) {
          return { error: this.failure(inv, err), warnings: [] };
        }
      }),
    );
    for (const o of outcomes) warnings.push(...o.warnings);
    const refused = outcomes.find((o) => o.error !== undefined);
    if (refused?.error) throw refused.error;
  }
}

/**
 * A built-in object a webhook patched, decoded into its Go type as the real dispatcher decodes it
 * (in the version the webhook was called at): a value of the wrong type is an internal error,
 * whatever the failurePolicy, and fields the type does not declare are dropped without a word.
 */
function decodeAsGoWould(req: AdmissionRequest, version: string, patched: JsonObject): void {
  const t = req.resolved.type;
  // A Scale is checked by the scale write itself (replicas an integer of at least 0).
  if (t.custom || req.objectKind) return;
  const definition = builtinDefinitionName(t.group, version, t.kind);
  if (definition === undefined) return;
  const { typeError } = decodeBuiltin(patched, definition);
  if (typeError !== undefined) throw internalError(typeError);
}

/** The apiVersion of the object a request admits, at `version` of the resource. */
function objectApiVersion(req: AdmissionRequest, version: string): string {
  return req.objectKind ? apiVersionOf(req.objectKind.group, req.objectKind.version) : apiVersionOf(req.resolved.type.group, version);
}

/** A webhook's JSONPatch applied; a patch that does not apply is an internal error, as the real server's. */
function applyPatch(webhook: string, object: JsonObject, patch: JsonValue): JsonObject {
  let patched: JsonValue;
  try {
    patched = applyJsonPatch(object, patch);
  } catch (err) {
    throw internalError((err as Error).message);
  }
  if (!isJsonObject(patched))
    throw internalError(
      `admission webhook ${JSON.stringify(webhook)} patched the object into a ${patched === null ? 'null' : typeof patched}`,
    );
  return patched;
}
