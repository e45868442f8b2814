/**
 * Kubeconfig for the embedded server, as a file for kubectl and as a client-node KubeConfig.
 *
 * On loopback the server speaks plain HTTP, with `insecure-skip-tls-verify: true` in the
 * kubeconfig: client-node 2.x only accepts an http:// server when skipTLSVerify is set, and
 * kubectl talks to http:// servers as they are. Off loopback it serves HTTPS (a certificate it
 * makes, or `tls`) and requires a bearer token; the kubeconfig then holds the CA and the token.
 */
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { DIR_MODE, writeFileAtomic } from './storage/durable/files.js';

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

/**
 * Writes the kubeconfig (mode 0600, as it may hold a token), replacing the file atomically through
 * an exclusively created temp file (never through a symlink). A missing directory is made 0700.
 */
export async function writeKubeconfigFile(path: string, spec: KubeconfigSpec): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: DIR_MODE });
  await writeFileAtomic(path, kubeconfigYaml(spec));
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
