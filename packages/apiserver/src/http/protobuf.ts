/**
 * Decoding of the Kubernetes protobuf wire format for request bodies, for what kubectl's
 * imperative commands send (`kubectl create namespace|configmap|secret|serviceaccount|service|
 * deployment|role|clusterrole|rolebinding|clusterrolebinding|token`, `kubectl run`, `kubectl auth`): those use typed clients that post `application/vnd.kubernetes.protobuf`.
 *
 * Only the fields of those kinds that kubectl sets are described. Go's generated code writes every
 * non-pointer field, empty or not, so an undescribed field that is empty is skipped; an
 * undescribed field with a value is a 415 naming it (send JSON: `kubectl create -f`, `apply -f`).
 * Responses are always JSON (kubectl accepts it).
 */
import { ApiError } from '../base/errors.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../base/json.js';

type Scalar = 'string' | 'int' | 'bool' | 'bytes' | 'intOrString' | 'quantity';

interface FieldSpec {
  name: string;
  type: Scalar | Schema;
  repeated?: boolean;
  /** A map<string, T> (repeated key/value entries). */
  map?: Scalar;
  /** A pointer in Go: zero is a value to keep (replicas: 0). */
  keepZero?: boolean;
}

interface Schema {
  readonly fields: Readonly<Record<number, FieldSpec>>;
}

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

const s = (fields: Record<number, FieldSpec>): Schema => ({ fields });

const ownerReference = s({
  1: { name: 'kind', type: 'string' },
  3: { name: 'name', type: 'string' },
  4: { name: 'uid', type: 'string' },
  5: { name: 'apiVersion', type: 'string' },
  6: { name: 'controller', type: 'bool', keepZero: true },
  7: { name: 'blockOwnerDeletion', type: 'bool', keepZero: true },
});

const objectMeta = s({
  1: { name: 'name', type: 'string' },
  2: { name: 'generateName', type: 'string' },
  3: { name: 'namespace', type: 'string' },
  5: { name: 'uid', type: 'string' },
  6: { name: 'resourceVersion', type: 'string' },
  11: { name: 'labels', type: 'string', map: 'string' },
  12: { name: 'annotations', type: 'string', map: 'string' },
  13: { name: 'ownerReferences', type: ownerReference, repeated: true },
  14: { name: 'finalizers', type: 'string', repeated: true },
});

const labelSelector = s({
  1: { name: 'matchLabels', type: 'string', map: 'string' },
  2: {
    name: 'matchExpressions',
    repeated: true,
    type: s({
      1: { name: 'key', type: 'string' },
      2: { name: 'operator', type: 'string' },
      3: { name: 'values', type: 'string', repeated: true },
    }),
  },
});

const container = s({
  1: { name: 'name', type: 'string' },
  2: { name: 'image', type: 'string' },
  3: { name: 'command', type: 'string', repeated: true },
  4: { name: 'args', type: 'string', repeated: true },
  5: { name: 'workingDir', type: 'string' },
  6: {
    name: 'ports',
    repeated: true,
    type: s({
      1: { name: 'name', type: 'string' },
      2: { name: 'hostPort', type: 'int' },
      3: { name: 'containerPort', type: 'int' },
      4: { name: 'protocol', type: 'string' },
      5: { name: 'hostIP', type: 'string' },
    }),
  },
  7: { name: 'env', repeated: true, type: s({ 1: { name: 'name', type: 'string' }, 2: { name: 'value', type: 'string' } }) },
  8: {
    name: 'resources',
    type: s({ 1: { name: 'limits', type: 'string', map: 'quantity' }, 2: { name: 'requests', type: 'string', map: 'quantity' } }),
  },
  13: { name: 'terminationMessagePath', type: 'string' },
  14: { name: 'imagePullPolicy', type: 'string' },
  16: { name: 'stdin', type: 'bool' },
  17: { name: 'stdinOnce', type: 'bool' },
  18: { name: 'tty', type: 'bool' },
  20: { name: 'terminationMessagePolicy', type: 'string' },
});

const podSpec = s({
  2: { name: 'containers', type: container, repeated: true },
  3: { name: 'restartPolicy', type: 'string' },
  4: { name: 'terminationGracePeriodSeconds', type: 'int', keepZero: true },
  6: { name: 'dnsPolicy', type: 'string' },
  7: { name: 'nodeSelector', type: 'string', map: 'string' },
  8: { name: 'serviceAccountName', type: 'string' },
  10: { name: 'nodeName', type: 'string' },
  11: { name: 'hostNetwork', type: 'bool' },
  19: { name: 'schedulerName', type: 'string' },
  20: { name: 'initContainers', type: container, repeated: true },
});

const podTemplateSpec = s({ 1: { name: 'metadata', type: objectMeta }, 2: { name: 'spec', type: podSpec } });

const intOrStringFields = s({
  1: { name: 'type', type: 'int' },
  2: { name: 'intVal', type: 'int' },
  3: { name: 'strVal', type: 'string' },
});

const policyRule = s({
  1: { name: 'verbs', type: 'string', repeated: true },
  2: { name: 'apiGroups', type: 'string', repeated: true },
  3: { name: 'resources', type: 'string', repeated: true },
  4: { name: 'resourceNames', type: 'string', repeated: true },
  5: { name: 'nonResourceURLs', type: 'string', repeated: true },
});

const roleBinding = s({
  1: { name: 'metadata', type: objectMeta },
  2: {
    name: 'subjects',
    repeated: true,
    type: s({
      1: { name: 'kind', type: 'string' },
      2: { name: 'apiGroup', type: 'string' },
      3: { name: 'name', type: 'string' },
      4: { name: 'namespace', type: 'string' },
    }),
  },
  3: {
    name: 'roleRef',
    type: s({ 1: { name: 'apiGroup', type: 'string' }, 2: { name: 'kind', type: 'string' }, 3: { name: 'name', type: 'string' } }),
  },
});

const resourceAttributes = s({
  1: { name: 'namespace', type: 'string' },
  2: { name: 'verb', type: 'string' },
  3: { name: 'group', type: 'string' },
  4: { name: 'version', type: 'string' },
  5: { name: 'resource', type: 'string' },
  6: { name: 'subresource', type: 'string' },
  7: { name: 'name', type: 'string' },
});

const nonResourceAttributes = s({ 1: { name: 'path', type: 'string' }, 2: { name: 'verb', type: 'string' } });

const jobSpec = s({
  1: { name: 'parallelism', type: 'int', keepZero: true },
  2: { name: 'completions', type: 'int', keepZero: true },
  3: { name: 'activeDeadlineSeconds', type: 'int' },
  4: { name: 'selector', type: labelSelector },
  5: { name: 'manualSelector', type: 'bool' },
  6: { name: 'template', type: podTemplateSpec },
  7: { name: 'backoffLimit', type: 'int', keepZero: true },
  8: { name: 'ttlSecondsAfterFinished', type: 'int', keepZero: true },
  9: { name: 'completionMode', type: 'string' },
  10: { name: 'suspend', type: 'bool' },
});

const KINDS: Record<string, Schema> = {
  Job: s({ 1: { name: 'metadata', type: objectMeta }, 2: { name: 'spec', type: jobSpec } }),
  CronJob: s({
    1: { name: 'metadata', type: objectMeta },
    2: {
      name: 'spec',
      type: s({
        1: { name: 'schedule', type: 'string' },
        2: { name: 'startingDeadlineSeconds', type: 'int' },
        3: { name: 'concurrencyPolicy', type: 'string' },
        4: { name: 'suspend', type: 'bool' },
        5: { name: 'jobTemplate', type: s({ 1: { name: 'metadata', type: objectMeta }, 2: { name: 'spec', type: jobSpec } }) },
        6: { name: 'successfulJobsHistoryLimit', type: 'int', keepZero: true },
        7: { name: 'failedJobsHistoryLimit', type: 'int', keepZero: true },
        8: { name: 'timeZone', type: 'string' },
      }),
    },
  }),
  Namespace: s({
    1: { name: 'metadata', type: objectMeta },
    2: { name: 'spec', type: s({ 1: { name: 'finalizers', type: 'string', repeated: true } }) },
  }),
  ConfigMap: s({
    1: { name: 'metadata', type: objectMeta },
    2: { name: 'data', type: 'string', map: 'string' },
    3: { name: 'binaryData', type: 'string', map: 'bytes' },
    4: { name: 'immutable', type: 'bool', keepZero: true },
  }),
  Secret: s({
    1: { name: 'metadata', type: objectMeta },
    2: { name: 'data', type: 'string', map: 'bytes' },
    3: { name: 'type', type: 'string' },
    4: { name: 'stringData', type: 'string', map: 'string' },
    5: { name: 'immutable', type: 'bool', keepZero: true },
  }),
  ServiceAccount: s({ 1: { name: 'metadata', type: objectMeta } }),
  Service: s({
    1: { name: 'metadata', type: objectMeta },
    2: {
      name: 'spec',
      type: s({
        1: {
          name: 'ports',
          repeated: true,
          type: s({
            1: { name: 'name', type: 'string' },
            2: { name: 'protocol', type: 'string' },
            3: { name: 'port', type: 'int' },
            4: { name: 'targetPort', type: 'intOrString' },
            5: { name: 'nodePort', type: 'int' },
          }),
        },
        2: { name: 'selector', type: 'string', map: 'string' },
        3: { name: 'clusterIP', type: 'string' },
        4: { name: 'type', type: 'string' },
        10: { name: 'externalName', type: 'string' },
      }),
    },
  }),
  Deployment: s({
    1: { name: 'metadata', type: objectMeta },
    2: {
      name: 'spec',
      type: s({
        1: { name: 'replicas', type: 'int', keepZero: true },
        2: { name: 'selector', type: labelSelector },
        3: { name: 'template', type: podTemplateSpec },
        4: {
          name: 'strategy',
          type: s({
            1: { name: 'type', type: 'string' },
            2: {
              name: 'rollingUpdate',
              type: s({ 1: { name: 'maxUnavailable', type: 'intOrString' }, 2: { name: 'maxSurge', type: 'intOrString' } }),
            },
          }),
        },
        5: { name: 'minReadySeconds', type: 'int' },
        6: { name: 'revisionHistoryLimit', type: 'int', keepZero: true },
        7: { name: 'paused', type: 'bool' },
        9: { name: 'progressDeadlineSeconds', type: 'int', keepZero: true },
      }),
    },
  }),
  Pod: s({ 1: { name: 'metadata', type: objectMeta }, 2: { name: 'spec', type: podSpec } }),
  // kubectl create role|clusterrole|rolebinding|clusterrolebinding|token, kubectl auth can-i|whoami
  Role: s({ 1: { name: 'metadata', type: objectMeta }, 2: { name: 'rules', type: policyRule, repeated: true } }),
  ClusterRole: s({
    1: { name: 'metadata', type: objectMeta },
    2: { name: 'rules', type: policyRule, repeated: true },
    3: { name: 'aggregationRule', type: s({ 1: { name: 'clusterRoleSelectors', type: labelSelector, repeated: true } }) },
  }),
  RoleBinding: roleBinding,
  ClusterRoleBinding: roleBinding,
  TokenRequest: s({
    1: { name: 'metadata', type: objectMeta },
    2: {
      name: 'spec',
      type: s({
        1: { name: 'audiences', type: 'string', repeated: true },
        3: {
          name: 'boundObjectRef',
          type: s({
            1: { name: 'kind', type: 'string' },
            2: { name: 'apiVersion', type: 'string' },
            3: { name: 'name', type: 'string' },
            4: { name: 'uid', type: 'string' },
          }),
        },
        4: { name: 'expirationSeconds', type: 'int' },
      }),
    },
  }),
  SelfSubjectAccessReview: s({
    1: { name: 'metadata', type: objectMeta },
    2: {
      name: 'spec',
      type: s({
        1: { name: 'resourceAttributes', type: resourceAttributes },
        2: { name: 'nonResourceAttributes', type: nonResourceAttributes },
      }),
    },
  }),
  SelfSubjectRulesReview: s({
    1: { name: 'metadata', type: objectMeta },
    2: { name: 'spec', type: s({ 1: { name: 'namespace', type: 'string' } }) },
  }),
  SelfSubjectReview: s({ 1: { name: 'metadata', type: objectMeta } }),
};

class Reader {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error('truncated varint');
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
    }
  }

  bytes(): Buffer {
    const len = Number(this.varint());
    if (this.pos + len > this.buf.length) throw new Error('truncated field');
    const out = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return out;
  }

  /** Skips a field; true when it held only zero values (what Go writes for unset non-pointer fields). */
  skip(wireType: number): boolean {
    switch (wireType) {
      case 0:
        return this.varint() === 0n;
      case 1:
        this.pos += 8;
        return false;
      case 2:
        return isEmptyMessage(this.bytes());
      case 5:
        this.pos += 4;
        return false;
      default:
        throw new Error(`unsupported wire type ${wireType}`);
    }
  }
}

function isEmptyMessage(buf: Buffer): boolean {
  if (buf.length === 0) return true;
  try {
    const r = new Reader(buf);
    while (!r.done) {
      const key = r.varint();
      if (key >> 3n === 0n || !r.skip(Number(key & 7n))) return false;
    }
    return true;
  } catch {
    return false;
  }
}

function unsupported(path: string): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the embedded API server does not decode protobuf field ${path}; send the object as JSON instead (kubectl create -f FILE or kubectl apply -f FILE)`,
    {},
  );
}

function toInt(v: bigint): number {
  // int32/int64 written as varints: negative values are two's complement 64-bit.
  return Number(BigInt.asIntN(64, v));
}

function scalar(type: Scalar, r: Reader, wireType: number, path: string): JsonValue {
  switch (type) {
    case 'string':
      return r.bytes().toString('utf8');
    case 'bytes':
      return r.bytes().toString('base64');
    case 'int':
      return toInt(r.varint());
    case 'bool':
      return r.varint() !== 0n;
    case 'quantity': {
      const q = decodeMessage(r.bytes(), s({ 1: { name: 'string', type: 'string' } }), path);
      return typeof q.string === 'string' ? q.string : '0';
    }
    case 'intOrString': {
      const v = decodeMessage(r.bytes(), intOrStringFields, path);
      return v.type === 1 ? (v.strVal ?? '') : (v.intVal ?? 0);
    }
  }
  void wireType;
}

function isZero(v: JsonValue): boolean {
  return v === '' || v === 0 || v === false || (isJsonObject(v) && Object.keys(v).length === 0);
}

function decodeMessage(buf: Buffer, schema: Schema, path: string): JsonObject {
  const r = new Reader(buf);
  const out: JsonObject = {};
  while (!r.done) {
    const key = r.varint();
    const num = Number(key >> 3n);
    const wireType = Number(key & 7n);
    const field = schema.fields[num];
    const at = `${path}.${field?.name ?? `#${num}`}`;
    if (!field) {
      if (!r.skip(wireType)) throw unsupported(at);
      continue;
    }
    if (field.map) {
      const entry = decodeMapEntry(r.bytes(), field.map, at);
      const map = (out[field.name] ??= {}) as JsonObject;
      map[entry[0]] = entry[1];
      continue;
    }
    const value = typeof field.type === 'string' ? scalar(field.type, r, wireType, at) : decodeMessage(r.bytes(), field.type, at);
    if (field.repeated) {
      const list = (out[field.name] ??= []) as JsonValue[];
      list.push(value);
    } else if (field.keepZero || !isZero(value)) {
      out[field.name] = value;
    }
  }
  return out;
}

function decodeMapEntry(buf: Buffer, valueType: Scalar, path: string): [string, JsonValue] {
  const r = new Reader(buf);
  let key = '';
  let value: JsonValue = valueType === 'bytes' || valueType === 'string' ? '' : null;
  while (!r.done) {
    const tag = r.varint();
    const num = Number(tag >> 3n);
    const wireType = Number(tag & 7n);
    if (num === 1) key = r.bytes().toString('utf8');
    else if (num === 2) value = scalar(valueType, r, wireType, path);
    else r.skip(wireType);
  }
  return [key, value];
}

export const PROTOBUF = 'application/vnd.kubernetes.protobuf';

/** The JSON object a protobuf request body encodes (envelope `k8s\0` + runtime.Unknown). */
export function decodeProtobufBody(raw: Buffer): JsonObject {
  if (raw.length < 4 || !raw.subarray(0, 4).equals(MAGIC)) {
    throw new ApiError(400, 'BadRequest', 'the protobuf body does not start with the Kubernetes envelope prefix "k8s\\0"', {});
  }
  try {
    const unknown = decodeMessage(
      raw.subarray(4),
      s({
        1: { name: 'typeMeta', type: s({ 1: { name: 'apiVersion', type: 'string' }, 2: { name: 'kind', type: 'string' } }) },
        2: { name: 'raw', type: 'bytes' },
        3: { name: 'contentEncoding', type: 'string' },
        4: { name: 'contentType', type: 'string' },
      }),
      'Unknown',
    );
    const typeMeta = (unknown.typeMeta ?? {}) as JsonObject;
    const kind = String(typeMeta.kind ?? '');
    const schema = KINDS[kind];
    if (!schema) {
      throw new ApiError(
        415,
        'UnsupportedMediaType',
        `the embedded API server does not decode protobuf ${kind || 'objects without a kind'}; send JSON instead`,
        {},
      );
    }
    const obj = decodeMessage(Buffer.from(String(unknown.raw ?? ''), 'base64'), schema, kind);
    return { apiVersion: String(typeMeta.apiVersion ?? ''), kind, ...obj };
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError(400, 'BadRequest', `the protobuf body could not be decoded: ${(err as Error).message}`, {});
  }
}
