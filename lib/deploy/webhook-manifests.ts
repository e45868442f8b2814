/**
 * The objects that register webhooks with the API server: the Validating/MutatingWebhookConfiguration,
 * the CRDs' `conversion` stanza, the Service in front of the webhook server, and its certificate
 * — a cert-manager Certificate (with a self-signed Issuer) whose CA cert-manager's cainjector
 * writes into the configurations, or a caBundle given inline.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { ConfigurationError } from '../core/index.js';
import { DEFAULT_WEBHOOK_PORT, type AnyAdmissionWebhook, type AnyWebhook, type ConversionWebhook } from '../webhooks/index.js';

export interface WebhookManifestOptions {
  /** The operator's name: the Service is `<name>-webhook`, the configurations `<name>`. */
  readonly name: string;
  readonly namespace: string;
  /** The webhook server's port in the pod (default `DEFAULT_WEBHOOK_PORT`, 9443). */
  readonly port?: number;
  /** PEM of the CA that signed the serving certificate: written inline as caBundle, and no cert-manager objects. */
  readonly caBundle?: string;
  /** Labels that select the operator's pods (the Service's selector). */
  readonly selector: Readonly<Record<string, string>>;
}

export interface WebhookManifests {
  /** Service, Issuer and Certificate (cert-manager), webhook configurations: in the order to apply them. */
  readonly objects: readonly KubernetesObject[];
  /** The Secret the pod mounts at WEBHOOK_CERT_DIR (cert-manager writes it; with a caBundle, you do). */
  readonly secretName: string;
  readonly port: number;
  /** Sets `spec.conversion` of the CRDs that have a conversion webhook; others unchanged. */
  withConversion(crds: readonly KubernetesObject[]): KubernetesObject[];
}

/** The manifests for `webhooks` served by the operator `name`. Throws ConfigurationError naming a bad option. */
export function webhookManifests(webhooks: readonly AnyWebhook[], options: WebhookManifestOptions): WebhookManifests {
  const { name, namespace } = options;
  const port = options.port ?? DEFAULT_WEBHOOK_PORT;
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new ConfigurationError('webhooks.port', `must be a port number (got ${port})`);
  if (options.caBundle !== undefined && !options.caBundle.includes('-----BEGIN CERTIFICATE-----')) {
    throw new ConfigurationError('caBundle', 'must be the PEM of a CA certificate (-----BEGIN CERTIFICATE-----)');
  }
  const service = `${name}-webhook`;
  const secretName = `${name}-webhook-tls`;
  const labels = { 'app.kubernetes.io/name': name, 'app.kubernetes.io/managed-by': 'rxkube' };
  const certManager = options.caBundle === undefined;
  const caBundle = options.caBundle === undefined ? {} : { caBundle: Buffer.from(options.caBundle).toString('base64') };
  const injectCa = certManager ? { annotations: { 'cert-manager.io/inject-ca-from': `${namespace}/${service}` } } : {};
  const clientConfig = (path: string) => ({ service: { name: service, namespace, path, port: 443 }, ...caBundle });

  const objects: KubernetesObject[] = [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: service, namespace, labels },
      spec: { selector: { ...options.selector }, ports: [{ name: 'webhooks', port: 443, targetPort: 'webhooks', protocol: 'TCP' }] },
    } as KubernetesObject,
  ];
  if (certManager) {
    objects.push(
      {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Issuer',
        metadata: { name: `${name}-selfsigned`, namespace, labels },
        spec: { selfSigned: {} },
      } as KubernetesObject,
      {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name: service, namespace, labels },
        spec: {
          secretName,
          dnsNames: [`${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`],
          issuerRef: { kind: 'Issuer', name: `${name}-selfsigned` },
        },
      } as KubernetesObject,
    );
  }
  const admission = (type: 'validating' | 'mutating') => webhooks.filter((w): w is AnyAdmissionWebhook => w.type === type);
  for (const [type, kind] of [
    ['validating', 'ValidatingWebhookConfiguration'],
    ['mutating', 'MutatingWebhookConfiguration'],
  ] as const) {
    const list = admission(type);
    if (list.length === 0) continue;
    objects.push({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind,
      metadata: { name, labels, ...injectCa },
      webhooks: list.map((w) => ({
        name: w.name,
        admissionReviewVersions: ['v1'],
        clientConfig: clientConfig(w.path),
        rules: [
          {
            apiGroups: [w.resource.group],
            apiVersions: [w.resource.version],
            resources: [w.resource.plural],
            operations: [...w.operations],
            scope: w.resource.namespaced ? 'Namespaced' : 'Cluster',
          },
        ],
        failurePolicy: w.failurePolicy,
        sideEffects: w.sideEffects,
        timeoutSeconds: w.timeoutSeconds,
        ...(type === 'mutating' ? { reinvocationPolicy: 'Never' } : {}),
      })),
    } as KubernetesObject);
  }
  const conversions = new Map(webhooks.filter((w): w is ConversionWebhook => w.type === 'conversion').map((w) => [w.name, w]));
  return {
    objects,
    secretName,
    port,
    withConversion: (crds) =>
      crds.map((crd) => {
        const webhook = conversions.get(crd.metadata?.name ?? '');
        if (!webhook) return crd;
        return {
          ...crd,
          metadata: { ...crd.metadata, annotations: { ...crd.metadata?.annotations, ...(certManager ? injectCa.annotations : {}) } },
          spec: {
            ...(crd as { spec?: object }).spec,
            conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: clientConfig(webhook.path) } },
          },
        } as KubernetesObject;
      }),
  };
}
