/**
 * CEL for CRD validation rules (`x-kubernetes-validations`), with `@bufbuild/cel` as the
 * evaluator and the Kubernetes CEL environment as far as it carries over:
 * - variables `self` and, for transition rules, `oldSelf`;
 * - the CEL standard library (macros has/all/exists/exists_one/map/filter, size, contains,
 *   startsWith, endsWith, matches, conversions, timestamp/duration arithmetic);
 * - the strings extension (charAt, indexOf, lastIndexOf, lowerAscii, upperAscii, replace, split,
 *   substring, trim, join, format);
 * - the Kubernetes list library (isSorted, sum, min, max, indexOf, lastIndexOf) and regex library
 *   (find, findAll), with RE2 semantics.
 * - the Kubernetes quantity library (quantity, isQuantity, isLessThan, isGreaterThan, compareTo,
 *   sign, isInteger, asInteger, asApproximateFloat, add, sub).
 * Not supported: the url, ip/cidr, format and authz libraries, optional types (so no
 * `optionalOldSelf` evaluation of absent old values), and CEL's static type checking (a rule
 * that names an unknown function or variable is refused when the CRD is written; type errors
 * only show when a rule runs, as an evaluation error).
 *
 * Values are handed to CEL typed by the schema, as Kubernetes does: `integer` as int, `number`
 * as double, `format: date-time` strings as timestamps, objects and maps as maps, arrays as lists.
 *
 * Cost: rules are refused when the CRD is written if their estimated cost (iterations of nested
 * comprehensions, sized by the schema's maxItems/maxProperties/maxLength, or by the largest
 * request body when unbounded) exceeds the real server's per-rule limit, so no rule can loop
 * for long on any object the server accepts.
 */
import { createRequire } from 'node:module';
import type * as CelModule from '@bufbuild/cel';
import type { CelEnv, CelFunc, CelValue } from '@bufbuild/cel';
import type * as CelExtensions from '@bufbuild/cel/ext';
import type * as WellKnownTypes from '@bufbuild/protobuf/wkt';
import { LRUCache } from 'lru-cache';
import { RE2JS } from 're2js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { isJsonObject, ownValue } from '../base/json.js';

type Cel = typeof CelModule;
type Expr = ReturnType<Cel['parse']>['expr'];

function compare(a: CelValue, b: CelValue): number {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) {
    return Number(a) < Number(b) ? -1 : Number(a) > Number(b) ? 1 : 0;
  }
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  throw new Error(`no such overload: compare(${typeof a}, ${typeof b})`);
}

function items(list: Iterable<CelValue>): CelValue[] {
  return [...list];
}

function sameValue(a: CelValue, b: CelValue): boolean {
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) return Number(a) === Number(b);
  return a === b;
}

function extreme(list: Iterable<CelValue>, sign: 1 | -1, name: string): CelValue {
  const all = items(list);
  if (all.length === 0) throw new Error(`${name}(list) called on an empty list`);
  return all.reduce((best, x) => (compare(x, best) * sign > 0 ? x : best));
}

function findFirst(text: string, pattern: string): string {
  const m = regex(pattern).matcher(text);
  return m.find() ? (m.group() ?? '') : '';
}

function findAll(text: string, pattern: string, limit: number): string[] {
  const m = regex(pattern).matcher(text);
  const found: string[] = [];
  while ((limit < 0 || found.length < limit) && m.find()) found.push(m.group() ?? '');
  return found;
}

const regexes = new LRUCache<string, RE2JS>({ max: 200 });

function regex(pattern: string): RE2JS {
  let re = regexes.get(pattern);
  if (!re) {
    re = RE2JS.compile(pattern);
    regexes.set(pattern, re);
  }
  return re;
}

// ---- The Kubernetes quantity library -----------------------------------------------------
// A quantity is a CEL map holding its value in nano-units (rounded up, as Kubernetes rounds
// quantities below its nano scale), so equality and ordering are exact for every quantity
// Kubernetes can represent.

const QUANTITY_KEY = '@quantity';
const QUANTITY = /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$/;
const DECIMAL_SUFFIX: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIX: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

/** The value of a Kubernetes quantity in nano-units, or undefined if `text` is not one. */
export function parseQuantity(text: string): bigint | undefined {
  const m = QUANTITY.exec(text);
  if (!m) return undefined;
  const [whole = '', fraction = ''] = m[1].replace(/^[+-]/, '').split('.');
  const negative = m[1].startsWith('-');
  let numerator = BigInt(`${whole}${fraction}` || '0');
  let exponent = 9 - fraction.length;
  const suffix = m[2] ?? '';
  if (BINARY_SUFFIX[suffix] !== undefined) numerator *= 2n ** BigInt(BINARY_SUFFIX[suffix]);
  else exponent += DECIMAL_SUFFIX[suffix] ?? Number(suffix.slice(1));
  let nanos: bigint;
  if (exponent >= 0) nanos = numerator * 10n ** BigInt(exponent);
  else {
    const divisor = 10n ** BigInt(-exponent);
    nanos = numerator / divisor + (numerator % divisor === 0n ? 0n : 1n);
  }
  return negative ? -nanos : nanos;
}

const NANO = 1_000_000_000n;
const INT64_MAX = 2n ** 63n - 1n;

function quantityLibrary(cel: Cel): CelFunc[] {
  const { celFunc, celMap, celMethod, CelScalar, isCelMap, mapType } = cel;
  const QUANTITY_TYPE = mapType(CelScalar.STRING, CelScalar.DYN);
  const quantity = (nanos: bigint) => celMap(new Map([[QUANTITY_KEY, nanos]]));
  const nanosOf = (v: CelValue): bigint => {
    const n = isCelMap(v) ? v.get(QUANTITY_KEY) : undefined;
    if (typeof n !== 'bigint') throw new Error('no such overload: not a quantity');
    return n;
  };
  return [
    celFunc('quantity', [CelScalar.STRING], QUANTITY_TYPE, (text) => {
      const nanos = parseQuantity(text);
      if (nanos === undefined)
        throw new Error(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`);
      return quantity(nanos);
    }),
    celFunc('isQuantity', [CelScalar.STRING], CelScalar.BOOL, (text) => parseQuantity(text) !== undefined),
    celMethod('isLessThan', QUANTITY_TYPE, [QUANTITY_TYPE], CelScalar.BOOL, function (other) {
      return nanosOf(this) < nanosOf(other);
    }),
    celMethod('isGreaterThan', QUANTITY_TYPE, [QUANTITY_TYPE], CelScalar.BOOL, function (other) {
      return nanosOf(this) > nanosOf(other);
    }),
    celMethod('compareTo', QUANTITY_TYPE, [QUANTITY_TYPE], CelScalar.INT, function (other) {
      const [a, b] = [nanosOf(this), nanosOf(other)];
      return a < b ? -1n : a > b ? 1n : 0n;
    }),
    celMethod('sign', QUANTITY_TYPE, [], CelScalar.INT, function () {
      const n = nanosOf(this);
      return n < 0n ? -1n : n > 0n ? 1n : 0n;
    }),
    celMethod('isInteger', QUANTITY_TYPE, [], CelScalar.BOOL, function () {
      const n = nanosOf(this);
      return n % NANO === 0n && n / NANO <= INT64_MAX && n / NANO >= -INT64_MAX - 1n;
    }),
    celMethod('asInteger', QUANTITY_TYPE, [], CelScalar.INT, function () {
      const n = nanosOf(this);
      if (n % NANO !== 0n || n / NANO > INT64_MAX || n / NANO < -INT64_MAX - 1n) throw new Error('cannot convert value to integer');
      return n / NANO;
    }),
    celMethod('asApproximateFloat', QUANTITY_TYPE, [], CelScalar.DOUBLE, function () {
      return Number(nanosOf(this)) / 1e9;
    }),
    celMethod('add', QUANTITY_TYPE, [QUANTITY_TYPE], QUANTITY_TYPE, function (other) {
      return quantity(nanosOf(this) + nanosOf(other));
    }),
    celMethod('add', QUANTITY_TYPE, [CelScalar.INT], QUANTITY_TYPE, function (other) {
      return quantity(nanosOf(this) + other * NANO);
    }),
    celMethod('sub', QUANTITY_TYPE, [QUANTITY_TYPE], QUANTITY_TYPE, function (other) {
      return quantity(nanosOf(this) - nanosOf(other));
    }),
    celMethod('sub', QUANTITY_TYPE, [CelScalar.INT], QUANTITY_TYPE, function (other) {
      return quantity(nanosOf(this) - other * NANO);
    }),
  ];
}

/** The Kubernetes list and regex libraries. */
function listAndRegexLibraries(cel: Cel): CelFunc[] {
  const { celList, celMethod, CelScalar, listType } = cel;
  const DYN = CelScalar.DYN;
  const LIST = listType(DYN);
  return [
    celMethod('isSorted', LIST, [], CelScalar.BOOL, function () {
      const all = items(this);
      return all.every((x, i) => i === 0 || compare(all[i - 1], x) <= 0);
    }),
    celMethod('sum', LIST, [], DYN, function () {
      const all = items(this);
      if (all.length === 0) return 0n;
      if (all.every((x) => typeof x === 'bigint')) return all.reduce((a, b) => a + b, 0n);
      return all.reduce<number>((a, b) => a + Number(b), 0);
    }),
    celMethod('min', LIST, [], DYN, function () {
      return extreme(this, -1, 'min');
    }),
    celMethod('max', LIST, [], DYN, function () {
      return extreme(this, 1, 'max');
    }),
    celMethod('indexOf', LIST, [DYN], CelScalar.INT, function (x) {
      return BigInt(items(this).findIndex((y) => sameValue(x, y)));
    }),
    celMethod('lastIndexOf', LIST, [DYN], CelScalar.INT, function (x) {
      const all = items(this);
      for (let i = all.length - 1; i >= 0; i--) if (sameValue(x, all[i])) return BigInt(i);
      return -1n;
    }),
    celMethod('find', CelScalar.STRING, [CelScalar.STRING], CelScalar.STRING, function (pattern) {
      return findFirst(this, pattern);
    }),
    celMethod('findAll', CelScalar.STRING, [CelScalar.STRING], LIST, function (pattern) {
      return celList(findAll(this, pattern, -1));
    }),
    celMethod('findAll', CelScalar.STRING, [CelScalar.STRING, CelScalar.INT], LIST, function (pattern, limit) {
      return celList(findAll(this, pattern, Number(limit)));
    }),
  ];
}

interface Runtime {
  readonly cel: Cel;
  readonly env: CelEnv;
  readonly timestampFromMs: (typeof WellKnownTypes)['timestampFromMs'];
}

let runtime: Runtime | undefined;

/** The names any expression may be given: the rules' self/oldSelf and the admission variables. */
const ENV_VARIABLES = new Set(['self', 'oldSelf', 'object', 'oldObject', 'request', 'params', 'namespaceObject', 'variables']);

/**
 * @bufbuild/cel, loaded on the first rule: it takes about as long to load as the rest of the
 * server, and most CRDs declare no rules.
 */
function celRuntime(): Runtime {
  if (runtime) return runtime;
  const load = createRequire(import.meta.url);
  const cel = load('@bufbuild/cel') as Cel;
  const { strings } = load('@bufbuild/cel/ext') as typeof CelExtensions;
  const { timestampFromMs } = load('@bufbuild/protobuf/wkt') as typeof WellKnownTypes;
  const env = cel.celEnv({
    variables: Object.fromEntries([...ENV_VARIABLES].map((v) => [v, cel.CelScalar.DYN])),
    funcs: [...[...strings, ...listAndRegexLibraries(cel), ...quantityLibrary(cel)].map(charged), stepCharge(cel), operandCharge(cel)],
    re2: {
      compile: (pattern: string) => ({
        test: (text: string) => {
          charge(regexCost(text, pattern));
          return regex(pattern).matcher(text).find();
        },
      }),
    },
  });
  runtime = { cel, env, timestampFromMs };
  return runtime;
}

/**
 * Runtime cost, as the real server meters it: each evaluation of a rule may spend at most
 * PER_CALL_COST_LIMIT, and one object's rules together RUNTIME_COST_BUDGET. The static estimate
 * bounds iterations but not what a call makes of its arguments: `s.replace('a', s)` turns a 6 KB
 * string into 36 MB. String and regex calls are charged by the lengths they handle (0.1 per
 * character, as cel-go's string traversal cost), a replace before it builds its result; each
 * iteration of a comprehension is charged the nodes its step evaluates (cel-go charges about one
 * per node), and equality, ordering, `in` and `+` the size of their operands (0.1 per element),
 * so expressions with no static estimate to refuse them (matchConditions over list
 * literals) are stopped too. Evaluation stops with cel-go's error when the budget is spent.
 * Evaluation is synchronous, so one meter for the evaluation in progress suffices.
 */
export const PER_CALL_COST_LIMIT = 1_000_000;
/** The real server's runtime budget for all rules of one object (RuntimeCELCostBudget). */
export const RUNTIME_COST_BUDGET = 10_000_000;
/** The real server's runtime budget for one webhook's matchConditions (RuntimeCELCostBudgetMatchConditions). */
export const MATCH_CONDITIONS_COST_BUDGET = 2_500_000;
const COST_PER_CHAR = 0.1;

export class CelCostExceeded extends Error {
  constructor(readonly scope: 'call' | 'request') {
    super('operation cancelled: actual cost limit exceeded');
  }
}

const meter = { call: Infinity, request: Infinity };

function charge(cost: number): void {
  meter.call -= cost;
  meter.request -= cost;
  if (meter.request < 0) throw new CelCostExceeded('request');
  if (meter.call < 0) throw new CelCostExceeded('call');
}

/** Matching costs the text times the pattern (RE2 runs the pattern's automaton over the text). */
function regexCost(text: string, pattern: string): number {
  return COST_PER_CHAR * text.length * Math.max(1, Math.ceil(pattern.length / 4));
}

const lengthOf = (v: CelValue | undefined): number => (typeof v === 'string' ? v.length : 0);

/** What `target.replace(from, to[, n])` will produce, in characters: charged before it is built. */
function replacedLength(target: string, args: CelValue[]): number {
  const [from, to, n] = args;
  if (typeof from !== 'string' || typeof to !== 'string' || from === '') return target.length * (1 + lengthOf(to));
  let count = 0;
  const limit = typeof n === 'bigint' && n >= 0n ? Number(n) : Infinity;
  for (let i = target.indexOf(from); i >= 0 && count < limit; i = target.indexOf(from, i + from.length)) count++;
  return target.length + count * (to.length - from.length);
}

/**
 * Go's strings.Replace, which cel-go's `replace` is, in linear time (the library's rebuilds the
 * string at each occurrence: quadratic). `n` < 0 or absent replaces all; an empty `from` inserts
 * `to` before every character and at the end.
 */
function replaceAll(target: string, args: CelValue[]): string | undefined {
  const [from, to, n] = args;
  if (typeof from !== 'string' || typeof to !== 'string' || (n !== undefined && typeof n !== 'bigint')) return undefined;
  const limit = n === undefined || n < 0n ? Infinity : Number(n);
  const parts: string[] = [];
  let count = 0;
  let pos = 0;
  if (from === '') {
    const chars = [...target];
    for (const ch of chars) {
      if (count++ < limit) parts.push(to);
      parts.push(ch);
    }
    if (count < limit) parts.push(to);
    return parts.join('');
  }
  for (let i = target.indexOf(from); i >= 0 && count < limit; i = target.indexOf(from, pos)) {
    parts.push(target.slice(pos, i), to);
    pos = i + from.length;
    count++;
  }
  parts.push(target.slice(pos));
  return parts.join('');
}

/** A library function charged by the characters it reads and produces. */
function charged(f: CelFunc): CelFunc {
  const wrapped = Object.create(f) as CelFunc & { call: CelFunc['call'] };
  Object.defineProperty(wrapped, 'call', {
    value(id: number, target: CelValue | undefined, args: CelValue[]) {
      const read = lengthOf(target) + args.reduce((n: number, a) => n + lengthOf(a), 0);
      charge(COST_PER_CHAR * (read + (f.name === 'replace' && typeof target === 'string' ? replacedLength(target, args) : 0)));
      const result = f.name === 'replace' && typeof target === 'string' ? replaceAll(target, args) : f.call(id, target, args);
      if (result !== undefined && typeof result === 'string') charge(COST_PER_CHAR * result.length);
      return result;
    },
  });
  return wrapped;
}

/** The name of the function that charges one comprehension step; `@` keeps it out of what a rule can name. */
const STEP_CHARGE = '@rxkube_step_cost';

/** Charges its second argument and passes the first through (see `meterIterations`). */
function stepCharge(cel: Cel): CelFunc {
  return cel.celFunc(STEP_CHARGE, [cel.CelScalar.DYN, cel.CelScalar.INT], cel.CelScalar.DYN, (condition, cost) => {
    charge(Number(cost));
    return condition;
  });
}

/** The function that charges an operand by its size; `@` keeps it out of what a rule can name. */
const OPERAND_CHARGE = '@rxkube_operand_cost';
/** Operators that walk their operands whole (equality and ordering compare every element, `in` scans the list). */
const DEEP_OPERATORS = new Set(['_==_', '_!=_', '@in', '_<_', '_<=_', '_>_', '_>=_']);
/** `+` copies its operands' elements (lists, strings), not what the elements hold. */
const SHALLOW_OPERATORS = new Set(['_+_']);

/**
 * The elements, entries and characters of a value, counted without recursion, at most `limit`
 * (counting further than the budget allows would only spend the time the meter is there to save).
 */
function sizeOf(cel: Cel, value: CelValue, deep: boolean, limit: number): number {
  let size = 0;
  const stack: CelValue[] = [value];
  while (stack.length > 0 && size <= limit) {
    const v = stack.pop() as CelValue;
    if (typeof v === 'string') size += v.length;
    else if (v instanceof Uint8Array) size += v.length;
    else if (cel.isCelList(v)) {
      size += v.size;
      if (deep) for (const x of v) stack.push(x);
    } else if (cel.isCelMap(v)) {
      size += v.size;
      if (deep) for (const [k, x] of v) stack.push(k, x);
    }
  }
  return size;
}

/** Charges its first argument's size (deeply when the second says so) and passes it through. */
function operandCharge(cel: Cel): CelFunc {
  return cel.celFunc(OPERAND_CHARGE, [cel.CelScalar.DYN, cel.CelScalar.BOOL], cel.CelScalar.DYN, (operand, deep) => {
    const limit = Math.min(meter.call, meter.request) / COST_PER_CHAR;
    charge(COST_PER_CHAR * sizeOf(cel, operand, deep, limit));
    return operand;
  });
}

/** `e` wrapped in a call of `fn` with extra constant arguments. */
function wrapped(
  e: Expr,
  fn: string,
  ...constants: Array<{ case: 'int64Value'; value: bigint } | { case: 'boolValue'; value: boolean }>
): Expr {
  const args = constants.map((constantKind) => ({ ...e, exprKind: { case: 'constExpr', value: { constantKind } } }));
  return { ...e, exprKind: { case: 'callExpr', value: { function: fn, args: [e, ...args] } } } as unknown as Expr;
}

/** Nodes one evaluation of `e` visits, a nested comprehension's loop left to its own charge. */
function nodeCount(e: Expr | undefined): number {
  if (!e) return 0;
  const k = e.exprKind;
  switch (k.case) {
    case 'selectExpr':
      return 1 + nodeCount(k.value.operand);
    case 'callExpr':
      return 1 + nodeCount(k.value.target) + k.value.args.reduce((n, a) => n + nodeCount(a), 0);
    case 'listExpr':
      return 1 + k.value.elements.reduce((n, x) => n + nodeCount(x), 0);
    case 'structExpr':
      return (
        1 +
        k.value.entries.reduce((n, x) => n + nodeCount(x.keyKind.case === 'mapKey' ? x.keyKind.value : undefined) + nodeCount(x.value), 0)
      );
    case 'comprehensionExpr':
      return 1 + nodeCount(k.value.iterRange) + nodeCount(k.value.accuInit) + nodeCount(k.value.result);
    default:
      return 1;
  }
}

/**
 * Makes every comprehension charge each iteration the nodes its condition and step visit (the
 * loop condition becomes `@rxkube_step_cost(condition, cost)`, evaluated once per element), and
 * every operator that walks its operands charge their size (`@rxkube_operand_cost(operand,
 * deep)`): comparing or concatenating large lists costs what it does, not one node.
 */
function meterIterations(e: Expr | undefined): void {
  if (!e) return;
  const k = e.exprKind;
  switch (k.case) {
    case 'selectExpr':
      return meterIterations(k.value.operand);
    case 'callExpr': {
      meterIterations(k.value.target);
      for (const a of k.value.args) meterIterations(a);
      const fn = k.value.function;
      if (DEEP_OPERATORS.has(fn) || SHALLOW_OPERATORS.has(fn)) {
        const deep = DEEP_OPERATORS.has(fn);
        k.value.args = k.value.args.map((a) => wrapped(a, OPERAND_CHARGE, { case: 'boolValue', value: deep }));
      }
      return;
    }
    case 'listExpr':
      for (const x of k.value.elements) meterIterations(x);
      return;
    case 'structExpr':
      for (const x of k.value.entries) {
        meterIterations(x.keyKind.case === 'mapKey' ? x.keyKind.value : undefined);
        meterIterations(x.value);
      }
      return;
    case 'comprehensionExpr': {
      const c = k.value;
      for (const part of [c.iterRange, c.accuInit, c.loopCondition, c.loopStep, c.result]) meterIterations(part);
      const condition = c.loopCondition;
      if (!condition) return;
      const cost = Math.max(1, nodeCount(condition) + nodeCount(c.loopStep));
      c.loopCondition = wrapped(condition, STEP_CHARGE, { case: 'int64Value', value: BigInt(cost) });
      return;
    }
    default:
      return;
  }
}

/**
 * Meters the evaluations `run` makes as one object's validation: its rules share `budget`
 * (RUNTIME_COST_BUDGET; MATCH_CONDITIONS_COST_BUDGET for one webhook's matchConditions).
 * Outside it each evaluation still has PER_CALL_COST_LIMIT.
 */
export function withCelBudget<T>(run: () => T, budget = RUNTIME_COST_BUDGET): T {
  const outer = meter.request;
  meter.request = budget;
  try {
    return run();
  } finally {
    meter.request = outer;
  }
}

/** Every function a rule may call: operators, the standard library and the extensions above. */
const KNOWN_FUNCTIONS = new Set([
  ...['size', 'contains', 'startsWith', 'endsWith', 'matches', 'int', 'uint', 'double', 'string', 'bytes', 'bool', 'type', 'dyn'],
  ...['timestamp', 'duration', 'getFullYear', 'getMonth', 'getDayOfYear', 'getDayOfMonth', 'getDate', 'getDayOfWeek'],
  ...['getHours', 'getMinutes', 'getSeconds', 'getMilliseconds'],
  ...['charAt', 'indexOf', 'lastIndexOf', 'lowerAscii', 'upperAscii', 'replace', 'split', 'substring', 'trim', 'join', 'format'],
  ...['isSorted', 'sum', 'min', 'max', 'find', 'findAll'],
  ...[
    'quantity',
    'isQuantity',
    'isLessThan',
    'isGreaterThan',
    'compareTo',
    'sign',
    'isInteger',
    'asInteger',
    'asApproximateFloat',
    'add',
    'sub',
  ],
]);
const TYPE_NAMES = new Set(['int', 'uint', 'double', 'string', 'bytes', 'bool', 'list', 'map', 'null_type', 'type', 'dyn']);

/** A compiled rule or expression. */
export interface CelProgram {
  readonly source: string;
  readonly usesOldSelf: boolean;
  /** The value, or an Error with CEL's message. */
  run(self: CelValue, oldSelf: CelValue | undefined): CelValue | Error;
  /** Estimated cost of one evaluation, in CEL cost units. */
  readonly estimatedCost: number;
}

export type Compiled = { ok: true; program: CelProgram } | { ok: false; error: string };

/** Largest request body the server takes (3 MiB), as Kubernetes sizes unbounded lists and maps from. */
const MAX_REQUEST_BYTES = 3 * 1024 * 1024;
/** The real server's limit for one rule's estimated cost (StaticEstimatedCostLimit). */
export const PER_RULE_COST_LIMIT = 10_000_000;

interface Scope {
  readonly names: ReadonlySet<string>;
  /** Schema nodes of comprehension variables, for sizing nested iterations. */
  readonly schemas: ReadonlyMap<string, JsonObject | undefined>;
}

function position(source: string, offset: number | undefined): string {
  if (offset === undefined) return '<input>:1:1';
  const before = source.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return `<input>:${line}:${column}`;
}

/** The schema node an expression designates (self.a.b, x.c with x bound by a comprehension), if known. */
function schemaOfExpr(e: Expr | undefined, self: JsonObject | undefined, scope: Scope): JsonObject | undefined {
  if (!e) return undefined;
  const k = e.exprKind;
  if (k.case === 'identExpr') return k.value.name === 'self' || k.value.name === 'oldSelf' ? self : scope.schemas.get(k.value.name);
  if (k.case === 'selectExpr') {
    const parent = schemaOfExpr(k.value.operand, self, scope);
    if (!parent) return undefined;
    const declared = isJsonObject(parent.properties) ? ownValue(parent.properties, k.value.field) : undefined;
    const sub = declared ?? parent.additionalProperties;
    return isJsonObject(sub) ? sub : undefined;
  }
  return undefined;
}

function elementSchema(s: JsonObject | undefined): JsonObject | undefined {
  if (!s) return undefined;
  if (isJsonObject(s.items)) return s.items;
  if (isJsonObject(s.additionalProperties)) return s.additionalProperties;
  return undefined;
}

/** How many elements a comprehension over a value of schema `s` may see at most. */
function maxElements(s: JsonObject | undefined): number {
  for (const bound of ['maxItems', 'maxProperties', 'maxLength']) {
    const v = s?.[bound];
    if (typeof v === 'number') return v;
  }
  // Each element takes at least two bytes of JSON ("1," or "a:"), as Kubernetes estimates.
  return MAX_REQUEST_BYTES / 2;
}

interface Analysis {
  errors: string[];
  usesOldSelf: boolean;
}

/** Undeclared names and the estimated cost of an expression. */
function analyze(
  e: Expr | undefined,
  source: string,
  positions: Readonly<Record<string, number>>,
  self: JsonObject | undefined,
  scope: Scope,
  out: Analysis,
): number {
  if (!e) return 0;
  const at = () => position(source, positions[String(e.id)]);
  const k = e.exprKind;
  switch (k.case) {
    case 'identExpr': {
      const name = k.value.name;
      if (name === 'oldSelf') out.usesOldSelf = true;
      if (!scope.names.has(name) && !TYPE_NAMES.has(name))
        out.errors.push(`ERROR: ${at()}: undeclared reference to '${name}' (in container '')`);
      return 1;
    }
    case 'selectExpr':
      return 1 + analyze(k.value.operand, source, positions, self, scope, out);
    case 'callExpr': {
      const fn = k.value.function;
      const isOperator = fn.startsWith('_') || fn.startsWith('@') || fn.startsWith('!');
      if (!isOperator && !KNOWN_FUNCTIONS.has(fn)) out.errors.push(`ERROR: ${at()}: undeclared reference to '${fn}' (in container '')`);
      let cost = 1 + analyze(k.value.target, source, positions, self, scope, out);
      for (const a of k.value.args) cost += analyze(a, source, positions, self, scope, out);
      // Functions scan their target: charge its size when the schema bounds it (or should).
      const targetSchema = isOperator ? undefined : schemaOfExpr(k.value.target, self, scope);
      if (targetSchema) cost += maxElements(targetSchema) / 10;
      return cost;
    }
    case 'listExpr':
      return 1 + k.value.elements.reduce((sum, x) => sum + analyze(x, source, positions, self, scope, out), 0);
    case 'structExpr':
      return (
        1 +
        k.value.entries.reduce(
          (sum, x) =>
            sum +
            analyze(x.keyKind.case === 'mapKey' ? x.keyKind.value : undefined, source, positions, self, scope, out) +
            analyze(x.value, source, positions, self, scope, out),
          0,
        )
      );
    case 'comprehensionExpr': {
      const c = k.value;
      const rangeSchema = schemaOfExpr(c.iterRange, self, scope);
      const size = maxElements(rangeSchema);
      const rangeCost = analyze(c.iterRange, source, positions, self, scope, out);
      const inner: Scope = {
        names: new Set([...scope.names, c.iterVar, c.accuVar]),
        schemas: new Map([...scope.schemas, [c.iterVar, elementSchema(rangeSchema)]]),
      };
      const init = analyze(c.accuInit, source, positions, self, scope, out);
      const step = analyze(c.loopCondition, source, positions, self, inner, out) + analyze(c.loopStep, source, positions, self, inner, out);
      const result = analyze(c.result, source, positions, self, inner, out);
      return rangeCost + init + size * Math.max(step, 1) + result;
    }
    default:
      return 1;
  }
}

/** Compiled rules per schema node: a served CRD's schema objects live as long as it is served. */
const compiledRules = new WeakMap<JsonObject, Map<string, Compiled>>();
const NO_SCHEMA: JsonObject = {};

/** Compiles a rule for values of schema `schema` (the node that declares the rule). */
export function compileRule(source: string, schema: JsonObject | undefined): Compiled {
  const node = schema ?? NO_SCHEMA;
  let rules = compiledRules.get(node);
  if (!rules) compiledRules.set(node, (rules = new Map<string, Compiled>()));
  let result = rules.get(source);
  if (!result) {
    result = compileUncached(source, schema);
    rules.set(source, result);
  }
  return result;
}

function compileUncached(source: string, schema: JsonObject | undefined): Compiled {
  const planned = planExpression(source, ['self', 'oldSelf'], schema);
  if (!planned.ok) return planned;
  const { evaluate, estimatedCost, usesOldSelf } = planned;
  return {
    ok: true,
    program: { source, usesOldSelf, estimatedCost, run: (self, oldSelf) => evaluate({ self, oldSelf: oldSelf ?? null }) },
  };
}

type Planned =
  | { ok: true; estimatedCost: number; usesOldSelf: boolean; evaluate: (bindings: Readonly<Record<string, CelValue>>) => CelValue | Error }
  | { ok: false; error: string };

/**
 * Parses, checks (undeclared names, estimated cost) and plans an expression over `names`; its
 * evaluation spends at most PER_CALL_COST_LIMIT and returns CEL's errors as values.
 */
function planExpression(source: string, names: readonly string[], schema: JsonObject | undefined): Planned {
  let parsed: ReturnType<Cel['parse']>;
  try {
    parsed = celRuntime().cel.parse(source);
  } catch (err) {
    return { ok: false, error: `ERROR: Syntax error: ${(err as Error).message}` };
  }
  const positions: Record<string, number> = {};
  for (const [id, offset] of Object.entries(parsed.sourceInfo?.positions ?? {})) positions[id] = offset;
  const out: Analysis = { errors: [], usesOldSelf: false };
  const estimatedCost = analyze(parsed.expr, source, positions, schema, { names: new Set(names), schemas: new Map() }, out);
  if (out.errors.length) return { ok: false, error: out.errors.join('\n') };
  let program: (bindings: Readonly<Record<string, CelValue>>) => unknown;
  try {
    meterIterations(parsed.expr);
    program = celRuntime().cel.plan(celRuntime().env, parsed);
  } catch (err) {
    return { ok: false, error: `ERROR: ${(err as Error).message}` };
  }
  const evaluate = (bindings: Readonly<Record<string, CelValue>>): CelValue | Error => {
    const outerCall = meter.call;
    meter.call = PER_CALL_COST_LIMIT;
    try {
      const v = program(bindings) as CelValue;
      if (celRuntime().cel.isCelError(v)) {
        const spent = costError(v);
        if (spent) throw spent;
        return new Error(kubernetesWording(v.message));
      }
      return v;
    } catch (err) {
      if (err instanceof CelCostExceeded) throw err;
      return err instanceof Error ? err : new Error(String(err));
    } finally {
      meter.call = outerCall;
    }
  };
  return { ok: true, estimatedCost, usesOldSelf: out.usesOldSelf, evaluate };
}

/** The cost error behind a CEL error value, if the library caught it into one. */
function costError(v: { message: string; cause?: unknown }): CelCostExceeded | undefined {
  if (v.cause instanceof CelCostExceeded) return v.cause;
  return v.message.includes('actual cost limit exceeded') ? new CelCostExceeded(meter.request < 0 ? 'request' : 'call') : undefined;
}

/** cel-go's words for the errors Kubernetes users see most. */
function kubernetesWording(message: string): string {
  return message.replace(/^field not found: /, 'no such key: ');
}

/** A JSON value as the CEL value Kubernetes makes of it for its schema. */
export function toCel(value: JsonValue, schema: JsonObject | undefined): CelValue {
  if (value === null) return null;
  if (Array.isArray(value)) {
    const item = isJsonObject(schema?.items) ? schema.items : undefined;
    return celRuntime().cel.celList(value.map((v) => toCel(v, item)));
  }
  if (isJsonObject(value)) {
    const props = isJsonObject(schema?.properties) ? schema.properties : undefined;
    const extra = isJsonObject(schema?.additionalProperties) ? schema.additionalProperties : undefined;
    const map = new Map<string, CelValue>();
    for (const [k, v] of Object.entries(value)) {
      const sub = ownValue(props, k) ?? extra;
      map.set(k, toCel(v, isJsonObject(sub) ? sub : undefined));
    }
    return map as unknown as CelValue;
  }
  if (typeof value === 'number') {
    if (schema?.type === 'number') return value;
    return Number.isInteger(value) ? BigInt(value) : value;
  }
  if (typeof value === 'string' && schema?.type === 'string' && schema.format === 'date-time') {
    const ms = Date.parse(value);
    if (!Number.isNaN(ms)) return celRuntime().timestampFromMs(ms) as unknown as CelValue;
  }
  return value;
}

/** A compiled expression over named variables (admission matchConditions and policies). */
export interface CelExpression {
  readonly source: string;
  readonly estimatedCost: number;
  /** The value, or an Error with CEL's message; a spent budget throws CelCostExceeded. */
  evaluate(variables: Readonly<Record<string, CelValue>>): CelValue | Error;
}

export type CompiledExpression = { ok: true; expression: CelExpression } | { ok: false; error: string };

const compiledExpressions = new LRUCache<string, CompiledExpression>({ max: 1000 });

/**
 * Compiles an expression that may name `variables` (e.g. object, oldObject, request, params):
 * the environment of admission expressions, with the library and cost metering of the rules.
 */
export function compileExpression(source: string, variables: readonly string[]): CompiledExpression {
  const key = `${variables.join(',')}\n${source}`;
  let result = compiledExpressions.get(key);
  if (!result) {
    result = compileExpressionUncached(source, variables);
    compiledExpressions.set(key, result);
  }
  return result;
}

function compileExpressionUncached(source: string, variables: readonly string[]): CompiledExpression {
  const planned = planExpression(source, variables, undefined);
  if (!planned.ok) return planned;
  return { ok: true, expression: { source, estimatedCost: planned.estimatedCost, evaluate: planned.evaluate } };
}
