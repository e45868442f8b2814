/**
 * The built-in CustomResourceDefinition: its defaults and validation as the real server applies them, and the columns
 * `kubectl get` prints.
 */
import { crdStrategy } from '../crds.js';
import { readMeta } from '../../base/meta.js';
import type { ResourceType } from '../registry.js';
import { builtin, column, str } from './builtin.js';

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
