/**
 * The built-in Namespace: its defaults and validation as the real server applies them, and the columns
 * `kubectl get` prints.
 */
import { isJsonObject } from '../../base/json.js';
import { getPath, metaOf, nameOf } from '../../base/meta.js';
import type { ResourceType, Strategy } from '../registry.js';
import { ALL_VERBS, builtin, column, str } from './builtin.js';
import { objectAt } from './defaults.js';

const namespaceStrategy: Strategy = {
  prepareForCreate(obj) {
    objectAt(obj, 'spec').finalizers = ['kubernetes'];
    obj.status = { phase: 'Active' };
  },
  prepareForUpdate(obj, old) {
    const oldFinalizers = getPath(old, ['spec', 'finalizers']);
    const spec = objectAt(obj, 'spec');
    if (oldFinalizers === undefined) delete spec.finalizers;
    else spec.finalizers = oldFinalizers;
  },
  prepareForDelete(obj) {
    objectAt(obj, 'status').phase = 'Terminating';
  },
  blocksDeletion(obj) {
    const finalizers = getPath(obj, ['spec', 'finalizers']);
    return Array.isArray(finalizers) && finalizers.length > 0;
  },
  defaults(obj) {
    // The server labels every namespace with its own name (NamespaceDefaultLabelName).
    const meta = metaOf(obj);
    const labels = isJsonObject(meta.labels) ? meta.labels : {};
    labels['kubernetes.io/metadata.name'] = nameOf(obj);
    meta.labels = labels;
  },
};

export function namespaceType(): ResourceType {
  return builtin({
    group: '',
    version: 'v1',
    plural: 'namespaces',
    kind: 'Namespace',
    namespaced: false,
    shortNames: ['ns'],
    status: true,
    nameRule: 'label',
    strategy: namespaceStrategy,
    returnDeletedObject: true,
    extraSubresources: ['finalize'],
    // No deletecollection: a DELETE of the collection is 405, as on a real cluster.
    verbs: ALL_VERBS.filter((v) => v !== 'deletecollection'),
    columns: [column('Status', 'string', (o) => str(getPath(o, ['status', 'phase'])))],
  });
}
