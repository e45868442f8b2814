/**
 * The built-in ControllerRevision: its defaults and validation as the real server applies them, and the columns
 * `kubectl get` prints.
 */
import type { StatusCause } from '../../base/errors.js';
import { fieldInvalid } from '../../base/errors.js';
import type { JsonValue } from '../../base/json.js';
import { deepEqual, isJsonObject } from '../../base/json.js';
import { readMeta } from '../../base/meta.js';
import type { ResourceType, Strategy } from '../registry.js';
import { builtin, column, num, str } from './builtin.js';

const controllerRevisionStrategy: Strategy = {
  validate(obj, old) {
    const causes: StatusCause[] = [];
    if (typeof obj.revision !== 'number' || obj.revision < 0)
      causes.push(fieldInvalid('revision', obj.revision ?? null, 'must be greater than or equal to 0'));
    if (old && !deepEqual(obj.data ?? null, old.data ?? null)) causes.push(fieldInvalid('data', obj.data ?? null, 'field is immutable'));
    return causes;
  },
};

export function controllerRevisionType(): ResourceType {
  return builtin({
    group: 'apps',
    version: 'v1',
    plural: 'controllerrevisions',
    kind: 'ControllerRevision',
    namespaced: true,
    strategy: controllerRevisionStrategy,
    columns: [
      column('Controller', 'string', (o) => {
        const owner = (Array.isArray(readMeta(o).ownerReferences) ? (readMeta(o).ownerReferences as JsonValue[]) : []).find(
          (r) => isJsonObject(r) && r.controller === true,
        );
        if (!isJsonObject(owner)) return '<none>';
        const group = str(owner.apiVersion).includes('/') ? `.${str(owner.apiVersion).split('/')[0]}` : '';
        return `${str(owner.kind).toLowerCase()}${group}/${str(owner.name)}`;
      }),
      column('Revision', 'integer', (o) => num(o.revision)),
    ],
  });
}
