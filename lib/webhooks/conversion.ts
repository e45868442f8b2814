/**
 * Conversion webhooks (`apiextensions.k8s.io/v1` ConversionReview) as controller-runtime writes
 * them: one version is the hub, every other version (a spoke) converts to and from the hub, so
 * n versions need 2(n-1) functions instead of n(n-1), and v1 → v3 goes v1 → hub → v3.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { ConfigurationError, isRecord } from '../core/index.js';
import { jsonPatch } from './json-patch.js';

/** How one spoke version converts to the hub and back; `S` is the spoke's type, `H` the hub's. */
export interface Spoke<S extends KubernetesObject, H extends KubernetesObject> {
  readonly toHub: (object: S) => H;
  readonly fromHub: (hub: H) => S;
}

/** Any spoke of hub `H`, whatever its own type. */
export interface SpokeOf<H extends KubernetesObject> {
  readonly toHub: (object: never) => H;
  readonly fromHub: (hub: H) => KubernetesObject;
}

/** Types a spoke: `spoke<GreetingV1, GreetingV2>({ toHub, fromHub })`. */
export function spoke<S extends KubernetesObject, H extends KubernetesObject>(conversion: Spoke<S, H>): Spoke<S, H> {
  return conversion;
}

export interface ConversionWebhookOptions<H extends KubernetesObject> {
  /** The CRD's API group, e.g. `example.com`. */
  readonly group: string;
  /** The CRD's plural (the CRD is named `<plural>.<group>`). */
  readonly plural: string;
  /** The hub version, e.g. `v2`: usually the storage version. */
  readonly hub: string;
  /** Every other served version by name, each converting to and from the hub. */
  readonly spokes: Readonly<Record<string, SpokeOf<H>>>;
  /** URL path on the webhook server (default `/convert/<plural>.<group>`). */
  readonly path?: string;
}

export interface ConversionWebhook {
  readonly type: 'conversion';
  /** `<plural>.<group>`: the CRD's name. */
  readonly name: string;
  readonly group: string;
  readonly plural: string;
  readonly path: string;
  readonly hub: string;
  readonly versions: readonly string[];
  /** Converts one object to `version` (its group's); throws naming what it cannot convert. */
  convert(object: KubernetesObject, version: string): KubernetesObject;
}

type AnySpoke = Spoke<KubernetesObject, KubernetesObject>;

/** A conversion webhook. Throws ConfigurationError naming a bad option. */
export function conversionWebhook<H extends KubernetesObject>(options: ConversionWebhookOptions<H>): ConversionWebhook {
  const { group, plural, hub } = options;
  if (typeof group !== 'string' || !group.includes('.'))
    throw new ConfigurationError('group', `'${String(group)}' must be the CRD's API group, a domain like example.com`);
  if (typeof plural !== 'string' || !/^[a-z][-a-z0-9]*$/.test(plural))
    throw new ConfigurationError('plural', `'${String(plural)}' must be the CRD's plural, lowercase`);
  if (typeof hub !== 'string' || hub === '') throw new ConfigurationError('hub', 'must name the hub version, e.g. v2');
  if (!isRecord(options.spokes) || Object.keys(options.spokes).length === 0)
    throw new ConfigurationError('spokes', 'must map at least one version other than the hub to { toHub, fromHub }');
  const spokes = options.spokes as unknown as Readonly<Record<string, AnySpoke>>;
  for (const [version, s] of Object.entries(spokes)) {
    if (version === hub) throw new ConfigurationError(`spokes.${version}`, 'is the hub: the hub converts to nothing');
    if (!isRecord(s) || typeof s.toHub !== 'function' || typeof s.fromHub !== 'function')
      throw new ConfigurationError(`spokes.${version}`, 'must be { toHub(object), fromHub(hub) }');
  }
  const name = `${plural}.${group}`;
  const path = options.path ?? `/convert/${name}`;
  if (!/^\/[-a-zA-Z0-9._~/]*$/.test(path)) throw new ConfigurationError('path', `'${path}' must be a URL path starting with /`);
  const versionOf = (apiVersion: unknown): string => {
    if (typeof apiVersion !== 'string' || !apiVersion.startsWith(`${group}/`))
      throw new Error(`apiVersion '${String(apiVersion)}' is not of group ${group}`);
    return apiVersion.slice(group.length + 1);
  };
  const spokeOf = (version: string): AnySpoke => {
    const found = spokes[version];
    if (!found) throw new Error(`no conversion for version ${version} (known: ${[hub, ...Object.keys(spokes)].join(', ')})`);
    return found;
  };
  const convert = (object: KubernetesObject, version: string): KubernetesObject => {
    const from = versionOf(object.apiVersion);
    if (from === version) return object;
    const asHub = from === hub ? object : spokeOf(from).toHub(structuredClone(object));
    const converted = version === hub ? asHub : spokeOf(version).fromHub(structuredClone({ ...asHub, apiVersion: `${group}/${hub}` }));
    // Kubernetes refuses a conversion that changes metadata other than labels and annotations:
    // the object's own metadata is kept whatever a function did with it.
    const metadata = { ...object.metadata };
    if (converted.metadata?.labels !== undefined) metadata.labels = converted.metadata.labels;
    if (converted.metadata?.annotations !== undefined) metadata.annotations = converted.metadata.annotations;
    return { ...converted, apiVersion: `${group}/${version}`, kind: object.kind, metadata };
  };
  return { type: 'conversion', name, group, plural, path, hub, versions: [hub, ...Object.keys(spokes)], convert };
}

/** The ConversionReview the webhook answers. */
export interface ConversionReviewResponse {
  readonly apiVersion: 'apiextensions.k8s.io/v1';
  readonly kind: 'ConversionReview';
  readonly response: {
    readonly uid: string;
    readonly convertedObjects: readonly KubernetesObject[];
    readonly result: { readonly status: 'Success' } | { readonly status: 'Failure'; readonly message: string };
  };
}

/**
 * Answers one ConversionReview body: every object converted to `desiredAPIVersion`, or a Failure
 * result naming the object that could not be (the API server shows that message). Throws
 * MalformedConversionError for a body that is no ConversionReview request.
 */
export function reviewConversion(webhook: ConversionWebhook, review: unknown): ConversionReviewResponse {
  if (!isRecord(review) || review['apiVersion'] !== 'apiextensions.k8s.io/v1' || review['kind'] !== 'ConversionReview') {
    throw new MalformedConversionError('expected an apiextensions.k8s.io/v1 ConversionReview');
  }
  const request = review['request'];
  if (!isRecord(request) || typeof request['uid'] !== 'string')
    throw new MalformedConversionError('ConversionReview.request.uid is missing');
  const uid = request['uid'];
  const desired = request['desiredAPIVersion'];
  const objects = request['objects'];
  const answer = (
    result: ConversionReviewResponse['response']['result'],
    convertedObjects: KubernetesObject[] = [],
  ): ConversionReviewResponse => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    response: { uid, convertedObjects, result },
  });
  if (typeof desired !== 'string' || !desired.startsWith(`${webhook.group}/`))
    return answer({ status: 'Failure', message: `desiredAPIVersion '${String(desired)}' is not of group ${webhook.group}` });
  if (!Array.isArray(objects)) return answer({ status: 'Failure', message: 'request.objects is not a list' });
  const version = desired.slice(webhook.group.length + 1);
  const converted: KubernetesObject[] = [];
  for (const object of objects as KubernetesObject[]) {
    try {
      converted.push(webhook.convert(object, version));
    } catch (err) {
      const name =
        object?.metadata?.namespace === undefined ? object?.metadata?.name : `${object.metadata.namespace}/${object.metadata.name}`;
      return answer({
        status: 'Failure',
        message: `converting ${String(name)} from ${String(object?.apiVersion)} to ${desired}: ${err instanceof Error ? err.message : String(err)}`,
      });
    }
  }
  return answer({ status: 'Success' }, converted);
}

export class MalformedConversionError extends Error {
  override readonly name = 'MalformedConversionError';
}

/**
 * For your tests: each example, converted to every other version and back, must come back as it
 * was (the round-trip rule — what a client reads in one version and writes back must lose
 * nothing). Throws an Error listing, per example and version, the JSON pointers that differ.
 */
export function checkRoundTrip(webhook: ConversionWebhook, examples: readonly KubernetesObject[]): void {
  if (examples.length === 0) throw new ConfigurationError('examples', 'give at least one example object');
  const problems: string[] = [];
  for (const example of examples) {
    const from = (example.apiVersion ?? '').slice(webhook.group.length + 1);
    for (const version of webhook.versions) {
      if (version === from) continue;
      const label = `${example.metadata?.name ?? '(unnamed)'} ${from} → ${version} → ${from}`;
      try {
        const back = webhook.convert(webhook.convert(example, version), from);
        const ops = jsonPatch(example, back);
        if (ops.length > 0) problems.push(`${label}: ${ops.map((op) => `${op.op} ${op.path}`).join(', ')}`);
      } catch (err) {
        problems.push(`${label}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
  if (problems.length > 0) throw new Error(`conversion ${webhook.name} loses data on a round trip:\n  ${problems.join('\n  ')}`);
}
