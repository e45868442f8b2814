// Label and field selectors, as objects and as the strings a request carries.
export interface LabelSelectorRequirement {
  key: string;
  // eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents -- names the operators the server knows for the reader; any other passes on for the server to refuse
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | string;
  values?: string[];
}

/** A Kubernetes LabelSelector object (same shape as client-node's V1LabelSelector). */
export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** A selector as a ready string, as `{ key: value }` equalities, or as a LabelSelector object. */
export type LabelSelector = string | Record<string, string> | LabelSelectorObject;
export type FieldSelector = string | Record<string, string>;

/** Formats a label selector for the `labelSelector` query parameter; '' selects everything. */
export function formatLabelSelector(selector: LabelSelector | undefined): string {
  if (selector === undefined) return '';
  if (typeof selector === 'string') return selector.trim();
  if (isSelectorObject(selector)) {
    const parts = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => equality('labelSelector', k, v));
    for (const req of selector.matchExpressions ?? []) parts.push(requirement(req));
    return parts.join(',');
  }
  return Object.entries(selector)
    .map(([k, v]) => equality('labelSelector', k, v))
    .join(',');
}

/** Formats a field selector (`metadata.name=x,status.phase!=Failed`); '' selects everything. */
export function formatFieldSelector(selector: FieldSelector | undefined): string {
  if (selector === undefined) return '';
  if (typeof selector === 'string') return selector.trim();
  return Object.entries(selector)
    .map(([k, v]) => equality('fieldSelector', k, v))
    .join(',');
}

function isSelectorObject(s: Record<string, unknown> | LabelSelectorObject): s is LabelSelectorObject {
  const keys = Object.keys(s);
  return (
    keys.length > 0 &&
    keys.every((k) => k === 'matchLabels' || k === 'matchExpressions') &&
    Object.values(s).every((v) => typeof v === 'object' && v !== null)
  );
}

function equality(param: string, key: string, value: unknown): string {
  if (typeof value !== 'string') {
    throw new Error(`${param}: value of '${key}' must be a string (got ${JSON.stringify(value)})`);
  }
  checkKey(param, key);
  if (/[,=!()\s]/.test(value)) throw new Error(`${param}: value '${value}' of '${key}' contains a character selectors cannot carry`);
  return `${key}=${value}`;
}

function requirement(req: LabelSelectorRequirement): string {
  checkKey('labelSelector', req.key);
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) {
        throw new Error(`labelSelector: operator ${req.operator} on '${req.key}' needs at least one value`);
      }
      return `${req.key} ${req.operator === 'In' ? 'in' : 'notin'} (${values.join(',')})`;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) throw new Error(`labelSelector: operator ${req.operator} on '${req.key}' takes no values`);
      return req.operator === 'Exists' ? req.key : `!${req.key}`;
    default:
      throw new Error(`labelSelector: operator '${req.operator}' on '${req.key}' is not one of In, NotIn, Exists, DoesNotExist`);
  }
}

function checkKey(param: string, key: string): void {
  if (key.length === 0 || /[,=!()\s]/.test(key)) throw new Error(`${param}: invalid key '${key}'`);
}
