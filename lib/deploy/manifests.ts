/**
 * The Kubernetes manifests that run an operator in a cluster, derived from what its controllers
 * were registered with: the CRDs (with Kubernetes' own field names), a ServiceAccount, the RBAC of
 * exactly the requests the controllers make, a Deployment and a Service for /metrics.
 */
import { createRequire } from 'node:module';
import type { KubernetesObject, V1CustomResourceDefinition } from '@kubernetes/client-node';
import type * as Yaml from 'yaml';
import { ConfigurationError } from '../core/index.js';
import { crdToJson } from '../kube/index.js';
import { DEFAULT_WEBHOOK_PORT, WEBHOOK_CERT_DIR } from '../webhooks/index.js';
import {
  controllerRules,
  DEFAULT_STOP_TIMEOUT_MS,
  EVENTS,
  LEASES,
  MEMBER_LEASES,
  mergeRules,
  rbacScope,
  type PolicyRule,
} from '../controller/index.js';
import { operatorFacts, type Operator } from '../operator/index.js';
import { webhookManifests } from './webhook-manifests.js';

// Loaded when manifests are written: an operator that only runs never needs a YAML writer.
const yaml = (): typeof Yaml => createRequire(import.meta.url)('yaml') as typeof Yaml;

/** What `operatorManifests` needs besides the operator: names, image, CRDs. */
export interface ManifestOptions {
  /** The operator's name: of its ServiceAccount, Role, Deployment and Service (a DNS label). */
  readonly name: string;
  /** The namespace the operator runs in (default 'default'). */
  readonly namespace?: string;
  /** The container image (default `<name>:latest`). */
  readonly image?: string;
  /** The CRDs of the primaries: `.crd` of a `defineResource` definition, or as `customResourceDefinition()` builds them. */
  readonly crds?: readonly V1CustomResourceDefinition[];
  /** Port of /healthz, /readyz and /metrics (default: the operator's `health.port`, else 8080). */
  readonly healthPort?: number;
  /** Rules for requests rxkube cannot see, e.g. writes through `ctx.client`. */
  readonly extraRules?: readonly PolicyRule[];
  /**
   * With the operator's `webhooks`: the PEM of the CA that signed the webhook server's certificate,
   * written inline as `caBundle`. Without it, a cert-manager Issuer and Certificate make the
   * certificate and cert-manager's cainjector writes the caBundle.
   */
  readonly webhookCaBundle?: string;
}

/** The manifests of an operator, as objects (see `manifestsToYaml`, `kustomizeBase`). */
export interface OperatorManifests {
  /** The CRDs as the API server reads them (`crdToJson`). */
  readonly crds: readonly KubernetesObject[];
  /** The rules of the (Cluster)Role, one per resource; `clusterWide` says which kind. */
  readonly rules: readonly PolicyRule[];
  /** A ClusterRole when a controller watches all namespaces or a cluster-scoped kind; Roles otherwise. */
  readonly clusterWide: boolean;
  /**
   * Every object, in the order to apply them: CRDs, ServiceAccount, RBAC, Deployment, Service;
   * with webhooks then their Service, cert-manager Issuer and Certificate, and configurations.
   */
  readonly objects: readonly KubernetesObject[];
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DEFAULT_HEALTH_PORT = 8080;
/** The kubelet waits this much longer than the operator's stop timeout before SIGKILL. */
const TERMINATION_MARGIN_S = 10;

/**
 * The manifests of `operator` (its controllers registered, not started): what `rxkube manifests`
 * writes. Throws ConfigurationError naming a bad option.
 */
export function operatorManifests(operator: Operator, options: ManifestOptions): OperatorManifests {
  const { options: operatorOptions, controllers, shardNamespaces } = operatorFacts(operator);
  const name = options.name;
  if (typeof name !== 'string' || name.length > 63 || !DNS_LABEL.test(name)) {
    throw new ConfigurationError('name', `'${String(name)}' is not a valid name (a lowercase DNS label of at most 63 characters)`);
  }
  const namespace = options.namespace ?? 'default';
  if (namespace.length > 63 || !DNS_LABEL.test(namespace))
    throw new ConfigurationError('namespace', `'${namespace}' is not a valid namespace name`);
  if (controllers.length === 0)
    throw new ConfigurationError('operator', 'has no registered controllers: call register() before operatorManifests()');
  const healthPort = options.healthPort ?? operatorOptions.health?.port ?? DEFAULT_HEALTH_PORT;
  if (!Number.isInteger(healthPort) || healthPort < 1 || healthPort > 65535)
    throw new ConfigurationError('healthPort', `must be a port number, got ${healthPort}`);

  const labels = { 'app.kubernetes.io/name': name, 'app.kubernetes.io/managed-by': 'rxkube' };
  const rules = mergeRules([...controllers.flatMap(controllerRules), EVENTS, ...(options.extraRules ?? [])]);
  const { clusterWide, namespaces: watched } = rbacScope(controllers);
  const serviceAccount = { kind: 'ServiceAccount', name, namespace };
  const rbac: KubernetesObject[] = clusterWide
    ? [
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name, labels }, rules } as KubernetesObject,
        binding('ClusterRoleBinding', { name, labels }, 'ClusterRole', name, serviceAccount),
      ]
    : watched.flatMap((ns) => [
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace: ns, labels }, rules } as KubernetesObject,
        binding('RoleBinding', { name, namespace: ns, labels }, 'Role', name, serviceAccount),
      ]);
  const leaderElection = operatorOptions.leaderElection;
  if (leaderElection !== undefined) {
    const leaseNamespace = leaderElection.leaseNamespace || namespace;
    const roleName = `${name}-leader-election`;
    rbac.push(
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: roleName, namespace: leaseNamespace, labels },
        rules: [LEASES],
      } as KubernetesObject,
      binding('RoleBinding', { name: roleName, namespace: leaseNamespace, labels }, 'Role', roleName, serviceAccount),
    );
  }
  for (const shardNamespace of [...new Set(shardNamespaces.map((ns) => ns ?? namespace))].sort()) {
    const roleName = `${name}-sharding`;
    rbac.push(
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: roleName, namespace: shardNamespace, labels },
        rules: [MEMBER_LEASES],
      } as KubernetesObject,
      binding('RoleBinding', { name: roleName, namespace: shardNamespace, labels }, 'Role', roleName, serviceAccount),
    );
  }
  const stopTimeoutMs = operatorOptions.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;
  const selector = { 'app.kubernetes.io/name': name };
  const servedWebhooks = operatorOptions.webhooks?.webhooks ?? [];
  const webhookPort = operatorOptions.webhooks?.port || DEFAULT_WEBHOOK_PORT;
  const webhooks =
    servedWebhooks.length === 0
      ? undefined
      : webhookManifests(servedWebhooks, {
          name,
          namespace,
          port: webhookPort,
          selector,
          ...(options.webhookCaBundle === undefined ? {} : { caBundle: options.webhookCaBundle }),
        });
  const plainCrds = (options.crds ?? []).map((crd) => crdToJson(crd) as KubernetesObject);
  const crds = webhooks ? webhooks.withConversion(plainCrds) : plainCrds;
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: selector },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: name,
          // OB5: the operator stops within its stop timeout; the kubelet's SIGKILL comes later.
          terminationGracePeriodSeconds: Math.ceil(stopTimeoutMs / 1000) + TERMINATION_MARGIN_S,
          securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'operator',
              image: options.image ?? `${name}:latest`,
              env: [
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                { name: 'HEALTH_PORT', value: String(healthPort) },
              ],
              ports: [
                { name: 'health', containerPort: healthPort, protocol: 'TCP' },
                ...(webhooks ? [{ name: 'webhooks', containerPort: webhooks.port, protocol: 'TCP' }] : []),
              ],
              livenessProbe: { httpGet: { path: '/healthz', port: 'health' }, periodSeconds: 10, failureThreshold: 3 },
              readinessProbe: { httpGet: { path: '/readyz', port: 'health' }, periodSeconds: 5, failureThreshold: 3 },
              resources: { requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '256Mi' } },
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
              volumeMounts: [
                { name: 'tmp', mountPath: '/tmp' },
                ...(webhooks ? [{ name: 'webhook-certs', mountPath: WEBHOOK_CERT_DIR, readOnly: true }] : []),
              ],
            },
          ],
          volumes: [
            { name: 'tmp', emptyDir: {} },
            ...(webhooks ? [{ name: 'webhook-certs', secret: { secretName: webhooks.secretName } }] : []),
          ],
        },
      },
    },
  } as KubernetesObject;
  const service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `${name}-metrics`, namespace, labels },
    spec: { selector, ports: [{ name: 'metrics', port: healthPort, targetPort: 'health', protocol: 'TCP' }] },
  } as KubernetesObject;
  const account = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace, labels } } as KubernetesObject;
  return { crds, rules, clusterWide, objects: [...crds, account, ...rbac, deployment, service, ...(webhooks?.objects ?? [])] };
}

function binding(
  kind: string,
  metadata: Record<string, unknown>,
  roleKind: string,
  roleName: string,
  subject: Record<string, string>,
): KubernetesObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind,
    metadata,
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name: roleName },
    subjects: [subject],
  } as KubernetesObject;
}

/** Objects as one YAML stream (`---` between documents), as `kubectl apply -f` reads it. */
export function manifestsToYaml(objects: readonly KubernetesObject[]): string {
  return objects.map((o) => yaml().stringify(o, { lineWidth: 0, aliasDuplicateObjects: false })).join('---\n');
}

/** Namespaces a kustomize base must never create (nor `kubectl delete -k` delete). */
const SHARED_NAMESPACES = new Set(['default', 'kube-system', 'kube-public', 'kube-node-lease']);
/** The base's own name for the objects `operatorManifests` names NAME; the name prefix gives them back theirs. */
const BASE_NAME = 'controller';

/**
 * A kustomize base that `kubectl apply -k` installs as it is, and `kubectl delete -k` removes: one
 * file per part and a kustomization.yaml with the operator's namespace (and a Namespace object for
 * it, unless it is a shared one like `default`), `namePrefix: NAME-` and the image. The objects in
 * the files carry no namespace and short names (`controller`, `metrics`, `leader-election`) so that
 * an overlay changes both in one place; kustomize fixes the references (the Deployment's
 * ServiceAccount, the bindings' roles and subjects). Roles in other namespaces than the operator's
 * keep theirs. File name → content.
 */
export function kustomizeBase(manifests: OperatorManifests, options: Pick<ManifestOptions, 'name' | 'image'>): Record<string, string> {
  const { name } = options;
  const namespace = manifests.objects.find((o) => o.kind === 'ServiceAccount')?.metadata?.namespace ?? 'default';
  const short = (n: string) => (n === name ? BASE_NAME : n.startsWith(`${name}-`) ? n.slice(name.length + 1) : n);
  const objects = manifests.objects.map((o) => baseObject(o, namespace, short));
  const elsewhere = objects.some((o) => o.metadata?.namespace !== undefined);
  const files: Record<string, string> = {};
  if (!SHARED_NAMESPACES.has(namespace))
    files['namespace.yaml'] = manifestsToYaml([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }]);
  const parts: [string, string[]][] = [
    ['crds.yaml', ['CustomResourceDefinition']],
    ['rbac.yaml', ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']],
    ['deployment.yaml', ['Deployment']],
    ['service.yaml', ['Service']],
    ['webhooks.yaml', ['Issuer', 'Certificate', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']],
  ];
  for (const [file, kinds] of parts) {
    const part = objects.filter((o) => kinds.includes(o.kind ?? ''));
    if (part.length > 0) files[file] = manifestsToYaml(part);
  }
  const image = options.image ?? `${name}:latest`;
  const colon = image.lastIndexOf(':');
  const [imageName, tag] = colon > image.lastIndexOf('/') ? [image.slice(0, colon), image.slice(colon + 1)] : [image, undefined];
  const placement = elsewhere
    ? // `namespace:` would move the Roles of the watched namespaces into the operator's too.
      {
        transformers: [
          yaml().stringify({
            apiVersion: 'builtin',
            kind: 'NamespaceTransformer',
            metadata: { name: 'operator-namespace', namespace },
            unsetOnly: true,
            setRoleBindingSubjects: 'allServiceAccounts',
          }),
        ],
      }
    : { namespace };
  files['kustomization.yaml'] = yaml().stringify({
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    ...placement,
    namePrefix: `${name}-`,
    resources: Object.keys(files),
    images: [{ name: imageName, ...(tag === undefined ? {} : { newTag: tag }) }],
  });
  return files;
}

/** An object of the base: its short name, no namespace when it is the operator's, its references renamed alike. */
function baseObject(o: KubernetesObject, namespace: string, short: (name: string) => string): KubernetesObject {
  const { namespace: own, ...metadata } = o.metadata ?? {};
  const copy = structuredClone({
    ...o,
    metadata: {
      ...metadata,
      ...(own === undefined || own === namespace ? {} : { namespace: own }),
      ...(o.kind === 'CustomResourceDefinition' ? {} : { name: short(metadata.name ?? '') }),
    },
  }) as KubernetesObject & {
    roleRef?: { name: string };
    subjects?: { kind: string; name: string; namespace?: string }[];
    spec?: { template?: { spec?: { serviceAccountName?: string } } };
  };
  if (copy.roleRef) copy.roleRef.name = short(copy.roleRef.name);
  for (const subject of copy.subjects ?? []) if (subject.kind === 'ServiceAccount') subject.name = short(subject.name);
  const pod = copy.spec?.template?.spec;
  if (pod?.serviceAccountName !== undefined) pod.serviceAccountName = short(pod.serviceAccountName);
  return copy;
}
