/** The pure patch and field-ownership algorithms of the embedded API server. */
export { PatchError, type PatchErrorCause, type PatchErrorCode } from './errors.js';
export { applyJsonPatch, parseJsonPatch, parseJsonPointer, escapeJsonPointerToken, type JsonPatchOperation } from './json-patch.js';
export { applyMergePatch } from './merge-patch.js';
export { applyStrategicMergePatch } from './strategic-merge.js';
export {
  typeInfoFor,
  typeInfoOrGeneric,
  genericTypeInfo,
  builtInKinds,
  fieldTypeOf,
  itemTypeOf,
  listPatchStrategy,
  objectMetaType,
  type TypeInfo,
  type FieldType,
  type StructType,
  type MapType,
  type ListType,
  type ScalarType,
} from './schema.js';
export {
  serverSideApply,
  trackUpdate,
  applyConflictError,
  type ApplyArgs,
  type ApplyResult,
  type ApplyConflict,
  type TrackUpdateArgs,
} from './apply.js';
export { describeFieldsV1, UNTRACKED_METADATA_FIELDS, type ManagedFieldsEntry } from './managed-fields.js';
export { FieldSet, formatPath, type FieldPath, type PathElement } from './field-set.js';
