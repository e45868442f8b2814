/**
 * The protobuf form of a Swagger 2.0 document (gnostic's openapi_v2.Document, media type
 * `application/com.github.proto-openapi.spec.v2@v1.0+protobuf`): client-go asks for nothing else
 * at /openapi/v2, so `kubectl explain --output=plaintext-openapiv2` and kubectl's OpenAPI v2 look-ups
 * read this. Values without a typed field (defaults, enums, vendor extensions) travel as gnostic's
 * `Any { yaml }`, which holds them as JSON (a subset of YAML), as kubectl parses them.
 */
import type { JsonObject, JsonValue } from '../base/json.js';
import { isJsonObject } from '../base/json.js';

type Wire = typeof import('@bufbuild/protobuf/wire');

/**
 * Writes one message over @bufbuild/protobuf's BinaryWriter, skipping proto3 defaults; nested
 * messages are forks of the same buffer.
 */
class Writer {
  constructor(
    private readonly wire: Wire,
    private readonly out = new wire.BinaryWriter(),
  ) {}

  string(field: number, v: JsonValue | undefined): void {
    if (typeof v === 'string' && v !== '') this.out.tag(field, this.wire.WireType.LengthDelimited).string(v);
  }

  strings(field: number, v: JsonValue | undefined): void {
    if (Array.isArray(v)) for (const s of v) this.string(field, s);
  }

  bool(field: number, v: JsonValue | undefined): void {
    if (v === true) this.out.tag(field, this.wire.WireType.Varint).bool(true);
  }

  /** A bool in a oneof: written even when false. */
  oneofBool(field: number, v: boolean): void {
    this.out.tag(field, this.wire.WireType.Varint).bool(v);
  }

  int(field: number, v: JsonValue | undefined): void {
    if (typeof v === 'number' && v !== 0) this.out.tag(field, this.wire.WireType.Varint).int64(Math.trunc(v));
  }

  double(field: number, v: JsonValue | undefined): void {
    if (typeof v === 'number' && v !== 0) this.out.tag(field, this.wire.WireType.Bit64).double(v);
  }

  message(field: number, write: (w: Writer) => void): void {
    this.out.tag(field, this.wire.WireType.LengthDelimited).fork();
    write(this);
    this.out.join();
  }

  finish(): Buffer {
    const bytes = this.out.finish();
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
}

const obj = (v: JsonValue | undefined): JsonObject => (isJsonObject(v) ? v : {});

/** gnostic Any: the value as YAML text (JSON is YAML). */
function any(w: Writer, field: number, v: JsonValue): void {
  w.message(field, (a) => a.string(2, `${JSON.stringify(v)}\n`));
}

/** `x-...` keys as repeated NamedAny. */
function vendorExtensions(w: Writer, field: number, o: JsonObject): void {
  for (const [name, value] of Object.entries(o)) {
    if (!name.startsWith('x-') || value === undefined) continue;
    w.message(field, (n) => {
      n.string(1, name);
      any(n, 2, value);
    });
  }
}

/** A (repeated) map of name → message, as gnostic's Named* entries. */
function named(w: Writer, field: number, entries: JsonObject, write: (w: Writer, v: JsonValue) => void): void {
  for (const [name, value] of Object.entries(entries)) {
    w.message(field, (n) => {
      n.string(1, name);
      n.message(2, (v) => write(v, value));
    });
  }
}

function schema(w: Writer, v: JsonValue): void {
  const s = obj(v);
  w.string(1, s.$ref);
  w.string(2, s.format);
  w.string(3, s.title);
  w.string(4, s.description);
  if (s.default !== undefined) any(w, 5, s.default);
  w.double(6, s.multipleOf);
  w.double(7, s.maximum);
  w.bool(8, s.exclusiveMaximum);
  w.double(9, s.minimum);
  w.bool(10, s.exclusiveMinimum);
  w.int(11, s.maxLength);
  w.int(12, s.minLength);
  w.string(13, s.pattern);
  w.int(14, s.maxItems);
  w.int(15, s.minItems);
  w.bool(16, s.uniqueItems);
  w.int(17, s.maxProperties);
  w.int(18, s.minProperties);
  w.strings(19, s.required);
  if (Array.isArray(s.enum)) for (const e of s.enum) any(w, 20, e);
  if (typeof s.additionalProperties === 'boolean') {
    const allowed = s.additionalProperties;
    w.message(21, (a) => a.oneofBool(2, allowed));
  } else if (isJsonObject(s.additionalProperties)) {
    const inner = s.additionalProperties;
    w.message(21, (a) => a.message(1, (x) => schema(x, inner)));
  }
  if (typeof s.type === 'string') w.message(22, (t) => t.string(1, s.type));
  if (isJsonObject(s.items)) {
    const items = s.items;
    w.message(23, (i) => i.message(1, (x) => schema(x, items)));
  }
  if (Array.isArray(s.allOf)) for (const a of s.allOf) w.message(24, (x) => schema(x, a));
  if (isJsonObject(s.properties)) {
    const props = s.properties;
    w.message(25, (p) => named(p, 1, props, schema));
  }
  w.bool(27, s.readOnly);
  vendorExtensions(w, 31, s);
}

function parameter(w: Writer, v: JsonValue): void {
  const p = obj(v);
  w.message(1, (param) => {
    if (p.in === 'body') {
      param.message(1, (b) => {
        b.string(1, p.description);
        b.string(2, p.name);
        b.string(3, p.in);
        b.bool(4, p.required);
        if (isJsonObject(p.schema)) b.message(5, (x) => schema(x, p.schema));
      });
      return;
    }
    // NonBodyParameter: query (3) or path (4) sub-schema; their `type` and `uniqueItems` fields differ by one.
    const path = p.in === 'path';
    param.message(2, (nb) =>
      nb.message(path ? 4 : 3, (q) => {
        q.bool(1, p.required);
        q.string(2, p.in);
        q.string(3, p.description);
        q.string(4, p.name);
        q.string(path ? 5 : 6, p.type);
        q.bool(path ? 19 : 20, p.uniqueItems);
      }),
    );
  });
}

function operation(w: Writer, v: JsonValue): void {
  const op = obj(v);
  w.strings(1, op.tags);
  w.string(3, op.description);
  w.string(5, op.operationId);
  w.strings(6, op.produces);
  w.strings(7, op.consumes);
  if (Array.isArray(op.parameters)) for (const p of op.parameters) w.message(8, (x) => parameter(x, p));
  if (isJsonObject(op.responses)) {
    const responses = op.responses;
    w.message(9, (r) =>
      named(r, 1, responses, (rv, value) =>
        rv.message(1, (resp) => {
          const res = obj(value);
          resp.string(1, res.description);
          if (isJsonObject(res.schema)) resp.message(2, (si) => si.message(1, (x) => schema(x, res.schema)));
        }),
      ),
    );
  }
  w.strings(10, op.schemes);
  vendorExtensions(w, 13, op);
}

const METHODS: Readonly<Record<string, number>> = { get: 2, put: 3, post: 4, delete: 5, options: 6, head: 7, patch: 8 };

function pathItem(w: Writer, v: JsonValue): void {
  const item = obj(v);
  for (const [method, field] of Object.entries(METHODS)) {
    const op = item[method];
    if (isJsonObject(op)) w.message(field, (x) => operation(x, op));
  }
  if (Array.isArray(item.parameters)) for (const p of item.parameters) w.message(9, (x) => parameter(x, p));
  vendorExtensions(w, 10, item);
}

/** The document's protobuf bytes (the encoder is loaded on first use, not at server start). */
export async function encodeOpenApiV2(doc: JsonObject): Promise<Buffer> {
  const w = new Writer(await import('@bufbuild/protobuf/wire'));
  w.string(1, doc.swagger);
  const info = obj(doc.info);
  w.message(2, (i) => {
    i.string(1, info.title);
    i.string(2, info.version);
  });
  w.message(8, (p) => named(p, 2, obj(doc.paths), pathItem));
  w.message(9, (d) => named(d, 1, obj(doc.definitions), schema));
  if (Array.isArray(doc.security)) {
    for (const requirement of doc.security) {
      w.message(12, (r) => named(r, 1, obj(requirement), (sa, scopes) => sa.strings(1, scopes)));
    }
  }
  const securityDefinitions = obj(doc.securityDefinitions);
  if (Object.keys(securityDefinitions).length > 0) {
    w.message(13, (sd) =>
      named(sd, 1, securityDefinitions, (item, value) =>
        item.message(2, (k) => {
          const d = obj(value);
          k.string(1, d.type);
          k.string(2, d.name);
          k.string(3, d.in);
          k.string(4, d.description);
        }),
      ),
    );
  }
  vendorExtensions(w, 16, doc);
  return w.finish();
}
