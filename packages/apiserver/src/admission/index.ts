/** Admission: the webhooks of the admissionregistration.k8s.io configurations, around the write path. */
export { AdmissionWebhooks, type AdmissionRequest } from './webhooks.js';
export {
  admittedDelete,
  admittedDeleteOfCurrent,
  admittedScale,
  admittedSubresourceCreate,
  admittedWrite,
  controllerDeletes,
} from './write.js';
export { MAX_WEBHOOK_RESPONSE_BYTES, type ServiceAddresses } from './client.js';
export type { Operation } from './match.js';
export { ConversionWebhooks, type ConversionPlan } from './conversion.js';
