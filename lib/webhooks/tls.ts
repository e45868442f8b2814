/**
 * The webhook server's certificate: from files (cert-manager's Secret mounted as tls.crt and
 * tls.key), read again when they change, or a CA and serving certificate made at start for
 * development. Node can make keys but not X.509 certificates: the development CA uses
 * `@peculiar/x509` (with `reflect-metadata`), optional peer dependencies loaded only then, so a
 * production install that mounts cert-manager's Secret needs neither.
 */
import { webcrypto } from 'node:crypto';
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { dirname } from 'node:path';
import { ConfigurationError } from '../core/index.js';

export interface TlsPem {
  readonly cert: string;
  readonly key: string;
}

/** A certificate authority and the serving certificate it signed. */
export interface DevelopmentTls extends TlsPem {
  /** PEM of the CA: the `caBundle` of the webhook configurations, or a client's trust. */
  readonly ca: string;
}

/** Reads a certificate and key and checks that they make a TLS context (else ConfigurationError naming the option). */
export function readTlsFiles(certFile: string, keyFile: string): TlsPem {
  let cert: string;
  let key: string;
  try {
    cert = readFileSync(certFile, 'utf8');
  } catch (err) {
    throw new ConfigurationError('tls.certFile', `cannot read ${certFile}: ${(err as Error).message}`);
  }
  try {
    key = readFileSync(keyFile, 'utf8');
  } catch (err) {
    throw new ConfigurationError('tls.keyFile', `cannot read ${keyFile}: ${(err as Error).message}`);
  }
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    throw new ConfigurationError('tls', `${certFile} and ${keyFile} are no matching PEM certificate and key: ${(err as Error).message}`);
  }
  return { cert, key };
}

/**
 * Calls `onChange` when something in the directories of the files changes. The directories, not
 * the files: a mounted Secret is updated by swapping a symlink, which a watch on the file misses.
 */
export function watchTlsFiles(files: readonly string[], onChange: () => void): { close(): void } {
  const watchers: FSWatcher[] = [...new Set(files.map((f) => dirname(f)))].map((dir) =>
    watch(dir, { persistent: false }, () => onChange()),
  );
  return { close: () => watchers.forEach((w) => w.close()) };
}

const EC = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGN = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY = 24 * 60 * 60 * 1000;

async function loadX509(): Promise<typeof import('@peculiar/x509')> {
  try {
    // @peculiar/x509 resolves its algorithms through tsyringe, which needs the Reflect metadata API.
    await import('reflect-metadata');
    return await import('@peculiar/x509');
  } catch (err) {
    throw new ConfigurationError(
      'tls',
      `a development certificate needs the packages @peculiar/x509 and reflect-metadata (npm install -D @peculiar/x509 reflect-metadata), or give tls.certFile and tls.keyFile: ${(err as Error).message}`,
      { cause: err },
    );
  }
}

async function pkcs8Pem(key: webcrypto.CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  return `-----BEGIN PRIVATE KEY-----\n${(der.toString('base64').match(/.{1,64}/g) ?? []).join('\n')}\n-----END PRIVATE KEY-----\n`;
}

/**
 * A fresh CA and a serving certificate for `dnsNames` and `ipAddresses` (default: localhost and
 * loopback), valid `days` (default 365). For development and tests; in a cluster, cert-manager.
 */
export async function generateDevelopmentTls(
  options: { dnsNames?: readonly string[]; ipAddresses?: readonly string[]; days?: number } = {},
): Promise<DevelopmentTls> {
  const x509 = await loadX509();
  // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- @peculiar/x509 types its crypto with the DOM's Crypto, which this Node project does not load; Node's webcrypto is that API
  const crypto = webcrypto as unknown as Parameters<typeof x509.X509CertificateGenerator.create>[1];
  const subtle = webcrypto.subtle;
  const notBefore = new Date(Date.now() - DAY);
  const notAfter = new Date(Date.now() + (options.days ?? 365) * DAY);
  const caKeys = await subtle.generateKey(EC, true, ['sign', 'verify']);
  const ca = await x509.X509CertificateGenerator.createSelfSigned(
    {
      name: `CN=rxkube-webhook-ca@${Math.floor(Date.now() / 1000)}`,
      keys: caKeys,
      notBefore,
      notAfter,
      signingAlgorithm: SIGN,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  const keys = await subtle.generateKey(EC, true, ['sign', 'verify']);
  const dnsNames = options.dnsNames ?? ['localhost'];
  const ips = options.ipAddresses ?? ['127.0.0.1', '::1'];
  const cert = await x509.X509CertificateGenerator.create(
    {
      subject: `CN=${dnsNames[0] ?? 'rxkube-webhook'}`,
      issuer: ca.subject,
      publicKey: keys.publicKey,
      signingKey: caKeys.privateKey,
      notBefore,
      notAfter,
      signingAlgorithm: SIGN,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension([
          ...dnsNames.map((value) => ({ type: 'dns' as const, value })),
          ...ips.map((value) => ({ type: 'ip' as const, value })),
        ]),
        await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  return { ca: ca.toString('pem'), cert: cert.toString('pem'), key: await pkcs8Pem(keys.privateKey) };
}
