/**
 * ServiceAccount tokens: JWTs (HS256, signed with a key made at server start) with the claims the
 * real server puts in bound tokens, verified on every request. A token names the ServiceAccount's
 * uid, so it stops working when the ServiceAccount is deleted (or re-created), like a bound token.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** The audience of the real server's tokens by default (its issuer). */
export const API_AUDIENCE = 'https://kubernetes.default.svc.cluster.local';

export interface TokenClaims {
  namespace: string;
  name: string;
  uid: string;
  audiences: string[];
  /** Seconds since the epoch. */
  exp: number;
  /** The object the token is bound to (TokenRequest boundObjectRef): it works only while that object lives. */
  bound?: BoundObject;
}

export interface BoundObject {
  kind: 'Pod' | 'Secret' | 'Node';
  name: string;
  uid: string;
}

const BOUND_CLAIM: Record<BoundObject['kind'], 'pod' | 'secret' | 'node'> = { Pod: 'pod', Secret: 'secret', Node: 'node' };

const b64 = (s: string | Buffer): string => Buffer.from(s).toString('base64url');

export class TokenSigner {
  private readonly key = randomBytes(32);

  sign(claims: TokenClaims, now: Date): string {
    const iat = Math.floor(now.getTime() / 1000);
    const payload = {
      aud: claims.audiences,
      exp: claims.exp,
      iat,
      nbf: iat,
      iss: API_AUDIENCE,
      jti: randomBytes(16).toString('hex'),
      sub: `system:serviceaccount:${claims.namespace}:${claims.name}`,
      'kubernetes.io': {
        namespace: claims.namespace,
        serviceaccount: { name: claims.name, uid: claims.uid },
        ...(claims.bound ? { [BOUND_CLAIM[claims.bound.kind]]: { name: claims.bound.name, uid: claims.bound.uid } } : {}),
      },
    };
    const unsigned = `${b64(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64(JSON.stringify(payload))}`;
    return `${unsigned}.${this.mac(unsigned).toString('base64url')}`;
  }

  /** The claims of a token this signer made, still valid at `now`; undefined for anything else. */
  verify(token: string, now: Date): TokenClaims | undefined {
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    const [header, body, sig] = parts as [string, string, string];
    const expected = this.mac(`${header}.${body}`);
    const given = Buffer.from(sig, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const p = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as {
        aud?: string[];
        exp?: number;
        'kubernetes.io'?: { namespace?: string; serviceaccount?: { name?: string; uid?: string } } & Partial<
          Record<'pod' | 'secret' | 'node', { name?: string; uid?: string }>
        >;
      };
      const k = p['kubernetes.io'];
      if (typeof p.exp !== 'number' || p.exp * 1000 <= now.getTime()) return undefined;
      if (!k?.namespace || !k.serviceaccount?.name || !k.serviceaccount.uid) return undefined;
      const claims: TokenClaims = {
        namespace: k.namespace,
        name: k.serviceaccount.name,
        uid: k.serviceaccount.uid,
        audiences: p.aud ?? [],
        exp: p.exp,
      };
      for (const kind of ['Pod', 'Secret', 'Node'] as const) {
        const ref = k[BOUND_CLAIM[kind]];
        if (ref?.name && ref.uid) claims.bound = { kind, name: ref.name, uid: ref.uid };
      }
      return claims;
    } catch {
      return undefined;
    }
  }

  private mac(text: string): Buffer {
    return createHmac('sha256', this.key).update(text).digest();
  }
}
