/** Resource descriptors: what a user says of a resource type, validated and resolved to its API paths. */
import { ConfigurationError } from '../core/index.js';

/** What the user says about a resource type. `namespaced` defaults to true. */
export interface ResourceDescriptor {
  apiVersion: string;
  kind: string;
  plural: string;
  namespaced?: boolean;
}

/** A validated descriptor with its group ('' for the core group) and version split out. */
export interface ResolvedDescriptor {
  readonly apiVersion: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  readonly group: string;
  readonly version: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const VERSION = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
/** Kinds are CamelCase (`ConfigMap`); the lowercase name in URLs is the plural. */
const KIND = /^[A-Z][A-Za-z0-9]*$/;

export interface GroupVersion {
  group: string;
  version: string;
}

/** Splits 'apps/v1' into { group: 'apps', version: 'v1' } and 'v1' into { group: '', version: 'v1' }. */
export function parseApiVersion(apiVersion: string): GroupVersion {
  if (typeof apiVersion !== 'string' || apiVersion.length === 0) {
    throw new Error(`apiVersion is required (e.g. 'v1', 'apps/v1', 'sample.rxkube.dev/v1')`);
  }
  const parts = apiVersion.split('/');
  if (parts.length > 2) {
    throw new Error(`apiVersion '${apiVersion}' is not of the form 'version' or 'group/version'`);
  }
  const [group, version] = parts.length === 2 ? (parts as [string, string]) : ['', parts[0]];
  if (parts.length === 2 && (group.length > 253 || !DNS_SUBDOMAIN.test(group))) {
    throw new Error(`apiVersion '${apiVersion}': group '${group}' is not a lowercase DNS subdomain`);
  }
  if (!VERSION.test(version) || version.length > 63) {
    throw new Error(`apiVersion '${apiVersion}': version '${version}' is not a lowercase DNS label starting with a letter`);
  }
  return { group, version };
}

/** Validates a descriptor and derives group and version; every error names the field and the resource. */
export function resolveDescriptor(descriptor: ResourceDescriptor): ResolvedDescriptor {
  if (descriptor === null || typeof descriptor !== 'object') {
    throw new ConfigurationError('resource', 'must be an object { apiVersion, kind, plural, namespaced? }');
  }
  const { apiVersion, kind, plural } = descriptor;
  if (typeof kind !== 'string' || !KIND.test(kind)) {
    throw new ConfigurationError(
      'resource.kind',
      `is required and must be CamelCase: alphanumeric, starting with an uppercase letter, e.g. 'ConfigMap' (got ${JSON.stringify(kind)}); the lowercase name is the plural`,
    );
  }
  let gv: GroupVersion;
  try {
    gv = parseApiVersion(apiVersion);
  } catch (err) {
    throw new ConfigurationError('resource.apiVersion', `${kind}: ${(err as Error).message}`);
  }
  if (plural === undefined || plural === null || plural === '') {
    throw new ConfigurationError(
      'resource.plural',
      `${kind} (${apiVersion}) needs a plural, the name in its URLs (e.g. '${kind.toLowerCase()}s'); it is not guessed from the kind`,
    );
  }
  if (typeof plural !== 'string' || !DNS_LABEL.test(plural)) {
    throw new ConfigurationError('resource.plural', `${kind} (${apiVersion}): '${String(plural)}' is not a lowercase DNS label`);
  }
  if (descriptor.namespaced !== undefined && typeof descriptor.namespaced !== 'boolean') {
    throw new ConfigurationError('resource.namespaced', `${kind} (${apiVersion}): must be a boolean`);
  }
  return Object.freeze({
    apiVersion,
    kind,
    plural,
    namespaced: descriptor.namespaced ?? true,
    group: gv.group,
    version: gv.version,
  });
}

/** `<plural>` for the core group, else `<plural>.<group>` (the name a CRD and RBAC use). */
export function groupResource(d: ResolvedDescriptor): string {
  return d.group === '' ? d.plural : `${d.plural}.${d.group}`;
}

/** `/api/v1` for the core group, `/apis/<group>/<version>` otherwise. */
export function apiVersionPath(apiVersion: string): string {
  const { group, version } = parseApiVersion(apiVersion);
  return group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
}

export interface ResourcePathParts {
  namespace?: string | undefined;
  name?: string | undefined;
  subresource?: string | undefined;
}

/**
 * The URL path of a collection, an object or an object's subresource. For a namespaced type a
 * missing namespace means all namespaces, which is only allowed for the collection.
 */
export function resourcePath(d: ResolvedDescriptor, parts: ResourcePathParts = {}): string {
  const { namespace, name, subresource } = parts;
  if (subresource !== undefined && name === undefined) {
    throw new Error(`${d.kind}: subresource '${subresource}' needs an object name`);
  }
  if (name !== undefined && name.length === 0) {
    throw new Error(`${d.kind}: name must not be empty`);
  }
  const segments = [apiVersionPath(d.apiVersion)];
  if (d.namespaced) {
    if (namespace !== undefined && namespace !== '') {
      segments.push('namespaces', encodeURIComponent(namespace));
    } else if (name !== undefined) {
      throw new Error(`${d.kind} '${name}' is namespaced (${groupResource(d)}): a namespace is required`);
    }
  }
  segments.push(d.plural);
  if (name !== undefined) segments.push(encodeURIComponent(name));
  if (subresource !== undefined) segments.push(subresource);
  return segments.join('/');
}
