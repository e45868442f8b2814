/**
 * `rxkube manifests`: the CRDs, RBAC, Deployment and Service of an operator, from the module that
 * registers its controllers — as one YAML stream or as a kustomize base.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import {
  ConfigurationError,
  kustomizeBase,
  manifestsToYaml,
  Operator,
  operatorManifests,
  type OperatorOptions,
  type PolicyRule,
} from '../index.js';
import { parseFlags, UsageError } from './args.js';

const USAGE = `usage: rxkube manifests --module FILE [options]

Writes the Kubernetes manifests of an operator: its CRDs, a ServiceAccount, a (Cluster)Role with
exactly the verbs its controllers use and its binding, a Deployment and a Service for /metrics;
with webhooks, their Validating/MutatingWebhookConfiguration, the CRDs' conversion stanza, a
Service and a cert-manager Certificate (or an inline caBundle).

The module (compiled JavaScript, or TypeScript under tsx) exports:
  register(operator)   registers the controllers (required; a default export function also works)
  crds                 the CRDs of the primaries (optional)
  operatorOptions      leaderElection, sharding, health, webhooks and stopTimeoutMs as the operator runs with them (optional;
                       read with POD_NAMESPACE set to --namespace unless it is set already)
  extraRules           RBAC rules for what rxkube cannot see: writes of your own through ctx.client
                       or ctx.secondaryClient() (optional)

options:
  --module FILE       the module above
  --name NAME         name of the ServiceAccount, Role, Deployment and Service (default: package.json name)
  --namespace NS      the namespace the operator runs in (default: NAME-system with --kustomize, else default)
  --image IMAGE       container image (default NAME:latest)
  --health-port N     port of /healthz, /readyz and /metrics (default: operatorOptions.health.port or 8080)
  --webhook-ca-bundle FILE
                      with operatorOptions.webhooks: the PEM of the CA that signed the webhook server's
                      certificate, written inline as caBundle (default: a cert-manager Issuer and
                      Certificate, and cert-manager's cainjector fills the caBundle)
  --out FILE          write the YAML stream to FILE (default: stdout)
  --kustomize DIR     write a kustomize base into DIR instead: kustomization.yaml (the namespace, with a
                      Namespace object, and the name prefix NAME-) and one file per part;
                      kubectl apply -k DIR installs it, kubectl delete -k DIR removes it
  -h, --help          show this help`;

const FLAGS = {
  module: 'string',
  name: 'string',
  namespace: 'string',
  image: 'string',
  'health-port': 'number',
  'webhook-ca-bundle': 'string',
  out: 'string',
  kustomize: 'string',
  help: 'boolean',
} as const;

/** What the operator module exports. */
interface OperatorModule {
  readonly register?: unknown;
  readonly default?: unknown;
  readonly crds?: unknown;
  readonly operatorOptions?: unknown;
  readonly extraRules?: unknown;
}

/** A client configuration that is never used: `register()` only validates, nothing connects. */
async function offlineKubeConfig(namespace: string) {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'manifests', server: 'https://manifests.invalid', skipTLSVerify: false }],
    users: [{ name: 'manifests' }],
    contexts: [{ name: 'manifests', cluster: 'manifests', user: 'manifests', namespace }],
    currentContext: 'manifests',
  });
  return kubeConfig;
}

function packageName(): string | undefined {
  const file = resolve('package.json');
  if (!existsSync(file)) return undefined;
  const name = (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name;
  return typeof name === 'string' ? name.replace(/^@[^/]+\//, '') : undefined;
}

function readCaBundle(file: string): string {
  if (!existsSync(resolve(file))) throw new Error(`--webhook-ca-bundle ${file}: no such file`);
  return readFileSync(resolve(file), 'utf8');
}

export async function main(args: string[]): Promise<number> {
  let flags;
  try {
    flags = parseFlags(args, FLAGS);
    if (flags.help) {
      console.log(USAGE);
      return 0;
    }
    if (flags.module === undefined) throw new UsageError('--module is required: the module that registers the controllers');
    if (flags.out !== undefined && flags.kustomize !== undefined) throw new UsageError('give --out or --kustomize, not both');
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`rxkube manifests: ${err.message}\n\n${USAGE}`);
    return 2;
  }
  const modulePath = resolve(flags.module);
  const podNamespace = process.env['POD_NAMESPACE'];
  try {
    if (!existsSync(modulePath)) throw new Error(`--module ${flags.module}: no such file`);
    const name = flags.name ?? packageName();
    if (name === undefined) throw new Error('--name is required (there is no package.json here to take it from)');
    const namespace = flags.namespace ?? (flags.kustomize === undefined ? 'default' : `${name}-system`);
    // The module is read as it runs in that namespace, where the Deployment sets POD_NAMESPACE: a
    // leader election Lease (or a shard group) in "the operator's own namespace" lands there.
    // (Restored afterwards: tests run this command in their own process.)
    process.env['POD_NAMESPACE'] ??= namespace;
    const loaded = (await import(pathToFileURL(modulePath).href)) as OperatorModule;
    const register = typeof loaded.register === 'function' ? loaded.register : loaded.default;
    if (typeof register !== 'function')
      throw new Error(`--module ${flags.module} exports no register(operator) function (nor a default export function)`);
    if (loaded.crds !== undefined && !Array.isArray(loaded.crds))
      throw new Error(`--module ${flags.module}: crds must be an array of CustomResourceDefinitions`);
    if (loaded.extraRules !== undefined && !Array.isArray(loaded.extraRules))
      throw new Error(`--module ${flags.module}: extraRules must be an array of PolicyRules`);
    const { kubeConfig: _ignored, ...operatorOptions } = (loaded.operatorOptions ?? {}) as OperatorOptions;
    const operator = new Operator({ ...operatorOptions, kubeConfig: await offlineKubeConfig(namespace) });
    await (register as (operator: Operator) => unknown)(operator);
    const options = {
      name,
      namespace,
      ...(flags.image === undefined ? {} : { image: flags.image }),
      ...(flags['health-port'] === undefined ? {} : { healthPort: flags['health-port'] }),
      crds: (loaded.crds ?? []) as V1CustomResourceDefinition[],
      ...(loaded.extraRules === undefined ? {} : { extraRules: loaded.extraRules as PolicyRule[] }),
      ...(flags['webhook-ca-bundle'] === undefined ? {} : { webhookCaBundle: readCaBundle(flags['webhook-ca-bundle']) }),
    };
    const manifests = operatorManifests(operator, options);
    if (flags.kustomize !== undefined) {
      const dir = resolve(flags.kustomize);
      mkdirSync(dir, { recursive: true });
      const files = kustomizeBase(manifests, options);
      for (const [file, content] of Object.entries(files)) writeFileSync(join(dir, file), content);
      console.error(`rxkube manifests: wrote ${Object.keys(files).join(', ')} to ${dir}`);
    } else if (flags.out !== undefined) {
      writeFileSync(resolve(flags.out), manifestsToYaml(manifests.objects));
      console.error(`rxkube manifests: wrote ${manifests.objects.length} objects to ${flags.out}`);
    } else {
      process.stdout.write(manifestsToYaml(manifests.objects));
    }
    return 0;
  } catch (err) {
    const message = err instanceof ConfigurationError || err instanceof Error ? err.message : String(err);
    console.error(`rxkube manifests: ${message}`);
    return 1;
  } finally {
    if (podNamespace === undefined) delete process.env['POD_NAMESPACE'];
  }
}
