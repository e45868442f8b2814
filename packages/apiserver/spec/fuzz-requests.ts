/**
 * Random and mutated requests for the API server fuzz test (fuzz.spec.ts): methods, paths,
 * query parameters, headers, bodies (JSON, YAML, protobuf-ish bytes, all four patch types) and
 * framing (Content-Length lies, chunking, broken request lines), from a seeded PRNG so that a
 * seed names a sequence of requests.
 */

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
export function prng(seed: number): Rng {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number): number => Math.floor(next() * n);
  return {
    next,
    int,
    chance: (p) => next() < p,
    pick: <T>(xs: readonly T[]): T => xs[int(xs.length)],
  };
}

export interface Rng {
  next(): number;
  int(n: number): number;
  chance(p: number): boolean;
  pick<T>(xs: readonly T[]): T;
}

export type Framing = 'length' | 'chunked' | 'cl-short' | 'cl-long' | 'cl-nan' | 'te-and-cl' | 'te-gzip' | 'chunk-broken';

export interface FuzzRequest {
  /** What kind of request this is, for the summary. */
  category: string;
  method: string;
  /** Path and query as sent on the request line. */
  target: string;
  headers: Array<[string, string]>;
  body: Buffer;
  framing: Framing;
  /** A whole request line sent instead of `method target HTTP/1.1` (malformed ones). */
  requestLine?: string;
  /** The request names an object with an injected fault (a 5xx is expected). */
  injected: boolean;
  /** Sent without `Connection: close`: more requests follow on the connection. */
  keepAlive?: boolean;
  /**
   * Several requests written on one keep-alive connection before any answer is read; the
   * answers must come in order, one per request, each as `expect` says.
   */
  pipeline?: PipelinedStep[];
}

/** One request of a pipelined batch and the answer it must get. */
export interface PipelinedStep {
  request: FuzzRequest;
  /** The status, and for an object answer its name and data.v (the value the last write left). */
  expect: { status: number; name?: string; value?: string; items?: number };
}

/** What the generator needs to know about the server under test. */
export interface FuzzTarget {
  host: string;
  token: string;
  /** The fixture namespace the fuzz must never name (its objects are checked afterwards). */
  keepNamespace: string;
  /** A namespace only pipelined batches name (no random request deletes it or its objects). */
  pipelineNamespace: string;
  /** Names whose requests get an injected 5xx. */
  faultyNames: readonly string[];
  /** Continue tokens seen in earlier answers. */
  continueTokens: string[];
  /** The server's current resourceVersion (for near and future versions). */
  resourceVersion(): number;
}

const GROUP = 'fuzz.rxkube.dev';
const NAMESPACES = ['default', 'fuzz'];
const ODD_NAMESPACES = ['fuzz-gone', 'UPPER', '..', '%2e%2e', 'a'.repeat(70), ''];
const NAMES = ['fz-a', 'fz-b', 'fz-c', 'fz-a', 'fz-c', 'fz-faulty'];
const ODD_NAMES = ['UPPER', 'a..b', 'x'.repeat(260), '%2F', 'fz-%00', '.', '-lead', 'fz-a%20b', 'ünï'];

interface Resource {
  /** Path prefix up to the namespace, or the collection for cluster-scoped ones. */
  base: string;
  namespaced: boolean;
  plural: string;
  apiVersion: string;
  kind: string;
  subresources: string[];
}

const RESOURCES: Resource[] = [
  { base: '/api/v1', namespaced: true, plural: 'configmaps', apiVersion: 'v1', kind: 'ConfigMap', subresources: [] },
  { base: '/api/v1', namespaced: true, plural: 'secrets', apiVersion: 'v1', kind: 'Secret', subresources: [] },
  { base: '/api/v1', namespaced: true, plural: 'pods', apiVersion: 'v1', kind: 'Pod', subresources: ['status'] },
  { base: '/api/v1', namespaced: true, plural: 'services', apiVersion: 'v1', kind: 'Service', subresources: ['status'] },
  { base: '/api/v1', namespaced: false, plural: 'namespaces', apiVersion: 'v1', kind: 'Namespace', subresources: ['status', 'finalize'] },
  {
    base: '/apis/apps/v1',
    namespaced: true,
    plural: 'deployments',
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    subresources: ['status', 'scale'],
  },
  {
    base: '/apis/coordination.k8s.io/v1',
    namespaced: true,
    plural: 'leases',
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    subresources: [],
  },
  {
    base: `/apis/${GROUP}/v1`,
    namespaced: true,
    plural: 'widgets',
    apiVersion: `${GROUP}/v1`,
    kind: 'Widget',
    subresources: ['status', 'scale'],
  },
  {
    base: '/apis/apiextensions.k8s.io/v1',
    namespaced: false,
    plural: 'customresourcedefinitions',
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    subresources: ['status'],
  },
];

const OTHER_PATHS = [
  '/',
  '/api',
  '/apis',
  '/api/v1',
  '/api/v2',
  '/apis/apps',
  '/apis/apps/v1',
  '/apis/apps/v9',
  `/apis/${GROUP}`,
  `/apis/${GROUP}/v1`,
  '/apis/unknown.example/v1',
  '/apis/unknown.example/v1/things',
  '/version',
  '/healthz',
  '/livez',
  '/readyz',
  '/metrics',
  '/openapi/v2',
  '/openapi/v3',
  '/openapi/v3/api/v1',
  '/openapi/v3/apis/apps/v1',
  `/openapi/v3/apis/${GROUP}/v1`,
  '/openapi/v3/apis/nope/v1',
  '/api/v1/watch/namespaces/default/configmaps',
  '/api/v1/watch/configmaps',
  '/apis/apps/v1/watch/namespaces/fuzz/deployments/fz-a',
  '/api/v1/namespaces/default/configmaps/fz-a/proxy',
  '/api/v1/namespaces/default/pods/fz-a/exec',
  '/api/v1/namespaces/default/pods/fz-a/log',
  '/api/v1/namespaces/default/configmaps/fz-a/status/extra',
  '/../../etc/passwd',
  '/api/v1/namespaces/%2e%2e/configmaps',
  '/api//v1///namespaces/',
];

const METHODS = ['GET', 'GET', 'GET', 'POST', 'POST', 'PUT', 'PUT', 'PATCH', 'PATCH', 'PATCH', 'PATCH', 'DELETE', 'HEAD'];
/** Methods the server does not serve: some Node's parser knows, some it refuses, CONNECT it hands over. */
const ODD_METHODS = [
  'OPTIONS',
  'TRACE',
  'PROPFIND',
  'MKCOL',
  'QUERY',
  'M-SEARCH',
  'FOO',
  'BREW',
  'get',
  'Patch',
  'CONNECT',
  'X'.repeat(40),
];

const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
];
const BODY_TYPES = [
  'application/json',
  'application/yaml',
  'application/vnd.kubernetes.protobuf',
  'text/plain',
  'application/json; charset=utf-8',
  'application/x-www-form-urlencoded',
  '',
  'application/json;;;x',
  '*/*',
  'application/apply-patch+yaml',
];
const ACCEPTS = [
  'application/json',
  'application/json;as=Table;v=v1;g=meta.k8s.io',
  'application/json;as=Table;v=v1beta1;g=meta.k8s.io, application/json',
  'application/vnd.kubernetes.protobuf',
  'application/yaml',
  '*/*',
  'text/html',
  'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io',
  ';;',
  'application/json;as=Table;v=v9;g=meta.k8s.io',
];

const QUERY_VALUES: Record<string, readonly string[]> = {
  labelSelector: [
    'a=b',
    'app in (x,y)',
    '!app',
    'a!=b,c',
    '(((',
    'a=' + 'x'.repeat(100),
    '=',
    'a==b',
    'a notin ()',
    'fuzz=yes',
    'a.b/c=d',
    'a=b,',
    '  ',
    'a in x',
    'x'.repeat(400),
  ],
  fieldSelector: [
    'metadata.name=fz-a',
    'metadata.namespace!=default',
    'status.phase=Running',
    'spec.nope=1',
    '=',
    'metadata.name==x,,',
    'metadata.name',
    'spec.type=ClusterIP',
    'metadata.name=\\,x',
  ],
  resourceVersion: ['', '0', '1', 'abc', '-1', '99999999999999999999', '1e3', 'NOW', 'NEAR', 'FUTURE'],
  resourceVersionMatch: ['NotOlderThan', 'Exact', 'bogus', ''],
  limit: ['0', '1', '2', '500', '-1', 'abc', '99999999999999999999', '1.5', ''],
  continue: ['', 'abc', 'eyJ2IjoxfQ', 'eyJydiI6OTk5OTk5OTk5LCJzdGFydCI6ImEifQ', '%%%', 'SEEN', 'FORGED', 'FORGED'],
  timeoutSeconds: ['0', '1', '-1', 'abc', '2147484', '99999999999999999999', '1.5'],
  watch: ['true', '1', 'false', 'yes', ''],
  allowWatchBookmarks: ['true', 'false', 'maybe'],
  sendInitialEvents: ['true', 'false', 'x'],
  fieldManager: ['', 'fuzz', 'kubectl', 'x'.repeat(200), 'ünï', ' '],
  fieldValidation: ['Strict', 'Warn', 'Ignore', 'bogus', ''],
  dryRun: ['All', '', 'bogus', 'All'],
  propagationPolicy: ['Background', 'Foreground', 'Orphan', 'bogus', ''],
  orphanDependents: ['true', 'false', 'x'],
  gracePeriodSeconds: ['0', '30', '-1', 'abc'],
  force: ['true', 'false', 'x'],
  includeObject: ['None', 'Object', 'Metadata', 'x'],
  pretty: ['true', '1', 'x'],
  'bogus%zz': ['1'],
  '': ['x'],
};

function encode(v: string): string {
  return encodeURIComponent(v);
}

function randomString(r: Rng, max: number): string {
  const alphabet = 'abcz-._/ AZ09~%:=,!()\\"\'{}[]\u00e9\u4e2d\ud83d\ude00\u0000\u007f';
  const chars = Array.from(alphabet);
  let s = '';
  const n = r.int(max + 1);
  for (let i = 0; i < n; i++) s += chars[r.int(chars.length)];
  return s;
}

function randomValue(r: Rng, depth = 0): unknown {
  switch (r.int(depth > 3 ? 6 : 9)) {
    case 0:
      return null;
    case 1:
      return r.chance(0.5);
    case 2:
      return r.pick([0, -1, 1.5, 2 ** 53 + 1, 1e308, -0, 3]);
    case 3:
      return randomString(r, 12);
    case 4:
      return r.pick(['', 'fz-a', '$patch', 'delete', 'replace', 'merge', '0', '1']);
    case 5:
      return r.pick([[], {}]);
    case 6:
      return Array.from({ length: r.int(4) }, () => randomValue(r, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      for (let i = r.int(4); i > 0; i--)
        o[r.pick(['a', 'name', 'metadata', 'spec', 'data', '$patch', 'containers', 'labels', randomString(r, 6)])] = randomValue(
          r,
          depth + 1,
        );
      return o;
    }
  }
}

function resourceVersionValue(r: Rng, t: FuzzTarget, v: string): string {
  if (v === 'NOW') return String(t.resourceVersion());
  if (v === 'NEAR') return String(Math.max(1, t.resourceVersion() - r.int(20)));
  // A version the server has not reached: a watch from it waits (3 s) before it is refused.
  if (v === 'FUTURE') return String(t.resourceVersion() + 1 + r.int(3));
  return v;
}

function query(r: Rng, t: FuzzTarget, method: string): string {
  const keys = Object.keys(QUERY_VALUES);
  const parts: string[] = [];
  const n = r.chance(0.3) ? 0 : 1 + r.int(4);
  for (let i = 0; i < n; i++) {
    const key = r.pick(keys);
    let value = r.pick(QUERY_VALUES[key]);
    if (key === 'resourceVersion') value = resourceVersionValue(r, t, value);
    // FUTURE waits 3 s before its answer: rare, and only once per request.
    if (key === 'resourceVersion' && value !== '' && Number(value) > t.resourceVersion() && (method !== 'GET' || !r.chance(0.2)))
      value = '0';
    if (key === 'continue' && value === 'SEEN') value = t.continueTokens.length > 0 ? r.pick(t.continueTokens) : '';
    if (key === 'continue' && value === 'FORGED') value = forgedContinue(r, t);
    const encoded = r.chance(0.1) ? value.replace(/ /g, '+') : r.chance(0.05) ? value : encode(value);
    parts.push(r.chance(0.05) ? key : `${key}=${encoded}`);
  }
  if (r.chance(0.03)) parts.push(r.pick(['&&', '=', '%', '%zz=1', 'a=%ff%fe', `x=${'y'.repeat(2000)}`]));
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}

function resourcePath(r: Rng, res: Resource, t: FuzzTarget, method: string): { path: string; name?: string } {
  let path = res.base;
  if (res.namespaced && !r.chance(0.08)) path += `/namespaces/${r.chance(0.85) ? r.pick(NAMESPACES) : r.pick(ODD_NAMESPACES)}`;
  if (r.chance(0.04)) path = path.replace(/\/namespaces\//, '/watch/namespaces/');
  path += `/${r.chance(0.05) ? r.pick(['widget', 'Widgets', 'wdgts', 'configmap', 'nope']) : res.plural}`;
  let name: string | undefined;
  if (r.chance(method === 'POST' ? 0.15 : 0.75)) {
    name = r.pick(
      res.plural === 'customresourcedefinitions'
        ? ['gadgets.fuzz.rxkube.dev', 'fz-a', 'widgets.other.dev']
        : res.plural === 'namespaces'
          ? ['fuzz', 'fuzz-gone', 'fuzz-b', 'default', 'UPPER']
          : r.chance(0.85)
            ? NAMES
            : ODD_NAMES,
    );
    if (res.plural === 'namespaces' && name === t.keepNamespace) name = 'fuzz';
    path += `/${name}`;
    if (r.chance(0.25))
      path += `/${r.chance(0.8) && res.subresources.length > 0 ? r.pick(res.subresources) : r.pick(['status', 'scale', 'finalize', 'log', 'nope', 'status/x'])}`;
  }
  return { path, name };
}

/** Odd encodings and shapes of a path: `..`, percent-escapes, doubled slashes, very long segments. */
/** The path as a server may resolve it: dot segments (also %2e) resolved, repeated and trailing slashes dropped. */
function resolvedPath(target: string): string {
  let path: string;
  try {
    const absolute = /^[a-z]+:\/\//i.test(target);
    path = (absolute ? new URL(target) : new URL(target.replace(/\/+/g, '/'), 'http://fuzz.invalid')).pathname.replace(/\/+/g, '/');
  } catch {
    return target;
  }
  return path.replace(/\/+$/, '');
}

function mutatePath(r: Rng, path: string): string {
  switch (r.int(10)) {
    case 0:
      return path + '/..';
    case 1:
      return path.replace(/\/([^/]+)$/, '/%2e%2e/$1');
    case 2:
      return path.replace(/\//g, r.chance(0.5) ? '//' : '/./');
    case 3:
      return path + '%2Fextra';
    case 4:
      return path + '/' + 'a'.repeat(r.pick([300, 5000, 20_000]));
    case 5:
      return path.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`);
    case 6:
      return path + r.pick(['%', '%zz', '%00', '%ff', '%c0%af', ';x=y', '#frag', '/']);
    case 7:
      return path.toUpperCase();
    case 8:
      return 'http://127.0.0.1' + path;
    default:
      return path + '/' + encode(randomString(r, 8));
  }
}

function objectFor(r: Rng, res: Resource, name: string | undefined, namespace: string): Record<string, unknown> {
  const metadata: Record<string, unknown> = { name: name ?? `fz-${r.int(5)}` };
  if (r.chance(0.3)) metadata.labels = { fuzz: 'yes', ...(r.chance(0.2) ? { 'bad label!': 'x' } : {}) };
  if (r.chance(0.1)) metadata.namespace = r.chance(0.5) ? namespace : 'other';
  if (r.chance(0.1)) metadata.resourceVersion = r.pick(['1', 'abc', '99999999']);
  if (r.chance(0.05)) metadata.finalizers = ['fuzz.rxkube.dev/keep'];
  if (r.chance(0.05)) metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'fz-a', uid: 'u-1' }];
  const obj: Record<string, unknown> = { apiVersion: res.apiVersion, kind: res.kind, metadata };
  switch (res.kind) {
    case 'ConfigMap':
      obj.data = { a: 'b', [randomString(r, 5) || 'k']: randomString(r, 20) };
      break;
    case 'Secret':
      obj.stringData = { token: 'fuzz' };
      break;
    case 'Deployment':
      obj.spec = {
        replicas: r.pick([1, 3, -1, 'two']),
        selector: { matchLabels: { app: 'fz' } },
        template: { metadata: { labels: { app: r.chance(0.8) ? 'fz' : 'other' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      };
      break;
    case 'Widget':
      obj.spec = { size: r.pick([1, 5, -3, 'big']), word: r.pick(['aaa', 'a'.repeat(29) + '!', 'ok', '']), replicas: r.int(4) };
      // `text` has a CEL rule that grows the string (replace by itself): runtime cost.
      if (r.chance(0.1)) (obj.spec as Record<string, unknown>).text = 'a'.repeat(r.pick([10, 1000, 6000]));
      break;
    case 'Pod':
      obj.spec = { containers: [{ name: 'c', image: 'busybox' }] };
      break;
    case 'Service':
      obj.spec = { ports: [{ port: r.pick([80, 0, 70000]) }], type: r.pick(['ClusterIP', 'Bogus']) };
      break;
    case 'Lease':
      obj.spec = { holderIdentity: 'fuzz', leaseDurationSeconds: r.pick([15, -1]) };
      break;
    case 'CustomResourceDefinition':
      obj.spec = {
        group: r.pick(['gadgets.example', 'fuzz.rxkube.dev', '']),
        scope: r.pick(['Namespaced', 'Cluster', 'Planet']),
        names: { plural: 'gadgets', kind: 'Gadget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'string', pattern: r.pick(['^(a+)+$', '^(?=a)a$', '^\\z', '[']) } },
              },
            },
          },
        ],
      };
      break;
    default:
      break;
  }
  if (r.chance(0.15)) obj.status = randomValue(r);
  return obj;
}

/** Structural mutations of a decoded value. */
function mutateValue(r: Rng, value: Record<string, unknown>): unknown {
  const rounds = r.int(3);
  let v: Record<string, unknown> = value;
  for (let i = 0; i < rounds; i++) {
    switch (r.int(8)) {
      case 0:
        delete v[r.pick(Object.keys(v))];
        break;
      case 1:
        v[r.pick(['apiVersion', 'kind', 'metadata', 'spec', 'data', 'status'])] = randomValue(r);
        break;
      case 2: {
        const meta =
          typeof v.metadata === 'object' && v.metadata !== null && !Array.isArray(v.metadata)
            ? (v.metadata as Record<string, unknown>)
            : (v.metadata = {} as Record<string, unknown>);
        meta[r.pick(['name', 'labels', 'annotations', 'generateName', 'uid', 'managedFields', 'deletionTimestamp'])] = randomValue(r);
        break;
      }
      case 3:
        return randomValue(r);
      case 4:
        v = { ...v, __proto__: { polluted: true }, constructor: { prototype: { x: 1 } } };
        break;
      case 5:
        v.data = { big: 'x'.repeat(r.pick([10, 100_000])) };
        break;
      default:
        break;
    }
  }
  return v;
}

function nestedJson(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** YAML text of a value, sometimes with anchors and aliases (a small alias bomb now and then). */
function yamlOf(r: Rng, value: unknown): string {
  if (r.chance(0.1)) {
    const levels = r.pick([3, 9]);
    let y = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n';
    let prev = 'a';
    for (let i = 0; i < levels; i++) {
      const next = `l${i}`;
      y += `${next}: &${next} [*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev}]\n`;
      prev = next;
    }
    return y;
  }
  if (r.chance(0.1)) return '- '.repeat(r.pick([50, 1200])) + 'x\n';
  if (r.chance(0.1))
    return r.pick([
      '{',
      ': : :',
      '!!binary AAA',
      '!!js/function "x"',
      'a: !!float .nan',
      '? [a]\n: b',
      '%YAML 9.9\n---\na: 1',
      'a: 1\n---\nb: 2',
      'x: &x\n  <<: *x',
    ]);
  // JSON is YAML.
  return JSON.stringify(value, null, r.chance(0.5) ? 2 : undefined);
}

/** Byte-level damage: truncation, flipped or inserted bytes, invalid UTF-8, a BOM. */
function mutateBytes(r: Rng, body: Buffer): Buffer {
  const b = Buffer.from(body);
  switch (r.int(6)) {
    case 0:
      return b.subarray(0, r.int(b.length + 1));
    case 1: {
      for (let i = 0; i < 1 + r.int(4) && b.length > 0; i++) b[r.int(b.length)] = r.int(256);
      return b;
    }
    case 2:
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), b]);
    case 3:
      return Buffer.concat([b.subarray(0, b.length >> 1), Buffer.from([0xc0, 0xff, 0xfe, 0x00]), b.subarray(b.length >> 1)]);
    case 4:
      return Buffer.concat([b, b]);
    default:
      return Buffer.from(r.pick(['null', '[]', '"x"', '1', 'true', '{}', '', ' ', '{"a":1,"a":2}', '{"kind":"Status"}']));
  }
}

/** Bytes that look a little like kubectl's protobuf bodies (the `k8s\0` envelope) or not at all. */
function protobufish(r: Rng, res: Resource): Buffer {
  const kind = Buffer.from(res.kind);
  const apiVersion = Buffer.from(res.apiVersion);
  const typeMeta = Buffer.concat([Buffer.from([0x0a, apiVersion.length]), apiVersion, Buffer.from([0x12, kind.length]), kind]);
  const random = Buffer.from(Array.from({ length: r.int(64) }, () => r.int(256)));
  const unknown = Buffer.concat([Buffer.from([0x0a, typeMeta.length]), typeMeta, Buffer.from([0x12, random.length]), random]);
  return r.pick([
    Buffer.concat([Buffer.from('k8s\0'), unknown]),
    Buffer.concat([Buffer.from('k8s\0'), random]),
    random,
    Buffer.from('k8s'),
    Buffer.concat([Buffer.from('k8s\0\x0a\xff\xff\xff\xff\x0f'), random]),
  ]);
}

/** A continue token taken apart and forged: a guessed id, a negative or fractional offset, another list's token. */
function forgedContinue(r: Rng, t: FuzzTarget): string {
  const seen =
    t.continueTokens.length > 0
      ? (JSON.parse(Buffer.from(r.pick(t.continueTokens), 'base64url').toString()) as Record<string, unknown>)
      : {};
  const token = {
    v: 'meta.k8s.io/v1',
    rv: 1,
    after: '',
    ...seen,
    id: r.chance(0.5) ? String(r.int(5)) : (seen.id ?? '1'),
    offset: r.pick([-1000, 0.5, 0, 1, 1e9, seen.offset ?? 1]),
  };
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

/** A chain of copies (or moves) of a value into itself: each doubles it. */
function copyChain(r: Rng): unknown[] {
  const op = r.pick(['copy', 'copy', 'move']);
  const chain: unknown[] = [{ op: 'add', path: '/x', value: ['x'.repeat(r.pick([1, 64, 1000]))] }];
  for (let i = r.pick([10, 30, 45]); i > 0; i--) chain.push({ op, from: '/x', path: r.chance(0.9) ? '/x/-' : '/x/0' });
  return chain;
}

function jsonPatch(r: Rng): unknown {
  if (r.chance(0.1)) return copyChain(r);
  const paths = [
    '/metadata/labels/a',
    '/metadata/labels',
    '/data/x',
    '/data',
    '/spec/replicas',
    '/spec/template/spec/containers/0/image',
    '/metadata/name',
    '/status',
    '/metadata/finalizers/-',
    '/a~1b',
    '/~2',
    '',
    '/',
    'nope',
    '/spec/size',
    '/metadata/resourceVersion',
  ];
  const ops = Array.from({ length: 1 + r.int(4) }, () => {
    const op: Record<string, unknown> = { op: r.pick(['add', 'remove', 'replace', 'move', 'copy', 'test', 'bogus']), path: r.pick(paths) };
    if (r.chance(0.8)) op.value = randomValue(r);
    if (r.chance(0.3)) op.from = r.pick(paths);
    return op;
  });
  return r.chance(0.1) ? randomValue(r) : ops;
}

/** A keyed-list merge of thousands of items, in another order than the live list. */
function largeStrategicPatch(r: Rng): unknown {
  const n = r.pick([1000, 5000, 20_000]);
  const env = Array.from({ length: n }, (_, i) => ({ name: `E${r.chance(0.5) ? n - i : i}`, value: 'v' }));
  return {
    spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx', env }] } } },
    metadata: { finalizers: Array.from({ length: n / 10 }, (_, i) => `f/${i}`) },
  };
}

function strategicPatch(r: Rng): unknown {
  if (r.chance(0.05)) return largeStrategicPatch(r);
  return r.pick([
    { metadata: { labels: { a: 'b' } } },
    { metadata: { labels: { $patch: 'delete' } } },
    { metadata: { finalizers: ['x'], $deleteFromPrimitiveList: { finalizers: ['x'] } } },
    {
      spec: {
        template: {
          spec: {
            containers: [
              { name: 'c', image: 'busybox' },
              { name: 'c', $patch: 'delete' },
            ],
          },
        },
      },
    },
    { spec: { template: { spec: { $setElementOrder: { containers: [{ name: 'z' }] }, containers: [{ name: 'z', image: 'x' }] } } } },
    { spec: { $retainKeys: ['replicas'], replicas: 2 } },
    { $patch: 'replace' },
    { $patch: r.pick(['delete', 'bogus']) },
    { data: { a: null } },
    randomValue(r),
  ]);
}

function bodyFor(r: Rng, method: string, contentType: string, res: Resource, name: string | undefined, namespace: string): Buffer {
  if (r.chance(0.01)) return Buffer.alloc(3 * 1024 * 1024 + 10, 0x20); // over the 3 MiB limit: 413
  if (r.chance(0.03)) return Buffer.from(nestedJson(r.pick([999, 1001, 3000, 10_001])));
  if (contentType === 'application/vnd.kubernetes.protobuf') return protobufish(r, res);
  let value: unknown;
  if (method === 'DELETE') {
    value = r.pick([
      { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: r.pick(['Foreground', 'Orphan', 'Nope']) },
      { preconditions: { uid: 'u-1', resourceVersion: '1' } },
      { dryRun: ['All'] },
      { dryRun: ['Bogus'] },
      { orphanDependents: true },
      randomValue(r),
    ]);
  } else if (contentType === 'application/json-patch+json') value = jsonPatch(r);
  else if (contentType === 'application/strategic-merge-patch+json') value = strategicPatch(r);
  else if (contentType === 'application/merge-patch+json')
    value = r.chance(0.5) ? { metadata: { labels: { fuzz: r.pick(['yes', null, 1]) } }, data: { a: r.pick(['b', null]) } } : randomValue(r);
  else value = objectFor(r, res, name, namespace);
  if (r.chance(0.35) && typeof value === 'object' && value !== null && !Array.isArray(value))
    value = mutateValue(r, value as Record<string, unknown>);
  let text: Buffer = Buffer.from(contentType.includes('yaml') ? yamlOf(r, value) : (JSON.stringify(value) ?? 'null'));
  if (r.chance(0.15)) text = mutateBytes(r, text);
  return text;
}

/** A request line or head Node's parser refuses: the bytes no HTTP client would send. */
function malformed(r: Rng, t: FuzzTarget): FuzzRequest {
  const host = `Host: ${t.host}`;
  const line = r.pick([
    'GET /a b c HTTP/1.1',
    'GET /api\x01/v1 HTTP/1.1',
    'GET / HTTP/9.9',
    'GET / HTTP/1.1 extra',
    'GET',
    'GET /api/v1/namespaces\u00ff HTTP/1.1',
    ' GET / HTTP/1.1',
    'GET / http/1.1',
    'PRI * HTTP/2.0\r\n\r\nSM',
    '\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03',
    'GET / HTTP/1.1\r\nHo st: x',
    'GET / HTTP/1.1\r\nX-A: b\x00c',
    'GET / HTTP/1.1\r\n: empty-name',
    'GET / HTTP/1.1\r\nX-Fold: a\r\n folded',
    `GET /${'a'.repeat(20_000)} HTTP/1.1`,
  ]);
  return {
    category: 'malformed request line or head',
    method: '',
    target: '',
    headers: [],
    body: Buffer.alloc(0),
    framing: 'length',
    requestLine: `${line}\r\n${host}`,
    injected: false,
  };
}

/**
 * A batch of well-formed requests on one object no other request names (create, read, update,
 * patch, list, delete in a random order), plus reads of other paths between them, written on one
 * connection before any answer is read. What each answer must be follows from the requests
 * before it on the same connection, so an answer out of order, answered for another request or
 * missing shows.
 */
function pipelined(r: Rng, t: FuzzTarget): FuzzRequest {
  const namespace = t.pipelineNamespace;
  const name = `fz-pipe-${r.int(1e9)}`;
  const base = `/api/v1/namespaces/${namespace}/configmaps`;
  const headers = (type?: string): Array<[string, string]> => [
    ['Host', t.host],
    ['Authorization', `Bearer ${t.token}`],
    ...(type ? [['Content-Type', type] as [string, string]] : []),
  ];
  const step = (
    method: string,
    target: string,
    body: unknown,
    type: string | undefined,
    expect: PipelinedStep['expect'],
  ): PipelinedStep => ({
    request: {
      category: 'pipelined',
      method,
      target,
      headers: headers(body === undefined ? undefined : type),
      body: body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(body)),
      framing: r.chance(0.8) ? 'length' : 'chunked',
      injected: false,
      keepAlive: true,
    },
    expect,
  });
  let value: string | undefined;
  const steps: PipelinedStep[] = [];
  for (let i = 2 + r.int(7); i > 0; i--) {
    const v = String(r.int(1000));
    const exists = value !== undefined;
    switch (r.pick(['create', 'create', 'get', 'get', 'put', 'patch', 'list', 'delete', 'other'])) {
      case 'create':
        steps.push(
          step(
            'POST',
            base,
            { metadata: { name }, data: { v } },
            'application/json',
            exists ? { status: 409 } : { status: 201, name, value: v },
          ),
        );
        if (!exists) value = v;
        break;
      case 'get':
        steps.push(step('GET', `${base}/${name}`, undefined, undefined, exists ? { status: 200, name, value } : { status: 404, name }));
        break;
      case 'put':
        steps.push(
          step(
            'PUT',
            `${base}/${name}`,
            { metadata: { name }, data: { v } },
            'application/json',
            exists ? { status: 200, name, value: v } : { status: 404, name },
          ),
        );
        if (exists) value = v;
        break;
      case 'patch':
        steps.push(
          step(
            'PATCH',
            `${base}/${name}`,
            { data: { v } },
            r.pick(['application/merge-patch+json', 'application/strategic-merge-patch+json']),
            exists ? { status: 200, name, value: v } : { status: 404, name },
          ),
        );
        if (exists) value = v;
        break;
      case 'list':
        steps.push(
          step('GET', `${base}?fieldSelector=metadata.name%3D${name}`, undefined, undefined, { status: 200, items: exists ? 1 : 0 }),
        );
        break;
      case 'delete':
        steps.push(step('DELETE', `${base}/${name}`, undefined, undefined, exists ? { status: 200 } : { status: 404, name }));
        value = undefined;
        break;
      default: {
        const other = `${name}-other-${r.int(100)}`;
        steps.push(
          r.chance(0.5)
            ? step('GET', '/version', undefined, undefined, { status: 200 })
            : step('GET', `${base}/${other}`, undefined, undefined, { status: 404, name: other }),
        );
      }
    }
  }
  const last = steps[steps.length - 1];
  last.request.keepAlive = false;
  const first = steps[0].request;
  return { ...first, category: 'pipelined', keepAlive: false, pipeline: steps };
}

export function generate(r: Rng, t: FuzzTarget): FuzzRequest {
  if (r.chance(0.04)) return malformed(r, t);
  if (r.chance(0.05)) return pipelined(r, t);
  let method = r.chance(0.08) ? r.pick(ODD_METHODS) : r.pick(METHODS);
  let target: string;
  let category: string;
  const res = r.pick(RESOURCES);
  let name: string | undefined;
  let namespace = 'default';
  if (r.chance(0.12)) {
    target = r.pick(OTHER_PATHS);
    category = 'discovery and other paths';
  } else {
    const p = resourcePath(r, res, t, method);
    target = p.path;
    name = p.name;
    namespace = /\/namespaces\/([^/]*)\//.exec(target)?.[1] ?? 'default';
    category = method === 'PATCH' ? 'patch' : 'resource';
  }
  if (r.chance(0.08)) {
    target = mutatePath(r, target);
    category = 'odd path';
  }
  // Writes to whole collections of namespaces or CRDs would take the fixtures with them, also
  // through a path that only becomes the collection once the server resolves it (`crds/x/..`).
  if (method === 'DELETE' && /\/(namespaces|customresourcedefinitions)$/i.test(resolvedPath(target))) method = 'GET';
  if (target.includes(`/namespaces/${t.keepNamespace}`)) target = target.replace(`/namespaces/${t.keepNamespace}`, '/namespaces/fuzz');
  target += query(r, t, method);

  const headers: Array<[string, string]> = [
    ['Host', r.chance(0.03) ? r.pick(['evil.example', 'localhost.evil.example:80', '', '[::1', 'a b']) : t.host],
  ];
  if (!r.chance(0.04))
    headers.push(['Authorization', r.chance(0.03) ? r.pick(['Bearer wrong', 'Basic eDp5', 'Bearer', '']) : `Bearer ${t.token}`]);
  if (r.chance(0.6)) headers.push(['Accept', r.pick(ACCEPTS)]);
  if (r.chance(0.03)) headers.push(['Origin', r.pick(['http://evil.example', `http://${t.host}`, 'null', '::'])]);
  if (r.chance(0.03)) headers.push(['Expect', r.pick(['100-continue', 'magic'])]);
  if (r.chance(0.02)) headers.push(['Connection', 'Upgrade'], ['Upgrade', r.pick(['websocket', 'h2c', 'SPDY/3.1'])]);
  if (r.chance(0.02)) headers.push(['X-Big', 'x'.repeat(r.pick([1000, 20_000]))]);
  // eslint-disable-next-line no-control-regex -- the control characters are what it replaces
  if (r.chance(0.02)) headers.push(['User-Agent', randomString(r, 30).replace(/[\r\n\u0000-\u001f\u007f-\uffff]/g, '?')]);

  let body: Buffer = Buffer.alloc(0);
  const sendsBody = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method.toUpperCase()) ? !r.chance(0.05) : r.chance(0.05);
  if (sendsBody) {
    const contentType = method === 'PATCH' && r.chance(0.85) ? r.pick(PATCH_TYPES) : r.pick(BODY_TYPES);
    if (contentType !== '' || r.chance(0.5)) headers.push(['Content-Type', contentType]);
    body = bodyFor(r, method.toUpperCase(), contentType, res, name, namespace);
    if (method === 'PATCH' && contentType === 'application/apply-patch+yaml' && r.chance(0.5))
      target += (target.includes('?') ? '&' : '?') + 'fieldManager=fuzz';
  }
  const framing: Framing = r.chance(0.93)
    ? r.chance(0.9)
      ? 'length'
      : 'chunked'
    : r.pick(['cl-short', 'cl-long', 'cl-nan', 'te-and-cl', 'te-gzip', 'chunk-broken'] as const);
  if (framing !== 'length') category = 'framing lies';
  const injected = name !== undefined && t.faultyNames.includes(name) && target.includes(`/${name}`);
  return { category, method, target, headers, body, framing, injected };
}

/** The request's bytes on the wire. */
export function serialize(req: FuzzRequest): Buffer {
  if (req.pipeline) return Buffer.concat(req.pipeline.map((s) => serialize(s.request)));
  const head = req.requestLine ?? `${req.method} ${req.target} HTTP/1.1`;
  const headers = req.headers.map(([k, v]) => `${k}: ${v}`);
  if (!req.keepAlive) headers.push('Connection: close');
  const b = req.body;
  let payload: Buffer = b;
  switch (req.framing) {
    case 'length':
      if (b.length > 0 || req.requestLine === undefined) headers.push(`Content-Length: ${b.length}`);
      break;
    case 'chunked':
      headers.push('Transfer-Encoding: chunked');
      payload =
        b.length === 0
          ? Buffer.from('0\r\n\r\n')
          : Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n0\r\n\r\n')]);
      break;
    case 'cl-short':
      headers.push(`Content-Length: ${Math.max(0, b.length >> 1)}`);
      break;
    case 'cl-long':
      headers.push(`Content-Length: ${b.length + 100}`);
      break;
    case 'cl-nan':
      headers.push('Content-Length: 12abc');
      break;
    case 'te-and-cl':
      headers.push('Transfer-Encoding: chunked', `Content-Length: ${b.length}`);
      break;
    case 'te-gzip':
      headers.push('Transfer-Encoding: gzip');
      break;
    case 'chunk-broken':
      headers.push('Transfer-Encoding: chunked');
      payload = Buffer.concat([Buffer.from('zz\r\n'), b, Buffer.from('\r\n')]);
      break;
  }
  return Buffer.concat([Buffer.from(`${head}\r\n${headers.join('\r\n')}\r\n\r\n`, 'latin1'), payload]);
}
