/**
 * What `rxkube dev` applies of a project's rendered deploy/ and how: the objects an operator
 * needs from its cluster (CRDs, Namespace, ServiceAccount, RBAC), not those that would run it
 * there (a Deployment whose containers the embedded server would only pretend to run); webhook
 * configurations pointed at the webhook server on this machine. And a 403 in the operator's log,
 * read back as the RBAC rule the ServiceAccount lacks.
 */
import type { KubernetesObject } from '@kubernetes/client-node';

/** Kinds that run the operator in a cluster (or reach it there): on this machine the operator runs itself. */
const IN_CLUSTER_ONLY = new Set(['Deployment', 'Service', 'Issuer', 'Certificate', 'PodDisruptionBudget', 'NetworkPolicy']);
const WEBHOOK_CONFIGURATIONS = new Set(['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']);
/** cert-manager's cainjector fills the caBundle from this Certificate: in the dev loop the development CA is written instead. */
const INJECT_CA = 'cert-manager.io/inject-ca-from';

/** The operator's identity in the cluster, which the dev loop impersonates. */
export interface ServiceAccountRef {
  readonly namespace: string;
  readonly name: string;
}

/** The local webhook server: where the API server posts, and the CA its certificate is signed by. */
export interface LocalWebhooks {
  /** https://127.0.0.1:PORT */
  readonly url: string;
  /** PEM of the development CA. */
  readonly caPem: string;
}

export interface DevPlan {
  /** In the order to apply them (deploy/'s order), webhook clientConfigs rewritten when `webhooks` was given. */
  readonly apply: readonly KubernetesObject[];
  /** Left out: they run the operator in a cluster. */
  readonly skipped: readonly KubernetesObject[];
  /** The webhook configurations among `apply`: the dev loop removes them when it stops. */
  readonly webhookConfigurations: readonly KubernetesObject[];
  readonly serviceAccount: ServiceAccountRef;
  /** Whether deploy/ registers webhooks (a configuration, or a CRD's conversion webhook). */
  readonly hasWebhooks: boolean;
}

const nameOf = (obj: KubernetesObject) => `${obj.kind}/${obj.metadata?.name ?? '?'}`;

type Json = Record<string, unknown>;
const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The clientConfigs of an object that name a Service (webhook configurations, a CRD's conversion). */
function clientConfigsOf(obj: KubernetesObject): Json[] {
  const o = obj as unknown as Json;
  if (WEBHOOK_CONFIGURATIONS.has(obj.kind ?? '')) {
    return (Array.isArray(o['webhooks']) ? o['webhooks'] : [])
      .filter(isRecord)
      .map((w) => w['clientConfig'])
      .filter(isRecord);
  }
  if (obj.kind === 'CustomResourceDefinition') {
    const spec = isRecord(o['spec']) ? o['spec'] : {};
    const conversion = isRecord(spec['conversion']) ? spec['conversion'] : {};
    const webhook = isRecord(conversion['webhook']) ? conversion['webhook'] : {};
    return isRecord(webhook['clientConfig']) ? [webhook['clientConfig']] : [];
  }
  return [];
}

/** `obj` with every Service clientConfig turned into the local URL of the same path and the development CA. */
export function pointWebhooksAt(obj: KubernetesObject, webhooks: LocalWebhooks): KubernetesObject {
  const copy = structuredClone(obj);
  const configs = clientConfigsOf(copy);
  if (configs.length === 0) return copy;
  for (const config of configs) {
    const service = isRecord(config['service']) ? config['service'] : undefined;
    const path = typeof service?.['path'] === 'string' ? service['path'] : '/';
    if (service !== undefined) config['url'] = `${webhooks.url}${path}`;
    delete config['service'];
    config['caBundle'] = Buffer.from(webhooks.caPem).toString('base64');
  }
  const annotations = copy.metadata?.annotations;
  if (annotations?.[INJECT_CA] !== undefined) {
    delete annotations[INJECT_CA];
    if (Object.keys(annotations).length === 0) delete copy.metadata!.annotations;
  }
  return copy;
}

/** Splits the rendered objects of deploy/; throws naming what is missing (no ServiceAccount, several). */
export function devPlan(objects: readonly KubernetesObject[], webhooks?: LocalWebhooks): DevPlan {
  const accounts = objects.filter((o) => o.kind === 'ServiceAccount');
  if (accounts.length !== 1) {
    throw new Error(
      `deploy/ must define exactly one ServiceAccount, the operator's, to run it as (found ${accounts.length === 0 ? 'none' : accounts.map(nameOf).join(', ')}); regenerate it with npm run manifests`,
    );
  }
  const account = accounts[0];
  const serviceAccount = { namespace: account.metadata?.namespace ?? 'default', name: account.metadata?.name ?? '' };
  const hasWebhooks = objects.some((o) => clientConfigsOf(o).length > 0);
  const apply = objects.filter((o) => !IN_CLUSTER_ONLY.has(o.kind ?? '')).map((o) => (webhooks ? pointWebhooksAt(o, webhooks) : o));
  return {
    apply,
    skipped: objects.filter((o) => IN_CLUSTER_ONLY.has(o.kind ?? '')),
    webhookConfigurations: apply.filter((o) => WEBHOOK_CONFIGURATIONS.has(o.kind ?? '')),
    serviceAccount,
    hasWebhooks,
  };
}

/**
 * Merge patches that turn the conversion webhook of a CRD already in the cluster from a Service to
 * the local URL in one write: a server-side apply would keep the `service` another manager set (a
 * half-applied deploy/), and a clientConfig with both is invalid.
 */
export function conversionRepoints(apply: readonly KubernetesObject[]): Array<{ readonly name: string; readonly patch: Json }> {
  return apply.flatMap((obj) => {
    if (obj.kind !== 'CustomResourceDefinition') return [];
    const [config] = clientConfigsOf(obj);
    if (config === undefined || typeof config['url'] !== 'string') return [];
    return [
      { name: obj.metadata?.name ?? '', patch: { spec: { conversion: { webhook: { clientConfig: { ...config, service: null } } } } } },
    ];
  });
}

/** A request RBAC refused (a 403 the API server answered), or one the operator's RBAC check at start found it may not make. */
export interface ForbiddenRequest {
  readonly seen: '403' | 'check';
  /** Who was refused; the operator itself for its own check. */
  readonly user?: string;
  readonly verb: string;
  readonly apiGroup: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace?: string;
}

// The real server's words: User "u" cannot VERB resource "RES[/SUB]" in API group "G"[ in the namespace "NS"].
const FORBIDDEN =
  /User "([^"]+)" cannot ([a-z]+) resource "([^"/]+)(?:\/([^"]+))?" in API group "([^"]*)"(?: in the namespace "([^"]+)")?/g;

/** The operator's warning from its RBAC check at start: `{"rbac":{"verb","group","resource","namespace"},"msg":"RBAC: cannot ..."}`. */
function checkWarning(line: string): ForbiddenRequest | undefined {
  if (!line.startsWith('{') || !line.includes('"RBAC: cannot ')) return undefined;
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return undefined;
  }
  const need = isRecord(entry) && isRecord(entry['rbac']) ? entry['rbac'] : undefined;
  if (need === undefined || typeof need['verb'] !== 'string' || typeof need['resource'] !== 'string' || typeof need['group'] !== 'string')
    return undefined;
  const [resource, subresource] = need['resource'].split('/');
  const namespace = typeof need['namespace'] === 'string' && need['namespace'] !== '' ? need['namespace'] : undefined;
  return {
    seen: 'check',
    verb: need['verb'],
    apiGroup: need['group'],
    resource: resource,
    ...(subresource === undefined ? {} : { subresource }),
    ...(namespace === undefined ? {} : { namespace }),
  };
}

/** The 403s named in a line of output (a JSON log line's escaped quotes included), and the operator's own RBAC check's findings. */
export function forbiddenRequests(line: string): ForbiddenRequest[] {
  const checked = checkWarning(line);
  if (checked) return [checked];
  const text = line.replace(/\\+"/g, '"');
  return [...text.matchAll(FORBIDDEN)].map(([, user, verb, resource, subresource, apiGroup, namespace]) => ({
    seen: '403' as const,
    user: user,
    verb: verb,
    apiGroup: apiGroup,
    resource: resource,
    ...(subresource === undefined ? {} : { subresource }),
    ...(namespace === undefined ? {} : { namespace }),
  }));
}

/** The rule that would have allowed `request`, as YAML for a Role's rules. */
export function missingRule(request: ForbiddenRequest): string {
  const resource = request.subresource === undefined ? request.resource : `${request.resource}/${request.subresource}`;
  return [`- apiGroups: ["${request.apiGroup}"]`, `  resources: ["${resource}"]`, `  verbs: ["${request.verb}"]`].join('\n');
}
