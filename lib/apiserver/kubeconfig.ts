/**
 * Kubeconfig for the embedded server, as a file for kubectl and as a client-node KubeConfig.
 *
 * The server speaks plain HTTP by default, with `insecure-skip-tls-verify: true` in the
 * kubeconfig: client-node 2.x only accepts an http:// server when skipTLSVerify is set, kubectl
 * talks to http:// servers as they are, and nothing has to create a certificate (Node has no
 * X.509 builder, and the server must not depend on openssl being installed). The server binds
 * loopback unless told otherwise, and requires a bearer token when it does not. Give `tls`
 * (a key and certificate) to serve HTTPS instead; the kubeconfig then trusts that certificate.
 */
import { writeFile, mkdir, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';

/** client-node, loaded by the caller (it takes seconds to load, so the CLI loads it only when serving). */
export type ClientNode = typeof import('@kubernetes/client-node');

export interface KubeconfigSpec {
  server: string;
  token?: string;
  /** PEM certificate the client should trust (HTTPS). */
  caCert?: string;
  name?: string;
  namespace?: string;
}

const DEFAULT_NAME = 'rxkube';

function quote(s: string): string {
  return JSON.stringify(s);
}

export function kubeconfigYaml(spec: KubeconfigSpec): string {
  const name = quote(spec.name ?? DEFAULT_NAME);
  const trust = spec.caCert
    ? `    certificate-authority-data: ${Buffer.from(spec.caCert).toString('base64')}`
    : '    insecure-skip-tls-verify: true';
  const user = spec.token ? ['  user:', `    token: ${quote(spec.token)}`] : ['  user: {}'];
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${name}`,
    '  cluster:',
    `    server: ${quote(spec.server)}`,
    trust,
    'users:',
    `- name: ${name}`,
    ...user,
    'contexts:',
    `- name: ${name}`,
    '  context:',
    `    cluster: ${name}`,
    `    user: ${name}`,
    `    namespace: ${quote(spec.namespace ?? 'default')}`,
    `current-context: ${name}`,
    '',
  ].join('\n');
}

/** Writes the kubeconfig (mode 0600, as it may hold a token), replacing the file atomically. */
export async function writeKubeconfigFile(path: string, spec: KubeconfigSpec): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, kubeconfigYaml(spec), { mode: 0o600 });
  await rename(tmp, path);
}

export function kubeConfigFor(k8s: ClientNode, spec: KubeconfigSpec): KubeConfig {
  const name = spec.name ?? DEFAULT_NAME;
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [
      spec.caCert
        ? { name, server: spec.server, caData: Buffer.from(spec.caCert).toString('base64'), skipTLSVerify: false }
        : { name, server: spec.server, skipTLSVerify: true },
    ],
    users: [spec.token ? { name, token: spec.token } : { name }],
    contexts: [{ name, cluster: name, user: name, namespace: spec.namespace ?? 'default' }],
    currentContext: name,
  });
  return kc;
}
