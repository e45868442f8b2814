/**
 * The built-in CustomResourceDefinition: its defaults and validation as the real server applies
 * them (names, versions, structural schemas, API approval of protected groups, conversion), the
 * cleanup finalizer its deletion gets, and the columns `kubectl get` prints.
 */
import { fieldForbidden, fieldInvalid, fieldNotSupported, fieldRequired, type StatusCause } from '../../base/errors.js';
import { isJsonObject, stringOf, stringsOf, type JsonObject, type JsonValue } from '../../base/json.js';
import { finalizersOf, metaOf, nameOf, readMeta } from '../../base/meta.js';
import { pruneUnknownCrdFields, schemaProblems } from '../crd-structure.js';
import type { ResourceType, Strategy } from '../registry.js';
import { dns1035Label, dns1123Label, dns1123Subdomain } from '../validation.js';
import { clientConfigCauses } from './admission-webhooks.js';
import { builtin, column, str } from './builtin.js';

/** Held by a CRD being deleted until its custom resources are gone (crds.ts releases it). */
export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

/** Sets a condition of a CRD's status, its lastTransitionTime kept while its status stays. */
export function setCondition(status: JsonObject, type: string, value: string, reason: string, message: string, now: string): void {
  const conditions = Array.isArray(status.conditions) ? status.conditions.filter(isJsonObject) : [];
  const existing = conditions.find((c) => c.type === type);
  if (existing && existing.status === value && existing.reason === reason && existing.message === message) {
    status.conditions = conditions;
    return;
  }
  const next: JsonObject = {
    type,
    status: value,
    lastTransitionTime: existing && existing.status === value ? (existing.lastTransitionTime ?? now) : now,
    reason,
    message,
  };
  status.conditions = existing ? conditions.map((c) => (c === existing ? next : c)) : [...conditions, next];
}

const API_APPROVED = 'api-approved.kubernetes.io';

/** Groups owned by the Kubernetes project, where the real server wants an API review's approval. */
function isProtectedGroup(group: string): boolean {
  return group === 'k8s.io' || group === 'kubernetes.io' || group.endsWith('.k8s.io') || group.endsWith('.kubernetes.io');
}

/**
 * The real server's API approval rule: a CRD in a protected group needs the
 * `api-approved.kubernetes.io` annotation, a URL of the approving review or a value starting with
 * "unapproved" (an explicit bypass). Without it any user allowed to create CRDs could claim
 * rbac.authorization.k8s.io and the like.
 */
function apiApprovalProblem(group: string, annotations: JsonValue | undefined): StatusCause | undefined {
  if (!isProtectedGroup(group)) return undefined;
  const field = `metadata.annotations[${API_APPROVED}]`;
  const value = isJsonObject(annotations) ? annotations[API_APPROVED] : undefined;
  if (typeof value !== 'string' || value === '') {
    return fieldRequired(
      field,
      `protected groups must have approval annotation "${API_APPROVED}", see https://github.com/kubernetes/enhancements/pull/1111`,
    );
  }
  if (value.startsWith('unapproved')) return undefined;
  try {
    new URL(value);
    return undefined;
  } catch {
    return fieldInvalid(
      field,
      value,
      'protected groups must have approval annotation "api-approved.kubernetes.io" with either a URL or a reason starting with "unapproved"',
    );
  }
}

/** spec.conversion: a Webhook strategy needs its webhook, with a v1 review version and a valid client config. */
function conversionCauses(conversion: JsonValue | undefined): StatusCause[] {
  if (!isJsonObject(conversion)) return [];
  const strategy = conversion.strategy;
  if (strategy !== 'None' && strategy !== 'Webhook')
    return [fieldNotSupported('spec.conversion.strategy', strategy ?? '', ['None', 'Webhook'])];
  if (strategy === 'None') {
    return isJsonObject(conversion.webhook)
      ? [fieldForbidden('spec.conversion.webhook', 'should not be set when strategy is not set to Webhook')]
      : [];
  }
  if (!isJsonObject(conversion.webhook)) return [fieldRequired('spec.conversion.webhook', 'required when strategy is set to Webhook')];
  const causes: StatusCause[] = [];
  const versions = Array.isArray(conversion.webhook.conversionReviewVersions) ? conversion.webhook.conversionReviewVersions : [];
  if (versions.length === 0)
    causes.push(fieldRequired('spec.conversion.webhook.conversionReviewVersions', 'must specify one of v1, v1beta1'));
  else if (!versions.some((v) => v === 'v1' || v === 'v1beta1'))
    causes.push(fieldInvalid('spec.conversion.webhook.conversionReviewVersions', versions, 'must include at least one of v1, v1beta1'));
  causes.push(...clientConfigCauses('spec.conversion.webhook.clientConfig', conversion.webhook.clientConfig));
  return causes;
}

const crdStrategy: Strategy = {
  pruneUnknownFields: pruneUnknownCrdFields,
  prepareForCreate(obj) {
    obj.status = { conditions: [], acceptedNames: { plural: '', kind: '' }, storedVersions: [] };
  },
  defaults(obj) {
    const spec = isJsonObject(obj.spec) ? obj.spec : (obj.spec = {});
    const names = isJsonObject(spec.names) ? spec.names : (spec.names = {});
    if (typeof names.kind === 'string') {
      if (!names.singular) names.singular = names.kind.toLowerCase();
      if (!names.listKind) names.listKind = `${names.kind}List`;
    }
    if (!isJsonObject(spec.conversion)) spec.conversion = { strategy: 'None' };
    const hook = isJsonObject(spec.conversion.webhook) ? spec.conversion.webhook : undefined;
    const service =
      hook && isJsonObject(hook.clientConfig) && isJsonObject(hook.clientConfig.service) ? hook.clientConfig.service : undefined;
    if (service && (service.port === undefined || service.port === null)) service.port = 443;
    if (Array.isArray(spec.versions)) {
      for (const v of spec.versions) {
        if (!isJsonObject(v)) continue;
        if (v.served === undefined) v.served = true;
        if (v.storage === undefined) v.storage = spec.versions.length === 1;
      }
    }
  },
  validate(obj, old) {
    const causes: StatusCause[] = [];
    const spec = isJsonObject(obj.spec) ? obj.spec : {};
    const group = stringOf(spec.group);
    const names = isJsonObject(spec.names) ? spec.names : {};
    const plural = stringOf(names.plural);
    if (!group) causes.push(fieldRequired('spec.group', ''));
    else {
      for (const e of dns1123Subdomain(group)) causes.push(fieldInvalid('spec.group', group, e));
      if (!group.includes('.')) causes.push(fieldInvalid('spec.group', group, 'should be a domain with at least one dot'));
      const approval = apiApprovalProblem(group, metaOf(obj).annotations);
      if (approval) causes.push(approval);
    }
    if (!plural) causes.push(fieldRequired('spec.names.plural', ''));
    else for (const e of dns1123Label(plural)) causes.push(fieldInvalid('spec.names.plural', plural, e));
    if (!stringOf(names.kind)) causes.push(fieldRequired('spec.names.kind', ''));
    if (stringOf(names.singular))
      for (const e of dns1123Label(stringOf(names.singular))) causes.push(fieldInvalid('spec.names.singular', names.singular, e));
    stringsOf(names.shortNames).forEach((short, i) => {
      for (const e of dns1123Label(short)) causes.push(fieldInvalid(`spec.names.shortNames[${i}]`, short, e));
    });
    if (spec.preserveUnknownFields === true) {
      causes.push(
        fieldInvalid(
          'spec.preserveUnknownFields',
          true,
          'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
        ),
      );
    }
    if (plural && group && nameOf(obj) !== `${plural}.${group}`) {
      causes.push(fieldInvalid('metadata.name', nameOf(obj), 'must be spec.names.plural+"."+spec.group'));
    }
    if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
      causes.push(fieldInvalid('spec.scope', spec.scope ?? '', 'supported values: "Cluster", "Namespaced"'));
    }
    const versions = Array.isArray(spec.versions) ? spec.versions.filter(isJsonObject) : [];
    if (versions.length === 0) causes.push(fieldRequired('spec.versions', 'must have exactly one version marked as storage version'));
    else {
      const storage = versions.filter((v) => v.storage === true).length;
      if (storage !== 1) causes.push(fieldInvalid('spec.versions', storage, 'must have exactly one version marked as storage version'));
      const seen = new Set<string>();
      versions.forEach((v, i) => {
        const name = stringOf(v.name);
        if (!name) causes.push(fieldRequired(`spec.versions[${i}].name`, ''));
        else for (const e of dns1035Label(name)) causes.push(fieldInvalid(`spec.versions[${i}].name`, name, e));
        if (name && seen.has(name)) causes.push(fieldInvalid(`spec.versions[${i}].name`, name, 'must be unique'));
        seen.add(name);
        const schema = isJsonObject(v.schema) ? v.schema.openAPIV3Schema : undefined;
        causes.push(...schemaProblems(schema, `spec.versions[${i}].schema.openAPIV3Schema`));
      });
    }
    if (old && isJsonObject(old.spec)) {
      if (old.spec.scope !== spec.scope) causes.push(fieldInvalid('spec.scope', spec.scope ?? '', 'field is immutable'));
      if (old.spec.group !== spec.group) causes.push(fieldInvalid('spec.group', spec.group ?? '', 'field is immutable'));
    }
    causes.push(...conversionCauses(spec.conversion));
    return causes;
  },
  prepareForDelete(obj, ctx) {
    const meta = metaOf(obj);
    const finalizers = finalizersOf(obj);
    if (!finalizers.includes(CLEANUP_FINALIZER)) meta.finalizers = [...finalizers, CLEANUP_FINALIZER];
    const status = isJsonObject(obj.status) ? obj.status : (obj.status = {});
    setCondition(
      status,
      'Terminating',
      'True',
      'InstanceDeletionPending',
      'CustomResourceDefinition marked for deletion; instance deletion pending',
      ctx.now,
    );
  },
};

export function customResourceDefinitionType(): ResourceType {
  return builtin({
    group: 'apiextensions.k8s.io',
    version: 'v1',
    plural: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    status: true,
    generation: true,
    returnDeletedObject: true,
    strategy: crdStrategy,
    age: false,
    columns: [column('Created At', 'date', (o) => str(readMeta(o).creationTimestamp))],
  });
}
