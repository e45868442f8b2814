/**
 * What Deployments, ReplicaSets and StatefulSets share: selector and template validation,
 * defaults, and the wide printer columns.
 */
import type { StatusCause } from '../../base/errors.js';
import { fieldInvalid, fieldNotSupported, fieldRequired } from '../../base/errors.js';
import type { JsonObject } from '../../base/json.js';
import { deepEqual, isJsonObject } from '../../base/json.js';
import { getPath, labelsOf } from '../../base/meta.js';
import { formatLabelSelector, labelSelectorFromObject, matchesLabelSelector, SelectorError } from '../../grammar/label-selector.js';
import type { PrinterColumn } from '../registry.js';
import { validateLabels } from '../validation.js';
import { column, str } from './builtin.js';
import { defaultPodSpec, validateContainers } from './pod-template.js';
import { objectAt, setDefault } from './defaults.js';

/** Validation a Deployment, ReplicaSet and StatefulSet share: the selector, replicas, the pod template. */
export function validateWorkload(obj: JsonObject, old: JsonObject | undefined, kind: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const spec = isJsonObject(obj.spec) ? obj.spec : {};
  const selector = spec.selector;
  if (!isJsonObject(selector)) causes.push(fieldRequired('spec.selector', ''));
  const templateLabels = labelsOf(isJsonObject(spec.template) ? spec.template : {});
  if (isJsonObject(selector)) {
    try {
      const parsed = labelSelectorFromObject(selector);
      if (parsed.requirements.length === 0) causes.push(fieldInvalid('spec.selector', selector, `empty selector is invalid for ${kind}`));
      else if (!matchesLabelSelector(parsed, templateLabels)) {
        causes.push(fieldInvalid('spec.template.metadata.labels', templateLabels, '`selector` does not match template `labels`'));
      }
    } catch (err) {
      if (!(err instanceof SelectorError)) throw err;
      causes.push(fieldInvalid('spec.selector', selector, err.message));
    }
  }
  if (typeof spec.replicas === 'number' && spec.replicas < 0) {
    causes.push(fieldInvalid('spec.replicas', spec.replicas, 'must be greater than or equal to 0'));
  }
  causes.push(...validateContainers(getPath(spec, ['template', 'spec']), 'spec.template.spec'));
  // A controller that keeps its Pods running takes no Pod that is meant to stop (after the defaults: Always).
  const restartPolicy = getPath(spec, ['template', 'spec', 'restartPolicy']);
  if (restartPolicy !== undefined && restartPolicy !== 'Always') {
    causes.push(fieldNotSupported('spec.template.spec.restartPolicy', restartPolicy, ['Always']));
  }
  causes.push(...validateLabels(getPath(spec, ['template', 'metadata', 'labels']), 'spec.template.metadata.labels'));
  if (old && isJsonObject(old.spec) && !deepEqual(spec.selector, old.spec.selector)) {
    causes.push(fieldInvalid('spec.selector', spec.selector ?? null, 'field is immutable'));
  }
  return causes;
}

export function defaultWorkload(obj: JsonObject): JsonObject {
  const spec = objectAt(obj, 'spec');
  setDefault(spec, 'replicas', 1);
  defaultPodSpec(objectAt(objectAt(spec, 'template'), 'spec'));
  return spec;
}

/** The wide columns of the workload printers: the pod template's containers and images, and the selector. */
export function templateColumns(withSelector: boolean): PrinterColumn[] {
  const containers = (o: JsonObject): JsonObject[] => {
    const list = getPath(o, ['spec', 'template', 'spec', 'containers']);
    return Array.isArray(list) ? list.filter(isJsonObject) : [];
  };
  const selector = (o: JsonObject): string => {
    const sel = getPath(o, ['spec', 'selector']);
    try {
      return isJsonObject(sel) ? formatLabelSelector(labelSelectorFromObject(sel)) || '<none>' : '<none>';
    } catch (err) {
      if (err instanceof SelectorError) return '<error>';
      throw err;
    }
  };
  return [
    column(
      'Containers',
      'string',
      (o) =>
        containers(o)
          .map((c) => str(c.name))
          .join(','),
      1,
    ),
    column(
      'Images',
      'string',
      (o) =>
        containers(o)
          .map((c) => str(c.image))
          .join(','),
      1,
    ),
    ...(withSelector ? [column('Selector', 'string', selector, 1)] : []),
  ];
}
