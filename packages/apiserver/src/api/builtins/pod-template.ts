/**
 * The pod spec as the real server defaults and validates it, in a Pod and in every pod template.
 */
import type { StatusCause } from '../../base/errors.js';
import { fieldInvalid, fieldRequired } from '../../base/errors.js';
import type { JsonObject, JsonValue } from '../../base/json.js';
import { isJsonObject } from '../../base/json.js';
import { dns1123Label } from '../validation.js';
import { setDefault } from './defaults.js';

function defaultContainer(c: JsonValue): void {
  if (!isJsonObject(c)) return;
  setDefault(c, 'terminationMessagePath', '/dev/termination-log');
  setDefault(c, 'terminationMessagePolicy', 'File');
  const image = typeof c.image === 'string' ? c.image : '';
  const tag = /:([^/:@]+)$/.exec(image.split('@')[0] ?? '')?.[1];
  setDefault(c, 'imagePullPolicy', image.includes('@') || (tag !== undefined && tag !== 'latest') ? 'IfNotPresent' : 'Always');
  setDefault(c, 'resources', {});
  if (Array.isArray(c.ports)) for (const p of c.ports) if (isJsonObject(p)) setDefault(p, 'protocol', 'TCP');
}

export function defaultPodSpec(spec: JsonObject): void {
  setDefault(spec, 'restartPolicy', 'Always');
  setDefault(spec, 'terminationGracePeriodSeconds', 30);
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  setDefault(spec, 'securityContext', {});
  setDefault(spec, 'schedulerName', 'default-scheduler');
  for (const key of ['containers', 'initContainers']) {
    const list = spec[key];
    if (Array.isArray(list)) list.forEach(defaultContainer);
  }
}

export function validateContainers(spec: JsonValue | undefined, field: string): StatusCause[] {
  const containers = isJsonObject(spec) ? spec.containers : undefined;
  if (!Array.isArray(containers) || containers.length === 0) return [fieldRequired(`${field}.containers`, '')];
  const causes: StatusCause[] = [];
  containers.forEach((c, i) => {
    const at = `${field}.containers[${i}]`;
    if (!isJsonObject(c)) {
      causes.push(fieldInvalid(at, c, 'must be an object'));
      return;
    }
    if (typeof c.name !== 'string' || c.name === '') causes.push(fieldRequired(`${at}.name`, ''));
    else for (const e of dns1123Label(c.name)) causes.push(fieldInvalid(`${at}.name`, c.name, e));
    if (typeof c.image !== 'string' || c.image.trim() === '') causes.push(fieldRequired(`${at}.image`, ''));
  });
  return causes;
}
