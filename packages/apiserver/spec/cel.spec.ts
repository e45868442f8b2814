/** The CEL environment of CRD rules and the string formats, as pure functions (issue 14). */
import { expect } from 'chai';
import { compileRule, toCel, PER_RULE_COST_LIMIT } from '../src/grammar/cel.js';
import { hasFormat } from '../src/grammar/formats.js';
import type { JsonObject, JsonValue } from '../src/base/json.js';

const SCHEMA: JsonObject = {
  type: 'object',
  properties: {
    n: { type: 'integer' },
    d: { type: 'number' },
    s: { type: 'string' },
    l: { type: 'array', items: { type: 'integer' } },
    t: { type: 'string', format: 'date-time' },
    m: { type: 'object', additionalProperties: { type: 'string' } },
  },
};

function evaluate(rule: string, self: JsonValue, old?: JsonValue): unknown {
  const compiled = compileRule(rule, SCHEMA);
  if (!compiled.ok) throw new Error(compiled.error);
  const result = compiled.program.run(toCel(self, SCHEMA), old === undefined ? undefined : toCel(old, SCHEMA));
  if (result instanceof Error) return `error: ${result.message}`;
  return typeof result === 'object' && result !== null && Symbol.iterator in result ? [...(result as Iterable<unknown>)] : result;
}

describe('apiserver: CEL for CRD validation rules', () => {
  const obj = { n: 3, d: 1.5, s: 'a1-b22-c333', l: [3, 1, 2], t: '2026-01-02T03:04:05Z', m: { k: 'v' } };

  it('types values by the schema: integer as int, number as double, date-time as timestamp', () => {
    expect(evaluate('self.n + 1 == 4', obj)).to.equal(true);
    expect(evaluate('self.d * 2.0 == 3.0', obj)).to.equal(true);
    expect(evaluate('self.t > timestamp("2026-01-01T00:00:00Z")', obj)).to.equal(true);
    expect(evaluate("self.m.k == 'v' && 'k' in self.m", obj)).to.equal(true);
  });

  it('has the Kubernetes list library: isSorted, sum, min, max, indexOf, lastIndexOf', () => {
    expect(evaluate('self.l.isSorted()', obj)).to.equal(false);
    expect(evaluate('[1, 2, 2].isSorted()', obj)).to.equal(true);
    expect(evaluate('self.l.sum()', obj)).to.equal(6n);
    expect(evaluate('self.l.min()', obj)).to.equal(1n);
    expect(evaluate('self.l.max()', obj)).to.equal(3n);
    expect(evaluate('[1, 2, 1].indexOf(1)', obj)).to.equal(0n);
    expect(evaluate('[1, 2, 1].lastIndexOf(1)', obj)).to.equal(2n);
  });

  it('has the strings extension and the Kubernetes regex library (RE2)', () => {
    expect(evaluate("self.s.split('-')", obj)).to.deep.equal(['a1', 'b22', 'c333']);
    expect(evaluate("self.s.upperAscii().charAt(0) == 'A' && self.s.indexOf('b') == 3", obj)).to.equal(true);
    expect(evaluate("self.s.find('[0-9]+')", obj)).to.equal('1');
    expect(evaluate("self.s.findAll('[0-9]+')", obj)).to.deep.equal(['1', '22', '333']);
    expect(evaluate("self.s.findAll('[0-9]+', 2)", obj)).to.deep.equal(['1', '22']);
    expect(evaluate("self.s.matches('^a[0-9]')", obj)).to.equal(true);
  });

  it('has the Kubernetes quantity library', () => {
    expect(evaluate("quantity('1Gi').isGreaterThan(quantity('1000Mi'))", obj)).to.equal(true);
    expect(evaluate("quantity('500m').isLessThan(quantity('1'))", obj)).to.equal(true);
    expect(evaluate("quantity('1k') == quantity('1000')", obj)).to.equal(true);
    expect(evaluate("quantity('1.5Ki').asInteger()", obj)).to.equal(1536n);
    expect(evaluate("quantity('2e3').compareTo(quantity('2k'))", obj)).to.equal(0n);
    expect(evaluate("quantity('100m').add(quantity('900m')).isInteger()", obj)).to.equal(true);
    expect(evaluate("quantity('1').sub(2).sign()", obj)).to.equal(-1n);
    expect(evaluate("quantity('250m').asApproximateFloat()", obj)).to.equal(0.25);
    expect(evaluate("isQuantity('1Gi') && !isQuantity('1 Gi') && !isQuantity('Gi')", obj)).to.equal(true);
    expect(evaluate("quantity('1.5').asInteger()", obj)).to.equal('error: cannot convert value to integer');
  });

  it('binds oldSelf for transition rules and reports missing keys in cel-go words', () => {
    const compiled = compileRule('self.n >= oldSelf.n', SCHEMA);
    expect(compiled.ok && compiled.program.usesOldSelf).to.equal(true);
    expect(evaluate('self.n >= oldSelf.n', obj, { ...obj, n: 5 })).to.equal(false);
    expect(evaluate('self.missing == 1', obj)).to.equal('error: no such key: missing');
  });

  it('refuses undeclared names and syntax errors at compile time', () => {
    expect(compileRule('foo == 1', SCHEMA)).to.deep.equal({
      ok: false,
      error: "ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')",
    });
    expect(compileRule('self.n.bogus()', SCHEMA)).to.deep.include({ ok: false });
    expect(compileRule('self.n ==', SCHEMA)).to.deep.include({ ok: false });
  });

  it('estimates nested iterations over unbounded lists above the per-rule limit, bounded ones below', () => {
    const unbounded = compileRule('self.l.all(x, self.l.all(y, x <= y || x > y))', SCHEMA);
    expect(unbounded.ok && unbounded.program.estimatedCost).to.be.greaterThan(PER_RULE_COST_LIMIT);
    const bounded: JsonObject = { type: 'object', properties: { l: { type: 'array', maxItems: 100, items: { type: 'integer' } } } };
    const cheap = compileRule('self.l.all(x, self.l.all(y, x <= y || x > y))', bounded);
    expect(cheap.ok && cheap.program.estimatedCost).to.be.lessThan(PER_RULE_COST_LIMIT);
  });
});

describe('apiserver: string formats of CRD schemas', () => {
  const cases: Array<[string, string[], string[]]> = [
    ['date-time', ['2026-11-24T01:02:03Z', '2026-11-24T01:02:03.5+01:00'], ['not-a-date', '2026-13-01T00:00:00Z', '2026-11-24']],
    ['date', ['2026-02-28'], ['2026-02-30', 'today']],
    ['uuid', ['123e4567-e89b-12d3-a456-426614174000'], ['123e4567']],
    ['ipv4', ['10.0.0.1'], ['10.0.0.256', '::1']],
    ['ipv6', ['::1', 'fe80::1'], ['10.0.0.1']],
    ['cidr', ['10.0.0.0/8', 'fd00::/64'], ['10.0.0.0', '10.0.0.0/33']],
    ['hostname', ['example.com', 'a'], ['-bad-.com', 'a b']],
    ['email', ['a@example.com'], ['not-an-email']],
    ['uri', ['https://example.com/x'], ['not a uri']],
    ['byte', ['aGVsbG8='], ['not base64!']],
    ['duration', ['1h30m', '5s'], ['soon']],
    ['mac', ['00:1a:2b:3c:4d:5e'], ['00:1a']],
  ];
  for (const [format, good, bad] of cases) {
    it(`checks ${format}`, () => {
      for (const v of good) expect(hasFormat(v, format), v).to.equal(true);
      for (const v of bad) expect(hasFormat(v, format), v).to.equal(false);
    });
  }
  it('accepts any value for a format the server does not check', () => {
    expect(hasFormat('anything', 'my-format')).to.equal(true);
  });
});
