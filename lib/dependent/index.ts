export type {
  DeleteResult,
  DependentContext,
  DependentResource,
  ReconcileOperation,
  DependentReconcileResult,
} from './types.js';
export {
  deleteDependent,
  dependentName,
  desiredFieldsEqual,
  isDeletable,
  reconcileDependent,
} from './reconcile.js';
