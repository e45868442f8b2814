/**
 * Kubernetes label selectors, parsed and matched the way the API server does
 * (k8s.io/apimachinery pkg/labels), and the label key/value syntax (pkg/util/validation).
 *
 * Label selectors: comma-separated requirements, each one of
 *   `key`, `!key`, `key=value`, `key==value`, `key!=value`, `key in (v1,v2)`, `key notin (v1,v2)`,
 *   `key>5`, `key<5` (integer comparison; the label must hold an integer).
 * Keys are qualified names (`app`, `example.com/app`); values are empty or label values (at most
 * 63 characters, alphanumerics, '-', '_', '.', starting and ending alphanumeric). `in`/`notin`
 * are keywords only in operator position, so `in in (in)` is valid. `()` means the set {""}.
 * `!=` and `notin` also match objects that do not have the label at all. The empty selector
 * matches everything.
 */

export class SelectorError extends Error {
  override readonly name = 'SelectorError';
}

export type LabelOperator = 'Equals' | 'NotEquals' | 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'GreaterThan' | 'LessThan';

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  /** Sorted and de-duplicated; one value for Equals/NotEquals/GreaterThan/LessThan, none for Exists/DoesNotExist. */
  readonly values: readonly string[];
}

export interface LabelSelector {
  /** All must hold (logical AND). None: matches everything. Sorted by key, as Kubernetes does. */
  readonly requirements: readonly LabelRequirement[];
}
// ---------------------------------------------------------------------------------------------
// Label selector parsing

type Token = 'identifier' | 'end' | 'error' | '(' | ')' | ',' | '!' | '=' | '==' | '!=' | '>' | '<' | 'in' | 'notin';

interface Scanned {
  tok: Token;
  lit: string;
}

const SYMBOLS: ReadonlyMap<string, Token> = new Map<string, Token>([
  ['(', '('],
  [')', ')'],
  [',', ','],
  ['!', '!'],
  ['=', '='],
  ['==', '=='],
  ['!=', '!='],
  ['>', '>'],
  ['<', '<'],
]);

const isWhitespace = (ch: string) => ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
const isSpecial = (ch: string) => '=!(),><'.includes(ch);

function lex(text: string): Scanned[] {
  const out: Scanned[] = [];
  let i = 0;
  for (;;) {
    while (i < text.length && isWhitespace(text[i])) i++;
    if (i >= text.length) {
      out.push({ tok: 'end', lit: '' });
      return out;
    }
    if (isSpecial(text[i])) {
      // Longest run of special characters that still forms a known symbol ("!=", "==", "=").
      let buffer = '';
      let last: Scanned | undefined;
      while (i < text.length && isSpecial(text[i])) {
        const candidate = buffer + text[i];
        const tok = SYMBOLS.get(candidate);
        if (tok) {
          buffer = candidate;
          last = { tok, lit: candidate };
          i++;
        } else if (last) {
          break;
        } else {
          buffer = candidate;
          i++;
        }
      }
      out.push(last ?? { tok: 'error', lit: buffer });
      if (!last) return [...out, { tok: 'end', lit: '' }];
      continue;
    }
    let word = '';
    while (i < text.length && !isSpecial(text[i]) && !isWhitespace(text[i])) word += text[i++];
    out.push({ tok: word === 'in' ? 'in' : word === 'notin' ? 'notin' : 'identifier', lit: word });
  }
}

class LabelParser {
  private position = 0;

  constructor(private readonly items: Scanned[]) {}

  /** In "values" context the keywords in/notin are plain identifiers. */
  lookahead(values: boolean): Scanned {
    const item = this.items[Math.min(this.position, this.items.length - 1)];
    if (values && (item.tok === 'in' || item.tok === 'notin')) return { tok: 'identifier', lit: item.lit };
    return item;
  }

  consume(values: boolean): Scanned {
    const item = this.lookahead(values);
    if (this.position < this.items.length - 1) this.position++;
    return item;
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    for (;;) {
      const next = this.lookahead(true);
      if (next.tok === 'end') return requirements;
      if (next.tok !== 'identifier' && next.tok !== '!') {
        throw new Error(`found ${quote(next)}, expected: !, identifier, or 'end of string'`);
      }
      requirements.push(this.parseRequirement());
      const after = this.consume(true);
      if (after.tok === 'end') return requirements;
      if (after.tok !== ',') throw new Error(`found ${quote(after)}, expected: ',' or 'end of string'`);
      const following = this.lookahead(true);
      if (following.tok !== 'identifier' && following.tok !== '!') {
        throw new Error(`found ${quote(following)}, expected: identifier after ','`);
      }
    }
  }

  private parseRequirement(): LabelRequirement {
    let token = this.consume(true);
    let negated = false;
    if (token.tok === '!') {
      negated = true;
      token = this.consume(true);
    }
    if (token.tok !== 'identifier') throw new Error(`found ${quote(token)}, expected: identifier`);
    const key = token.lit;
    const next = this.lookahead(true).tok;
    if (next === 'end' || next === ',') return makeRequirement(key, negated ? 'DoesNotExist' : 'Exists', []);
    if (negated) throw new Error(`found ${quote(this.lookahead(true))}, expected: ',' or 'end of string' after '!${key}'`);
    const operatorToken = this.consume(false);
    switch (operatorToken.tok) {
      case 'in':
        return makeRequirement(key, 'In', this.parseValueSet());
      case 'notin':
        return makeRequirement(key, 'NotIn', this.parseValueSet());
      case '=':
      case '==':
        return makeRequirement(key, 'Equals', this.parseExactValue());
      case '!=':
        return makeRequirement(key, 'NotEquals', this.parseExactValue());
      case '>':
        return makeRequirement(key, 'GreaterThan', this.parseExactValue());
      case '<':
        return makeRequirement(key, 'LessThan', this.parseExactValue());
      default:
        throw new Error(`found ${quote(operatorToken)}, expected: in, notin, =, ==, !=, gt (>), lt (<)`);
    }
  }

  private parseValueSet(): string[] {
    const open = this.consume(true);
    if (open.tok !== '(') throw new Error(`found ${quote(open)}, expected: '('`);
    const first = this.lookahead(true);
    if (first.tok === ')') {
      this.consume(true);
      return [''];
    }
    if (first.tok !== 'identifier' && first.tok !== ',') {
      throw new Error(`found ${quote(first)}, expected: ',', ')' or identifier`);
    }
    const values: string[] = [];
    // A comma with nothing before or after it contributes the empty value, as in Kubernetes.
    let expectValue = true;
    for (;;) {
      const token = this.consume(true);
      if (token.tok === 'identifier' && expectValue) {
        values.push(token.lit);
        expectValue = false;
      } else if (token.tok === ',') {
        if (expectValue) values.push('');
        expectValue = true;
      } else if (token.tok === ')') {
        if (expectValue) values.push('');
        return values;
      } else {
        throw new Error(`found ${quote(token)}, expected: ',' or ')'`);
      }
    }
  }

  private parseExactValue(): string[] {
    const next = this.lookahead(true);
    if (next.tok === 'end' || next.tok === ',') return [''];
    const token = this.consume(true);
    if (token.tok !== 'identifier') throw new Error(`found ${quote(token)}, expected: identifier`);
    return [token.lit];
  }
}

function quote(item: Scanned): string {
  if (item.tok === 'end') return "'end of string'";
  if (item.tok === 'error') return `'${item.lit}' (not an operator)`;
  return `'${item.lit}'`;
}

function makeRequirement(key: string, operator: LabelOperator, rawValues: string[]): LabelRequirement {
  const keyProblem = labelKeyProblem(key);
  if (keyProblem) throw new Error(`key ${JSON.stringify(key)} is invalid: ${keyProblem}`);
  const values = [...new Set(rawValues)].sort();
  for (const value of values) {
    const problem = labelValueProblem(value);
    if (problem) throw new Error(`value ${JSON.stringify(value)} for key ${JSON.stringify(key)} is invalid: ${problem}`);
  }
  if ((operator === 'GreaterThan' || operator === 'LessThan') && parseInt64(values[0] ?? '') === undefined) {
    throw new Error(`value ${JSON.stringify(values[0] ?? '')} for key ${JSON.stringify(key)} must be an integer for '>' and '<'`);
  }
  return { key, operator, values };
}

/** Parses a label selector string. Throws SelectorError quoting the text and the bad part. */
export function parseLabelSelector(text: string): LabelSelector {
  try {
    const requirements = new LabelParser(lex(text)).parse();
    return { requirements: sortByKey(requirements) };
  } catch (err) {
    throw new SelectorError(`invalid label selector ${JSON.stringify(text)}: ${(err as Error).message}`);
  }
}

/**
 * Converts a metav1.LabelSelector object (`{matchLabels, matchExpressions}`, as found in
 * Deployment/Service-like specs and ListOptions) into a LabelSelector. `{}` matches everything.
 */
export function labelSelectorFromObject(selector: unknown): LabelSelector {
  const fail = (message: string): never => {
    throw new SelectorError(`invalid label selector object: ${message}`);
  };
  if (typeof selector !== 'object' || selector === null || Array.isArray(selector)) fail('must be an object');
  const { matchLabels, matchExpressions } = selector as { matchLabels?: unknown; matchExpressions?: unknown };
  const requirements: LabelRequirement[] = [];
  const attempt = (build: () => LabelRequirement, where: string) => {
    try {
      requirements.push(build());
    } catch (err) {
      fail(`${where}: ${(err as Error).message}`);
    }
  };
  if (matchLabels !== undefined && matchLabels !== null) {
    if (typeof matchLabels !== 'object' || Array.isArray(matchLabels)) fail('matchLabels must be a map of strings');
    for (const [key, value] of Object.entries(matchLabels as Record<string, unknown>)) {
      if (typeof value !== 'string') fail(`matchLabels.${key} must be a string`);
      attempt(() => makeRequirement(key, 'Equals', [value as string]), `matchLabels.${key}`);
    }
  }
  if (matchExpressions !== undefined && matchExpressions !== null) {
    if (!Array.isArray(matchExpressions)) fail('matchExpressions must be a list');
    (matchExpressions as unknown[]).forEach((expression, i) => {
      const where = `matchExpressions[${i}]`;
      if (typeof expression !== 'object' || expression === null) fail(`${where} must be an object`);
      const { key, operator, values } = expression as { key?: unknown; operator?: unknown; values?: unknown };
      if (typeof key !== 'string') fail(`${where}.key must be a string`);
      const list = values === undefined || values === null ? [] : values;
      if (!Array.isArray(list) || !list.every((v) => typeof v === 'string')) fail(`${where}.values must be a list of strings`);
      const strings = list as string[];
      switch (operator) {
        case 'In':
        case 'NotIn':
          if (strings.length === 0) fail(`${where}.values must be non-empty for operator ${operator}`);
          attempt(() => makeRequirement(key as string, operator, strings), where);
          break;
        case 'Exists':
        case 'DoesNotExist':
          if (strings.length !== 0) fail(`${where}.values must be empty for operator ${operator}`);
          attempt(() => makeRequirement(key as string, operator, []), where);
          break;
        default:
          fail(`${where}.operator ${JSON.stringify(operator)} is not one of In, NotIn, Exists, DoesNotExist`);
      }
    });
  }
  return { requirements: sortByKey(requirements) };
}

function sortByKey(requirements: LabelRequirement[]): LabelRequirement[] {
  return requirements
    .map((r, i) => ({ r, i }))
    .sort((a, b) => (a.r.key < b.r.key ? -1 : a.r.key > b.r.key ? 1 : a.i - b.i))
    .map(({ r }) => r);
}

export function matchesLabelSelector(selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  return selector.requirements.every((requirement) => matchesRequirement(requirement, labels ?? {}));
}

function matchesRequirement(requirement: LabelRequirement, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, requirement.key);
  const value = has ? labels[requirement.key] : undefined;
  switch (requirement.operator) {
    case 'Equals':
    case 'In':
      return value !== undefined && requirement.values.includes(value);
    case 'NotEquals':
    case 'NotIn':
      return value === undefined || !requirement.values.includes(value);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'GreaterThan':
    case 'LessThan': {
      const actual = value === undefined ? undefined : parseInt64(value);
      const bound = parseInt64(requirement.values[0] ?? '');
      if (actual === undefined || bound === undefined) return false;
      return requirement.operator === 'GreaterThan' ? actual > bound : actual < bound;
    }
  }
}

/** The canonical string form, as Kubernetes prints it (`a=b,c in (d,e),!f`). */
export function formatLabelSelector(selector: LabelSelector): string {
  return selector.requirements
    .map(({ key, operator, values }) => {
      switch (operator) {
        case 'Equals':
          return `${key}=${values[0] ?? ''}`;
        case 'NotEquals':
          return `${key}!=${values[0] ?? ''}`;
        case 'In':
          return `${key} in (${values.join(',')})`;
        case 'NotIn':
          return `${key} notin (${values.join(',')})`;
        case 'Exists':
          return key;
        case 'DoesNotExist':
          return `!${key}`;
        case 'GreaterThan':
          return `${key}>${values[0] ?? ''}`;
        case 'LessThan':
          return `${key}<${values[0] ?? ''}`;
      }
    })
    .join(',');
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function parseInt64(text: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value < INT64_MIN || value > INT64_MAX ? undefined : value;
}

// ---------------------------------------------------------------------------------------------
// Label key / value validation (k8s.io/apimachinery/pkg/util/validation)

const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const NAME_RULE = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** Why `key` is not a valid label key (a qualified name), or undefined when it is valid. */
export function labelKeyProblem(key: string): string | undefined {
  const parts = key.split('/');
  let name = key;
  if (parts.length > 2) return "a qualified name must have at most one '/' (an optional DNS subdomain prefix and a name)";
  if (parts.length === 2) {
    const [prefix, rest] = parts as [string, string];
    if (prefix.length === 0) return 'prefix part must be non-empty';
    if (prefix.length > 253) return 'prefix part must be no more than 253 characters';
    if (!DNS1123_SUBDOMAIN.test(prefix)) {
      return "prefix part must be a lowercase RFC 1123 subdomain: lowercase alphanumeric characters, '-' or '.', starting and ending with an alphanumeric character";
    }
    name = rest;
  }
  if (name.length === 0) return 'name part must be non-empty';
  if (name.length > 63) return 'name part must be no more than 63 characters';
  if (!QUALIFIED_NAME_PART.test(name)) return `name part ${NAME_RULE}`;
  return undefined;
}

/** Why `value` is not a valid label value, or undefined when it is valid (the empty string is). */
export function labelValueProblem(value: string): string | undefined {
  if (value === '') return undefined;
  if (value.length > 63) return 'must be no more than 63 characters';
  if (!QUALIFIED_NAME_PART.test(value)) return `a label value ${NAME_RULE}`;
  return undefined;
}
