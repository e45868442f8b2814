export type {
  DeleteResult,
  DependentContext,
  DependentResource,
  ReconcileOperation,
  ReconcileResult,
} from './types.js';
export {
  deleteDependent,
  dependentName,
  desiredFieldsEqual,
  isDeletable,
  reconcileDependent,
} from './reconcile.js';
