/**
 * CRD conversion webhooks (spec.conversion.strategy Webhook), as the real apiextensions server
 * calls them: objects are stored in the storage version, and a request in another version has
 * what it reads converted from it, and what it writes converted to it, by an
 * apiextensions.k8s.io/v1 ConversionReview (one per list, all its items at once). The webhook is
 * reached as admission webhooks are (client.ts). A failure is the real error: `conversion webhook
 * for <group/version, Kind=...> failed: ...` (500), or `returned failure: <message>` when the
 * webhook refuses.
 */
import { randomUUID } from 'node:crypto';
import { CRD_KEY } from '../api/crds.js';
import { ApiError, internalError } from '../base/errors.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { deepClone, isJsonObject } from '../base/json.js';
import { validateAnnotations, validateLabels } from '../api/validation.js';
import type { Registry, Resolved } from '../api/registry.js';

import type { Store } from '../storage/store.js';
import { answerText, postJson, WebhookCallError, webhookTarget, type ServiceAddresses } from './client.js';

/** How long a conversion webhook may take (the real server's fixed conversion timeout). */
const CONVERSION_TIMEOUT_SECONDS = 30;

/** A request in a version other than the storage version of a webhook-converted custom resource. */
export interface ConversionPlan {
  /** The storage version: what the core reads and writes. */
  readonly storage: Resolved;
  /** Objects in the storage version, converted to the requested version (in order). */
  toRequest(objects: JsonObject[]): Promise<JsonObject[]>;
  /** Objects in the requested version, converted to the storage version. */
  toStorage(objects: JsonObject[]): Promise<JsonObject[]>;
}

/** Fields of metadata a conversion must hand back unchanged (validateConvertedObject). */
const CHECKED_META = [
  ['name', 'name'],
  ['namespace', 'namespace'],
  ['uid', 'UID'],
] as const;

/** Fields of metadata a conversion may change; the rest is restored from the original (restoreObjectMeta). */
const CONVERTIBLE_META = ['labels', 'annotations'] as const;

export class ConversionWebhooks {
  constructor(
    private readonly store: Store,
    private readonly registry: Registry,
    private readonly services: ServiceAddresses = {},
  ) {}

  /** The plan for a request at `r`, or undefined when no webhook converts it (None, or the storage version). */
  plan(r: Resolved): ConversionPlan | undefined {
    if (!r.type.custom || r.version.name === r.type.storageVersion) return undefined;
    const crd = this.store.get(CRD_KEY, '', `${r.type.plural}.${r.type.group}`);
    const conversion = isJsonObject(crd?.spec) && isJsonObject(crd.spec.conversion) ? crd.spec.conversion : undefined;
    if (conversion?.strategy !== 'Webhook' || !isJsonObject(conversion.webhook)) return undefined;
    const webhook = conversion.webhook;
    const storage = this.registry.resolve(r.type.group, r.type.storageVersion, r.type.plural);
    if (!storage) return undefined;
    const convert = (objects: JsonObject[], from: Resolved, to: Resolved): Promise<JsonObject[]> =>
      this.convert(webhook, objects, from, to);
    return { storage, toRequest: (objects) => convert(objects, storage, r), toStorage: (objects) => convert(objects, r, storage) };
  }

  private async convert(webhook: JsonObject, objects: JsonObject[], from: Resolved, to: Resolved): Promise<JsonObject[]> {
    const pending = objects.filter((o) => o.apiVersion !== to.apiVersion);
    if (pending.length === 0) return objects;
    const gvk = `${from.apiVersion}, Kind=${from.type.kind}`;
    const failed = (why: string): ApiError => internalError(`conversion webhook for ${gvk} failed: ${why}`);
    const versions = Array.isArray(webhook.conversionReviewVersions) ? webhook.conversionReviewVersions : [];
    if (!versions.includes('v1')) throw failed(`webhook does not accept v1 or v1beta1 ConversionReview`);
    const uid = randomUUID();
    let answer: JsonValue;
    try {
      const target = webhookTarget(webhook.clientConfig, this.services, CONVERSION_TIMEOUT_SECONDS);
      const caBundle = isJsonObject(webhook.clientConfig) ? webhook.clientConfig.caBundle : undefined;
      answer = await postJson(
        target,
        caBundle,
        {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'ConversionReview',
          request: { uid, desiredAPIVersion: to.apiVersion, objects: pending },
        },
        CONVERSION_TIMEOUT_SECONDS * 1000,
      );
    } catch (err) {
      if (err instanceof WebhookCallError) throw failed(err.message.replace(/^failed to call webhook: /, ''));
      throw err;
    }
    const response = isJsonObject(answer) && isJsonObject(answer.response) ? answer.response : undefined;
    if (!response) throw failed('conversion webhook response was absent');
    if (response.uid !== uid) throw failed(`expected response uid ${JSON.stringify(uid)}, got ${JSON.stringify(response.uid ?? '')}`);
    const result = isJsonObject(response.result) ? response.result : {};
    if (result.status !== 'Success') throw internalError(`conversion webhook for ${gvk} returned failure: ${answerText(result.message)}`);
    const converted = Array.isArray(response.convertedObjects) ? response.convertedObjects : [];
    if (converted.length !== pending.length)
      throw internalError(`conversion webhook for ${gvk} returned ${converted.length} objects, expected ${pending.length}`);
    const checked = converted.map((c, i) => checkConverted(c, pending[i], to, i, gvk));
    let next = 0;
    return objects.map((o) => (o.apiVersion === to.apiVersion ? o : checked[next++]));
  }
}

function checkConverted(c: JsonValue, original: JsonObject, to: Resolved, index: number, gvk: string): JsonObject {
  const invalid = (why: string): ApiError =>
    internalError(`conversion webhook for ${gvk} returned invalid converted object at index ${index}: ${why}`);
  if (!isJsonObject(c)) throw invalid('not an object');
  if (c.apiVersion !== to.apiVersion)
    throw invalid(`invalid apiVersion ${JSON.stringify(c.apiVersion ?? '')}, expected ${JSON.stringify(to.apiVersion)}`);
  if (c.kind !== original.kind) throw invalid(`invalid kind ${JSON.stringify(c.kind ?? '')}, expected ${JSON.stringify(original.kind)}`);
  const was = isJsonObject(original.metadata) ? original.metadata : {};
  const now = isJsonObject(c.metadata) ? c.metadata : {};
  for (const [f, shown] of CHECKED_META) {
    const before = typeof was[f] === 'string' ? was[f] : '';
    const after = typeof now[f] === 'string' ? now[f] : '';
    if (before !== after) throw invalid(`must have the same ${shown}: ${before} != ${after}`);
  }
  return {
    ...c,
    metadata: restoredMeta(was, c.metadata, (why) =>
      internalError(`conversion webhook for ${gvk} returned invalid metadata in object at index ${index}: ${why}`),
    ),
  };
}

/**
 * The original metadata with the converted object's labels and annotations, as the real server's
 * restoreObjectMeta keeps them: a webhook may relabel an object, never change its finalizers,
 * owners, managedFields or anything else the server or other clients rely on.
 */
function restoredMeta(original: JsonObject, converted: JsonValue | undefined, invalid: (why: string) => ApiError): JsonObject {
  if (converted === undefined) throw invalid('missing metadata in converted object');
  if (!isJsonObject(converted)) throw invalid(`invalid metadata of type ${goTypeOf(converted)} in converted object`);
  const meta = deepClone(original);
  for (const f of CONVERTIBLE_META) {
    const value = converted[f];
    if (value === undefined || value === null) {
      delete meta[f];
      continue;
    }
    if (!isJsonObject(value)) throw invalid(`invalid metadata.${f} of type ${goTypeOf(value)} in converted object`);
    for (const [k, v] of Object.entries(value))
      if (typeof v !== 'string') throw invalid(`metadata.${f}[${k}] must be a string, but is ${goTypeOf(v)} in converted object`);
    const causes = f === 'labels' ? validateLabels(value, 'metadata.labels') : validateAnnotations(value, 'metadata.annotation');
    const listed = causes.map((x) => `${x.field}: ${x.message}`);
    if (listed.length) throw invalid(listed.length > 1 ? `[${listed.join(', ')}]` : String(listed[0]));
    meta[f] = value;
  }
  return meta;
}

/** The Go type a JSON value decodes to, as the real server's messages name it. */
function goTypeOf(v: JsonValue): string {
  if (Array.isArray(v)) return '[]interface {}';
  if (v === null) return '<nil>';
  if (typeof v === 'number') return 'float64';
  if (typeof v === 'boolean') return 'bool';
  return typeof v === 'string' ? 'string' : 'map[string]interface {}';
}
