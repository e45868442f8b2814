/**
 * `pods/binding` (the real server's BindingREST): a v1 Binding assigns a Pod to a Node, once.
 * `spec.nodeName`, the Binding's annotations and the `PodScheduled` condition change in one
 * write; a Pod already assigned or being deleted answers 409 in the real server's words. The
 * simulated scheduler binds through here too. Pure: subresources.ts reads the Pod and commits the result.
 */
import { badRequest, conflict, invalid, type StatusCause } from '../base/errors.js';
import type { JsonObject, JsonValue } from '../base/json.js';
import { deepClone, isJsonObject } from '../base/json.js';
import { getPath, isBeingDeleted, readMeta } from '../base/meta.js';

const BINDING = { group: '', plural: 'pods/binding' };

/** The node a Binding targets; 400 or 422 as the real server answers a bad one. */
export function bindingTarget(binding: JsonValue, namespace: string, name: string): string {
  if (!isJsonObject(binding)) throw badRequest('the body of the request must be a Binding object');
  if (binding.kind !== undefined && binding.kind !== 'Binding')
    throw badRequest(`the kind in the data (${String(binding.kind)}) does not match the expected kind (Binding)`);
  const bindingNamespace = readMeta(binding).namespace;
  if (bindingNamespace !== undefined && bindingNamespace !== '' && bindingNamespace !== namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const bindingName = readMeta(binding).name;
  if (bindingName !== undefined && bindingName !== '' && bindingName !== name)
    throw badRequest('name in URL does not match name in Binding object');
  const target = isJsonObject(binding.target) ? binding.target : {};
  const causes: StatusCause[] = [];
  if (target.kind !== undefined && target.kind !== '' && target.kind !== 'Node') {
    causes.push({
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(target.kind)}: supported values: "Node"`,
      field: 'target.kind',
    });
  }
  if (typeof target.name !== 'string' || target.name === '')
    causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: 'target.name' });
  if (causes.length > 0) throw invalid('', 'Binding', name, causes);
  return String(target.name);
}

/** The Pod `old` bound to `node` as the Binding asks (409 when it cannot be); `now` stamps PodScheduled. */
export function boundPod(old: JsonObject, node: string, binding: JsonValue, now: string): JsonObject {
  const name = String(readMeta(old).name ?? '');
  if (isBeingDeleted(old)) throw conflict(BINDING, name, `pod ${name} is being deleted, cannot be assigned to a host`);
  const assigned = getPath(old, ['spec', 'nodeName']);
  if (typeof assigned === 'string' && assigned !== '')
    throw conflict(BINDING, name, `pod ${name} is already assigned to node ${JSON.stringify(assigned)}`);
  const pod = deepClone(old);
  (pod.spec as JsonObject).nodeName = node;
  const annotations = getPath(binding, ['metadata', 'annotations']);
  if (isJsonObject(annotations)) {
    const meta = pod.metadata as JsonObject;
    meta.annotations = { ...(isJsonObject(meta.annotations) ? meta.annotations : {}), ...annotations };
  }
  const status = isJsonObject(pod.status) ? pod.status : (pod.status = {});
  const conditions = (Array.isArray(status.conditions) ? status.conditions : []).filter(isJsonObject);
  const previous = conditions.find((c) => c.type === 'PodScheduled');
  const scheduled: JsonObject = {
    type: 'PodScheduled',
    status: 'True',
    lastProbeTime: null,
    lastTransitionTime: previous?.status === 'True' ? (previous.lastTransitionTime ?? now) : now,
  };
  status.conditions = previous ? conditions.map((c) => (c === previous ? scheduled : c)) : [...conditions, scheduled];
  return pod;
}
