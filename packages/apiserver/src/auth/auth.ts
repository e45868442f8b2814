/**
 * Authentication and authorization of requests, and the answers of the auth APIs: who a request
 * comes from (the server's own token or none: the admin; a ServiceAccount token; impersonation
 * headers), whether RBAC lets it do what it asks (403 in the real server's words otherwise),
 * TokenRequest, and the review kinds (`kubectl auth can-i`, `kubectl auth whoami`).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { ApiError, badRequest, conflict, fieldInvalid, invalid, notFound, qualified, unauthorized } from '../base/errors.js';
import type { StatusCause } from '../base/errors.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { isJsonObject } from '../base/json.js';
import { timestamp, uidOf } from '../base/meta.js';
import type { ResourceType } from '../api/registry.js';
import type { Store } from '../storage/store.js';
import type { RbacWrite, WriteCheck } from './escalation.js';
import { escalationCheck } from './escalation.js';
import type { Attributes, Decision, PolicyRule } from './rbac.js';
import { RbacAuthorizer } from './rbac.js';
import { API_AUDIENCE, TokenSigner, type BoundObject } from './tokens.js';
import { reviewTypes } from './types.js';
import type { UserInfo } from './user.js';
import { ADMIN_USER, ANONYMOUS_USER, SYSTEM_AUTHENTICATED, serviceAccountUser, userInfoJson } from './user.js';

export const SERVICE_ACCOUNTS_KEY = '/serviceaccounts';
/** Where the objects a token may be bound to are stored. */
const BOUND_KEYS: Record<BoundObject['kind'], string> = { Pod: '/pods', Secret: '/secrets', Node: '/nodes' };
const REVIEW_KEYS = new Set(reviewTypes().map((t) => t.key));

/** TokenRequest limits of the real server: at least 10 minutes, at most 2^32 seconds; 1 hour by default. */
const MIN_TOKEN_SECONDS = 600;
const MAX_TOKEN_SECONDS = 2 ** 32;
const DEFAULT_TOKEN_SECONDS = 3600;

export interface AuthOptions {
  /**
   * The server's own bearer token: it names the admin. Without it, a request without credentials
   * (or with a bearer token that is not a JWT) is the admin.
   */
  adminToken?: string;
  now?: () => Date;
}

/** The text of a 403, as the real server's responsewriters.forbiddenMessage. */
export function forbiddenError(user: UserInfo, attrs: Attributes, reason: string): ApiError {
  const why = reason ? `: ${reason}` : '';
  if (attrs.kind === 'path') {
    return new ApiError(
      403,
      'Forbidden',
      `forbidden: User ${JSON.stringify(user.username)} cannot ${attrs.verb} path ${JSON.stringify(attrs.path)}${why}`,
      {},
    );
  }
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  const scope = attrs.namespace ? `in the namespace ${JSON.stringify(attrs.namespace)}` : 'at the cluster scope';
  const what = qualified({ group: attrs.group, plural: attrs.resource });
  const subject = attrs.name ? `${what} ${JSON.stringify(attrs.name)}` : what;
  const message = `${subject} is forbidden: User ${JSON.stringify(user.username)} cannot ${attrs.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(attrs.group)} ${scope}${why}`;
  return new ApiError(403, 'Forbidden', message, { ...(attrs.name ? { name: attrs.name } : {}), group: attrs.group, kind: attrs.resource });
}

const str = (v: JsonValue | undefined): string => (typeof v === 'string' ? v : '');
const headerValues = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

function attributesOf(spec: JsonObject): Attributes | StatusCause {
  const ra = spec.resourceAttributes;
  const nra = spec.nonResourceAttributes;
  if (isJsonObject(ra) && isJsonObject(nra))
    return fieldInvalid('spec.nonResourceAttributes', nra, 'cannot be specified in combination with resourceAttributes');
  if (isJsonObject(nra)) return { kind: 'path', verb: str(nra.verb), path: str(nra.path) };
  if (!isJsonObject(ra))
    return fieldInvalid('spec.resourceAttributes', null, 'exactly one of nonResourceAttributes or resourceAttributes must be specified');
  return {
    kind: 'resource',
    verb: str(ra.verb),
    group: str(ra.group),
    resource: str(ra.resource),
    subresource: str(ra.subresource) || undefined,
    namespace: str(ra.namespace),
    name: str(ra.name) || undefined,
  };
}

function ruleJson(rules: PolicyRule[]): { resourceRules: JsonObject[]; nonResourceRules: JsonObject[] } {
  const resourceRules: JsonObject[] = [];
  const nonResourceRules: JsonObject[] = [];
  for (const r of rules) {
    if (r.nonResourceURLs?.length) nonResourceRules.push({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs });
    else {
      resourceRules.push({
        verbs: r.verbs,
        apiGroups: r.apiGroups ?? [],
        resources: r.resources ?? [],
        ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}),
      });
    }
  }
  return { resourceRules, nonResourceRules };
}

export class Auth {
  private readonly authorizer: RbacAuthorizer;
  private readonly signer = new TokenSigner();
  private readonly adminAuth: Buffer | undefined;
  private readonly now: () => Date;

  constructor(
    private readonly store: Store,
    options: AuthOptions = {},
  ) {
    this.authorizer = new RbacAuthorizer(store);
    this.adminAuth = options.adminToken === undefined ? undefined : Buffer.from(options.adminToken);
    this.now = options.now ?? (() => new Date());
  }

  /** The user of a request (401 when its credentials are not good), after impersonation. */
  authenticate(headers: IncomingHttpHeaders): UserInfo {
    const user = this.credentialsUser(headers.authorization);
    return this.impersonated(user, headers);
  }

  private credentialsUser(authorization: string | undefined): UserInfo {
    if (authorization === undefined) {
      if (this.adminAuth === undefined) return ADMIN_USER;
      throw unauthorized();
    }
    const m = /^bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!m) throw unauthorized();
    const token = m[1];
    const given = Buffer.from(token);
    if (this.adminAuth && given.length === this.adminAuth.length && timingSafeEqual(given, this.adminAuth)) return ADMIN_USER;
    // A server without a token of its own never checked credentials: a bearer token that is not a
    // JWT (a placeholder such as 'test') still means no credentials there, i.e. the admin.
    if (this.adminAuth === undefined && token.split('.').length !== 3) return ADMIN_USER;
    const claims = this.signer.verify(token, this.now());
    if (!claims || !claims.audiences.includes(API_AUDIENCE)) throw unauthorized();
    // A bound token stops working with its ServiceAccount (deleted, or re-created with a new uid).
    const sa = this.store.get(SERVICE_ACCOUNTS_KEY, claims.namespace, claims.name);
    if (!sa || uidOf(sa) !== claims.uid) throw unauthorized();
    // A token bound to a Pod, Secret or Node stops working with that object, as the real validator checks.
    if (claims.bound) {
      const bound = this.store.get(BOUND_KEYS[claims.bound.kind], claims.bound.kind === 'Node' ? '' : claims.namespace, claims.bound.name);
      if (!bound || uidOf(bound) !== claims.bound.uid) throw unauthorized();
    }
    return serviceAccountUser(claims.namespace, claims.name, claims.uid);
  }

  /** Impersonate-User / Impersonate-Group, allowed by the `impersonate` verb (kubectl --as, --as-group). */
  private impersonated(user: UserInfo, headers: IncomingHttpHeaders): UserInfo {
    const asUser = headerValues(headers['impersonate-user'])[0];
    const asGroups = headerValues(headers['impersonate-group'])
      .flatMap((g) => g.split(','))
      .map((g) => g.trim())
      .filter(Boolean);
    if (asUser === undefined) {
      if (asGroups.length) throw badRequest('requested [Impersonate-Group] without impersonating a user');
      return user;
    }
    const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(asUser);
    const target: Attributes = sa
      ? { kind: 'resource', verb: 'impersonate', group: '', resource: 'serviceaccounts', namespace: sa[1], name: sa[2] }
      : { kind: 'resource', verb: 'impersonate', group: '', resource: 'users', namespace: '', name: asUser };
    this.authorize(user, target);
    for (const g of asGroups)
      this.authorize(user, { kind: 'resource', verb: 'impersonate', group: '', resource: 'groups', namespace: '', name: g });
    const groups = sa && asGroups.length === 0 ? [...serviceAccountUser(sa[1], sa[2], undefined).groups] : asGroups;
    if (asUser !== ANONYMOUS_USER && !groups.includes(SYSTEM_AUTHENTICATED)) groups.push(SYSTEM_AUTHENTICATED);
    return { username: asUser, groups };
  }

  decide(user: UserInfo, attrs: Attributes): Decision {
    return this.authorizer.authorize(user, attrs);
  }

  /** Throws the real server's 403 unless `user` may do what `attrs` describe. */
  authorize(user: UserInfo, attrs: Attributes): void {
    const d = this.decide(user, attrs);
    if (!d.allowed) throw forbiddenError(user, attrs, d.reason);
  }

  /**
   * The check a write of `user` must pass besides RBAC on its path (escalation prevention on the
   * RBAC kinds); undefined when there is none.
   */
  writeCheck(user: UserInfo, write: RbacWrite): WriteCheck | undefined {
    return escalationCheck(this.authorizer, user, write);
  }

  /** Whether `type` is a review kind answered by `review` (never stored). */
  answers(type: ResourceType): boolean {
    return REVIEW_KEYS.has(type.key);
  }

  /** The answer to a review: the request with its status, as the real server returns it (201). */
  review(type: ResourceType, namespace: string, body: JsonValue, user: UserInfo): JsonObject {
    if (!isJsonObject(body)) throw badRequest(`the body of a ${type.kind} must be an object`);
    const apiVersion = `${type.group}/v1`;
    const spec = isJsonObject(body.spec) ? body.spec : {};
    const out = (status: JsonObject, specOut: JsonObject = spec): JsonObject => ({
      kind: type.kind,
      apiVersion,
      metadata: { ...(isJsonObject(body.metadata) ? body.metadata : {}), creationTimestamp: null },
      ...(type.kind === 'SelfSubjectReview' ? {} : { spec: specOut }),
      status,
    });
    const fail = (cause: StatusCause): never => {
      throw invalid(type.group, type.kind, '', [cause]);
    };
    switch (type.kind) {
      case 'SelfSubjectReview':
        return out({ userInfo: userInfoJson(user) });
      case 'SelfSubjectRulesReview': {
        const ns = str(spec.namespace);
        const { rules, errors } = this.authorizer.rulesFor(user, ns);
        return out({ ...ruleJson(rules), incomplete: errors.length > 0, ...(errors.length ? { evaluationError: errors.join(', ') } : {}) });
      }
      case 'SelfSubjectAccessReview': {
        const attrs = attributesOf(spec);
        if (!('kind' in attrs)) return fail(attrs);
        return out(this.accessStatus(user, attrs));
      }
      default: {
        // SubjectAccessReview and LocalSubjectAccessReview: someone else's rights.
        const attrs = attributesOf(spec);
        if (!('kind' in attrs)) return fail(attrs);
        const username = str(spec.user);
        const groups = Array.isArray(spec.groups) ? spec.groups.filter((g): g is string => typeof g === 'string') : [];
        if (username === '' && groups.length === 0)
          fail(fieldInvalid('spec.user', username, 'at least one of user or group must be specified'));
        if (type.kind === 'LocalSubjectAccessReview') {
          if (attrs.kind !== 'resource')
            fail(fieldInvalid('spec.nonResourceAttributes', spec.nonResourceAttributes ?? null, 'disallowed on this kind of request'));
          else if (attrs.namespace !== namespace)
            fail(fieldInvalid('spec.resourceAttributes.namespace', attrs.namespace, 'must match metadata.namespace'));
        }
        return out(this.accessStatus({ username, groups, uid: str(spec.uid) || undefined }, attrs));
      }
    }
  }

  private accessStatus(user: UserInfo, attrs: Attributes): JsonObject {
    const d = this.decide(user, attrs);
    return { allowed: d.allowed, ...(d.reason ? { reason: d.reason } : {}) };
  }

  /**
   * The object a TokenRequest binds its token to, checked as the real server checks it: a v1 Pod
   * (running as this ServiceAccount), Secret or Node that exists, with the uid given if one is;
   * any other kind is 400.
   */
  private boundObject(namespace: string, serviceAccount: string, ref: JsonObject): BoundObject {
    const kind = ref.kind;
    const apiVersion = typeof ref.apiVersion === 'string' ? ref.apiVersion : '';
    if ((kind !== 'Pod' && kind !== 'Secret' && kind !== 'Node') || (apiVersion !== 'v1' && apiVersion !== '')) {
      throw badRequest(`cannot bind token to object of type ${apiVersion || 'v1'}, Kind=${String(kind)}`);
    }
    const refName = typeof ref.name === 'string' ? ref.name : '';
    const plural = kind === 'Pod' ? 'pods' : kind === 'Secret' ? 'secrets' : 'nodes';
    const obj = refName ? this.store.get(BOUND_KEYS[kind], kind === 'Node' ? '' : namespace, refName) : undefined;
    if (!obj) throw notFound({ group: '', plural }, refName);
    if (kind === 'Pod') {
      const podSpec = isJsonObject(obj.spec) ? obj.spec : {};
      const runsAs = typeof podSpec.serviceAccountName === 'string' && podSpec.serviceAccountName ? podSpec.serviceAccountName : 'default';
      if (runsAs !== serviceAccount)
        throw badRequest(`cannot bind token for serviceaccount "${serviceAccount}" to pod running with different serviceaccount name.`);
    }
    const uid = uidOf(obj);
    if (typeof ref.uid === 'string' && ref.uid !== '' && ref.uid !== uid) {
      throw conflict(
        { group: '', plural: kind },
        refName,
        `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
      );
    }
    return { kind, name: refName, uid };
  }

  /** TokenRequest (POST serviceaccounts/{name}/token): a token for the ServiceAccount. */
  requestToken(namespace: string, name: string, body: JsonValue): JsonObject {
    const sa = this.store.get(SERVICE_ACCOUNTS_KEY, namespace, name);
    if (!sa) throw notFound({ group: '', plural: 'serviceaccounts' }, name);
    const spec = isJsonObject(body) && isJsonObject(body.spec) ? body.spec : {};
    const seconds = spec.expirationSeconds ?? DEFAULT_TOKEN_SECONDS;
    if (typeof seconds !== 'number' || !Number.isInteger(seconds)) {
      throw invalid('authentication.k8s.io', 'TokenRequest', name, [fieldInvalid('spec.expirationSeconds', seconds, 'must be an integer')]);
    }
    if (seconds < MIN_TOKEN_SECONDS) {
      throw invalid('authentication.k8s.io', 'TokenRequest', name, [
        fieldInvalid('spec.expirationSeconds', seconds, 'may not specify a duration less than 10 minutes'),
      ]);
    }
    if (seconds > MAX_TOKEN_SECONDS) {
      throw invalid('authentication.k8s.io', 'TokenRequest', name, [
        fieldInvalid('spec.expirationSeconds', seconds, 'may not specify a duration larger than 2^32 seconds'),
      ]);
    }
    const requested = Array.isArray(spec.audiences) ? spec.audiences.filter((a): a is string => typeof a === 'string') : [];
    const audiences = requested.length ? requested : [API_AUDIENCE];
    const now = this.now();
    const exp = Math.floor(now.getTime() / 1000) + seconds;
    const bound = isJsonObject(spec.boundObjectRef) ? this.boundObject(namespace, name, spec.boundObjectRef) : undefined;
    const token = this.signer.sign({ namespace, name, uid: uidOf(sa), audiences, exp, bound }, now);
    return {
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { name, namespace, creationTimestamp: timestamp(now) },
      spec: {
        audiences,
        expirationSeconds: seconds,
        boundObjectRef: bound && isJsonObject(spec.boundObjectRef) ? { ...spec.boundObjectRef, uid: bound.uid } : null,
      },
      status: { token, expirationTimestamp: timestamp(new Date(exp * 1000)) },
    };
  }
}
