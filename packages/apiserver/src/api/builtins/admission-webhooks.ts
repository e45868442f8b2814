/**
 * What ValidatingWebhookConfiguration and MutatingWebhookConfiguration share: the defaults and the
 * validation of their webhooks, as the real server's admissionregistration validation words them.
 */
import type { StatusCause } from '../../base/errors.js';
import { fieldInvalid, fieldNotSupported, fieldRequired } from '../../base/errors.js';
import { compileExpression } from '../../grammar/cel.js';
import type { JsonObject, JsonValue } from '../../base/json.js';
import { isJsonObject } from '../../base/json.js';
import { labelSelectorFromObject } from '../../grammar/label-selector.js';
import type { PrinterColumn } from '../registry.js';
import { dns1123Label, dns1123Subdomain } from '../validation.js';
import { column } from './builtin.js';
import { setDefault } from './defaults.js';

const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const REVIEW_VERSIONS = ['v1', 'v1beta1'];
/** The variables a webhook's matchConditions may name. */
export const MATCH_CONDITION_VARIABLES = ['object', 'oldObject', 'request', 'authorizer'];

const list = (v: JsonValue | undefined): JsonValue[] => (Array.isArray(v) ? v : []);

/** Defaults of one webhook (SetDefaults_ValidatingWebhook / SetDefaults_MutatingWebhook). */
export function defaultWebhook(hook: JsonObject, mutating: boolean): void {
  setDefault(hook, 'failurePolicy', 'Fail');
  setDefault(hook, 'matchPolicy', 'Equivalent');
  setDefault(hook, 'namespaceSelector', {});
  setDefault(hook, 'objectSelector', {});
  setDefault(hook, 'timeoutSeconds', 10);
  if (mutating) setDefault(hook, 'reinvocationPolicy', 'Never');
  for (const rule of list(hook.rules)) if (isJsonObject(rule)) setDefault(rule, 'scope', '*');
  const service = isJsonObject(hook.clientConfig) ? hook.clientConfig.service : undefined;
  if (isJsonObject(service)) setDefault(service, 'port', 443);
}

export function defaultWebhooks(obj: JsonObject, mutating: boolean): void {
  for (const hook of list(obj.webhooks)) if (isJsonObject(hook)) defaultWebhook(hook, mutating);
}

/** The real server's webhook URL checks (util/webhook ValidateWebhookURL, HTTPS forced). */
function urlCauses(at: string, text: string): StatusCause[] {
  const form = '; desired format: https://host[/path]';
  let u: URL;
  try {
    u = new URL(text);
  } catch (err) {
    return [fieldRequired(at, `url must be a valid URL: ${(err as Error).message}${form}`)];
  }
  const causes: StatusCause[] = [];
  if (u.protocol !== 'https:') causes.push(fieldInvalid(at, u.protocol.replace(/:$/, ''), `'https' is the only allowed URL scheme${form}`));
  if (u.host === '') causes.push(fieldInvalid(at, u.host, `host must be specified${form}`));
  if (u.username !== '' || u.password !== '') causes.push(fieldInvalid(at, u.username, 'user information is not permitted in the URL'));
  if (u.hash !== '') causes.push(fieldInvalid(at, u.hash.slice(1), 'fragments are not permitted in the URL'));
  if (u.search !== '') causes.push(fieldInvalid(at, u.search.slice(1), 'query parameters are not permitted in the URL'));
  return causes;
}

/** A webhook client config: exactly one of url and service, HTTPS only, a valid service reference. */
export function clientConfigCauses(at: string, config: JsonValue | undefined): StatusCause[] {
  const c = isJsonObject(config) ? config : {};
  const hasUrl = typeof c.url === 'string';
  const hasService = isJsonObject(c.service);
  if (hasUrl === hasService) return [fieldRequired(at, 'exactly one of url or service is required')];
  if (typeof c.caBundle === 'string' && !/^[A-Za-z0-9+/]*={0,2}$/.test(c.caBundle))
    return [fieldInvalid(`${at}.caBundle`, '<value omitted>', 'illegal base64 data')];
  if (hasUrl) return urlCauses(`${at}.url`, c.url as string);
  const s = c.service as JsonObject;
  const causes: StatusCause[] = [];
  if (typeof s.name !== 'string' || s.name === '') causes.push(fieldRequired(`${at}.service.name`, 'service name is required'));
  if (typeof s.namespace !== 'string' || s.namespace === '')
    causes.push(fieldRequired(`${at}.service.namespace`, 'service namespace is required'));
  const port = s.port;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
    causes.push(fieldInvalid(`${at}.service.port`, port ?? null, 'port is not valid: must be between 1 and 65535, inclusive'));
  }
  if (s.path !== undefined && s.path !== null) {
    if (typeof s.path !== 'string' || !s.path.startsWith('/'))
      causes.push(fieldInvalid(`${at}.service.path`, s.path, "must start with a '/'"));
  }
  return causes;
}

function stringsCauses(at: string, v: JsonValue | undefined, allowed?: readonly string[], emptyAllowed = false): StatusCause[] {
  const values = list(v);
  if (values.length === 0) return [fieldRequired(at, '')];
  const causes: StatusCause[] = [];
  values.forEach((x, i) => {
    if (typeof x !== 'string' || (x === '' && !emptyAllowed)) causes.push(fieldRequired(`${at}[${i}]`, ''));
    else if (allowed && !allowed.includes(x)) causes.push(fieldNotSupported(`${at}[${i}]`, x, allowed));
  });
  if (values.includes('*') && values.length > 1) causes.push(fieldInvalid(at, values, "if '*' is present, must not specify other values"));
  return causes;
}

function ruleCauses(at: string, rule: JsonValue): StatusCause[] {
  if (!isJsonObject(rule)) return [fieldInvalid(at, rule, 'must be an object')];
  const causes = [
    ...stringsCauses(`${at}.operations`, rule.operations, OPERATIONS),
    // The core group is the empty string.
    ...stringsCauses(`${at}.apiGroups`, rule.apiGroups, undefined, true),
    ...stringsCauses(`${at}.apiVersions`, rule.apiVersions),
  ];
  const resources = list(rule.resources);
  if (resources.length === 0) causes.push(fieldRequired(`${at}.resources`, ''));
  resources.forEach((r, i) => {
    if (typeof r !== 'string' || r === '') causes.push(fieldRequired(`${at}.resources[${i}]`, ''));
    else if (r.split('/').length > 2) causes.push(fieldInvalid(`${at}.resources[${i}]`, r, "must not contain more than one '/'"));
  });
  if (rule.scope !== undefined && !SCOPES.includes(String(rule.scope))) causes.push(fieldNotSupported(`${at}.scope`, rule.scope, SCOPES));
  return causes;
}

/** A label selector field that does not parse. */
export function selectorCauses(at: string, selector: JsonValue | undefined): StatusCause[] {
  if (selector === undefined || selector === null) return [];
  try {
    labelSelectorFromObject(selector);
    return [];
  } catch (err) {
    return [fieldInvalid(at, selector, (err as Error).message)];
  }
}

function matchConditionCauses(at: string, conditions: JsonValue | undefined): StatusCause[] {
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  const all = list(conditions);
  if (all.length > 64)
    causes.push({ reason: 'FieldValueTooMany', message: `Too many: ${all.length}: must have at most 64 items`, field: at });
  all.forEach((c, i) => {
    const here = `${at}[${i}]`;
    const cond = isJsonObject(c) ? c : {};
    const name = cond.name;
    if (typeof name !== 'string' || name === '') causes.push(fieldRequired(`${here}.name`, ''));
    else if (seen.has(name))
      causes.push({ reason: 'FieldValueDuplicate', message: `Duplicate value: ${JSON.stringify(name)}`, field: `${here}.name` });
    else seen.add(name);
    if (typeof cond.expression !== 'string' || cond.expression === '') {
      causes.push(fieldRequired(`${here}.expression`, ''));
      return;
    }
    const compiled = compileExpression(cond.expression, MATCH_CONDITION_VARIABLES);
    if (!compiled.ok) causes.push(fieldInvalid(`${here}.expression`, cond.expression, `compilation failed: ${compiled.error}`));
  });
  return causes;
}

/** A webhook name: a DNS subdomain of at least three segments (ValidateWebhook). */
function webhookNameCauses(at: string, name: JsonValue | undefined): StatusCause[] {
  if (typeof name !== 'string' || name === '') return [fieldRequired(at, '')];
  const problems = dns1123Subdomain(name);
  if (problems.length) return problems.map((p) => fieldInvalid(at, name, p));
  if (name.split('.').length < 3) return [fieldInvalid(at, name, 'should be a domain with at least three segments separated by dots')];
  return [];
}

function webhookCauses(at: string, hook: JsonValue, mutating: boolean): StatusCause[] {
  if (!isJsonObject(hook)) return [fieldInvalid(at, hook, 'must be an object')];
  const causes = webhookNameCauses(`${at}.name`, hook.name);
  list(hook.rules).forEach((r, i) => causes.push(...ruleCauses(`${at}.rules[${i}]`, r)));
  if (!['Fail', 'Ignore'].includes(String(hook.failurePolicy)))
    causes.push(fieldNotSupported(`${at}.failurePolicy`, hook.failurePolicy, ['Fail', 'Ignore']));
  if (!['Equivalent', 'Exact'].includes(String(hook.matchPolicy)))
    causes.push(fieldNotSupported(`${at}.matchPolicy`, hook.matchPolicy, ['Equivalent', 'Exact']));
  if (hook.sideEffects === undefined || hook.sideEffects === null)
    causes.push(fieldRequired(`${at}.sideEffects`, 'must specify one of None, NoneOnDryRun'));
  else if (!['None', 'NoneOnDryRun'].includes(String(hook.sideEffects)))
    causes.push(fieldNotSupported(`${at}.sideEffects`, hook.sideEffects, ['None', 'NoneOnDryRun']));
  const t = hook.timeoutSeconds;
  if (typeof t !== 'number' || !Number.isInteger(t) || t < 1 || t > 30)
    causes.push(fieldInvalid(`${at}.timeoutSeconds`, t ?? null, 'the timeout value must be between 1 and 30 seconds'));
  const versions = list(hook.admissionReviewVersions);
  if (versions.length === 0)
    causes.push(fieldRequired(`${at}.admissionReviewVersions`, `must specify one of ${REVIEW_VERSIONS.join(', ')}`));
  else if (!versions.some((v) => typeof v === 'string' && REVIEW_VERSIONS.includes(v))) {
    causes.push(fieldInvalid(`${at}.admissionReviewVersions`, versions, `must include at least one of ${REVIEW_VERSIONS.join(', ')}`));
  }
  versions.forEach((v, i) => {
    if (typeof v !== 'string' || dns1123Label(v).length)
      causes.push(fieldInvalid(`${at}.admissionReviewVersions[${i}]`, v, 'a lowercase RFC 1123 label'));
  });
  if (mutating && !['Never', 'IfNeeded'].includes(String(hook.reinvocationPolicy))) {
    causes.push(fieldNotSupported(`${at}.reinvocationPolicy`, hook.reinvocationPolicy, ['IfNeeded', 'Never']));
  }
  causes.push(...clientConfigCauses(`${at}.clientConfig`, hook.clientConfig));
  causes.push(...selectorCauses(`${at}.namespaceSelector`, hook.namespaceSelector));
  causes.push(...selectorCauses(`${at}.objectSelector`, hook.objectSelector));
  causes.push(...matchConditionCauses(`${at}.matchConditions`, hook.matchConditions));
  return causes;
}

/** The causes a configuration's webhooks give: each webhook's, and names unique within the configuration. */
export function webhooksCauses(obj: JsonObject, mutating: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  list(obj.webhooks).forEach((hook, i) => {
    causes.push(...webhookCauses(`webhooks[${i}]`, hook, mutating));
    const name = isJsonObject(hook) ? hook.name : undefined;
    if (typeof name === 'string' && name !== '') {
      if (seen.has(name))
        causes.push({ reason: 'FieldValueDuplicate', message: `Duplicate value: ${JSON.stringify(name)}`, field: `webhooks[${i}].name` });
      seen.add(name);
    }
  });
  return causes;
}

/** `kubectl get` of a configuration: its name and how many webhooks it holds. */
export const WEBHOOK_CONFIGURATION_COLUMNS: PrinterColumn[] = [
  { ...column('Name', 'string', (o) => String((o.metadata as JsonObject | undefined)?.name ?? '')), format: 'name' },
  column('Webhooks', 'integer', (o) => list(o.webhooks).length),
];
