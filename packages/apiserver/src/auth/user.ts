/**
 * Who a request comes from, as the real server's authenticators name it: a user name and groups.
 */

export interface UserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** The group whose members have every right (the real server's privileged group). */
export const SYSTEM_MASTERS = 'system:masters';
export const SYSTEM_AUTHENTICATED = 'system:authenticated';
export const SYSTEM_UNAUTHENTICATED = 'system:unauthenticated';
export const ANONYMOUS_USER = 'system:anonymous';
const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

/** The identity of the default kubeconfig (like the admin of a kind or kubeadm cluster). */
export const ADMIN_USER: UserInfo = { username: 'kubernetes-admin', groups: [SYSTEM_MASTERS, SYSTEM_AUTHENTICATED] };

export function serviceAccountUsername(namespace: string, name: string): string {
  return `${SERVICE_ACCOUNT_PREFIX}${namespace}:${name}`;
}

export function serviceAccountUser(namespace: string, name: string, uid: string | undefined): UserInfo {
  return {
    username: serviceAccountUsername(namespace, name),
    uid,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, SYSTEM_AUTHENTICATED],
  };
}

/** The JSON of a UserInfo as SelfSubjectReview and the review APIs answer it. */
export function userInfoJson(user: UserInfo): { username: string; uid?: string; groups: string[]; extra?: Record<string, string[]> } {
  return {
    username: user.username,
    ...(user.uid ? { uid: user.uid } : {}),
    groups: [...user.groups],
    ...(user.extra && Object.keys(user.extra).length
      ? { extra: Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]])) }
      : {}),
  };
}
