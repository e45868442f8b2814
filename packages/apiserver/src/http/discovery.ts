/**
 * Legacy discovery documents (/api, /apis, /apis/{g}, /api/v1, /apis/{g}/{v}) and /version.
 * kubectl 1.32 asks for aggregated discovery first but accepts these when the response is plain
 * application/json.
 */
import type { JsonObject } from '../base/json.js';
import { ALL_VERBS } from '../api/builtins/index.js';
import type { Registry } from '../api/registry.js';
import { apiVersionOf } from '../api/registry.js';

export const SERVER_VERSION = { major: '1', minor: '32', gitVersion: 'v1.32.0-rxkube' } as const;

export function versionInfo(): JsonObject {
  return {
    major: SERVER_VERSION.major,
    minor: SERVER_VERSION.minor,
    gitVersion: SERVER_VERSION.gitVersion,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2025-01-01T00:00:00Z',
    goVersion: 'go1.23.0',
    compiler: 'gc',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}

export function apiVersions(serverAddress: string): JsonObject {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupJson(group: string, versions: string[]): JsonObject {
  const vs = versions.map((v) => ({ groupVersion: apiVersionOf(group, v), version: v }));
  return { name: group, versions: vs, preferredVersion: vs[0] ?? null };
}

export function apiGroupList(registry: Registry): JsonObject {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: registry
      .groupVersions()
      .filter((g) => g.group !== '')
      .map((g) => groupJson(g.group, g.versions)),
  };
}

export function apiGroup(registry: Registry, group: string): JsonObject | undefined {
  const found = registry.groupVersions().find((g) => g.group === group);
  return found && group !== '' ? { kind: 'APIGroup', apiVersion: 'v1', ...groupJson(group, found.versions) } : undefined;
}

export function apiResourceList(registry: Registry, group: string, version: string): JsonObject | undefined {
  const types = registry.typesIn(group, version);
  if (types.length === 0) return undefined;
  const resources: JsonObject[] = [];
  for (const { type, version: v } of types.sort((a, b) => a.type.plural.localeCompare(b.type.plural))) {
    const entry: JsonObject = {
      name: type.plural,
      singularName: type.singular,
      namespaced: type.namespaced,
      kind: type.kind,
      verbs: [...(type.verbs ?? ALL_VERBS)],
    };
    if (type.shortNames.length) entry.shortNames = [...type.shortNames];
    if (type.categories.length) entry.categories = [...type.categories];
    resources.push(entry);
    if (v.statusSubresource) {
      resources.push({
        name: `${type.plural}/status`,
        singularName: '',
        namespaced: type.namespaced,
        kind: type.kind,
        verbs: ['get', 'patch', 'update'],
      });
    }
    if (v.scale) {
      resources.push({
        name: `${type.plural}/scale`,
        singularName: '',
        namespaced: type.namespaced,
        group: 'autoscaling',
        version: 'v1',
        kind: 'Scale',
        verbs: ['get', 'patch', 'update'],
      });
    }
    for (const sub of type.extraSubresources ?? []) {
      resources.push(
        sub === 'token'
          ? {
              name: `${type.plural}/token`,
              singularName: '',
              namespaced: type.namespaced,
              group: 'authentication.k8s.io',
              version: 'v1',
              kind: 'TokenRequest',
              verbs: ['create'],
            }
          : sub === 'binding'
            ? { name: `${type.plural}/binding`, singularName: '', namespaced: type.namespaced, kind: 'Binding', verbs: ['create'] }
            : { name: `${type.plural}/${sub}`, singularName: '', namespaced: type.namespaced, kind: type.kind, verbs: ['update'] },
      );
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf(group, version), resources };
}
