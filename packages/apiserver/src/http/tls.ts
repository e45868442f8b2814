/**
 * A certificate authority and a serving certificate made at start for a server off loopback, so
 * that kubectl and client-node can verify it (and send their token) with nothing but the CA in
 * the kubeconfig. Node can create keys but not X.509 certificates; `@peculiar/x509` (on Node's
 * WebCrypto) builds them without depending on an openssl binary. Loaded only when needed.
 */
import { webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';

export interface GeneratedTls {
  /** PEM of the certificate authority that clients trust (goes into the kubeconfig). */
  ca: string;
  cert: string;
  key: string;
}

const EC = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGN = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY = 24 * 60 * 60 * 1000;

function isUnspecified(host: string): boolean {
  return host === '0.0.0.0' || host === '::';
}

/**
 * The names and addresses a client may use to reach a server bound to `host`: every interface
 * address for the unspecified address, and always loopback and the machine's host name.
 */
export function servingNames(host: string): { dns: string[]; ips: string[] } {
  const ips = new Set<string>(['127.0.0.1', '::1']);
  const dns = new Set<string>(['localhost', hostname()]);
  if (isUnspecified(host)) {
    for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) ips.add(a.address.replace(/%.*$/, ''));
  } else if (isIP(host)) ips.add(host);
  else dns.add(host);
  return { dns: [...dns].filter(Boolean), ips: [...ips] };
}

async function pkcs8Pem(key: webcrypto.CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN PRIVATE KEY-----\n${lines.join('\n')}\n-----END PRIVATE KEY-----\n`;
}

/** A fresh CA (valid 1 year) and a serving certificate it signed for `names`. */
export async function generateServingTls(names: { dns: string[]; ips: string[] }): Promise<GeneratedTls> {
  // @peculiar/x509 2 resolves its algorithms through tsyringe, which needs the Reflect metadata API.
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- @peculiar/x509 types its crypto with the DOM's Crypto, which this Node project does not load; Node's webcrypto is that API
  const crypto = webcrypto as unknown as Parameters<typeof x509.X509CertificateGenerator.create>[1];
  const subtle = webcrypto.subtle;
  const notBefore = new Date(Date.now() - DAY);
  const notAfter = new Date(Date.now() + 365 * DAY);
  const caKeys = await subtle.generateKey(EC, true, ['sign', 'verify']);
  const ca = await x509.X509CertificateGenerator.createSelfSigned(
    {
      name: `CN=rxkube-ca@${Math.floor(Date.now() / 1000)}`,
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
  const cert = await x509.X509CertificateGenerator.create(
    {
      subject: 'CN=rxkube-apiserver',
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
          ...names.dns.map((value) => ({ type: 'dns' as const, value })),
          ...names.ips.map((value) => ({ type: 'ip' as const, value })),
        ]),
        await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  return { ca: ca.toString('pem'), cert: cert.toString('pem'), key: await pkcs8Pem(keys.privateKey) };
}
