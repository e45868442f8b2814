// The webhooks layer's entry: admission and conversion webhooks, their server, certificates, manifests and metrics.
export {
  admissionRequest,
  admissionRequests,
  admissionReview,
  admissionReviewFor,
  allow,
  deny,
  MalformedReviewError,
  mutate,
  mutatingWebhook,
  reviewAdmission,
  validate,
  validatingWebhook,
  type AdmissionAnswer,
  type AdmissionFailure,
  type AdmissionMutation,
  type AdmissionOperation,
  type AdmissionRequest,
  type AdmissionResponse,
  type AdmissionReviewResponse,
  type AdmissionUserInfo,
  type AdmissionVerdict,
  type AdmissionWebhook,
  type AdmissionWebhookOptions,
  type AnyAdmissionWebhook,
  type MutateHandler,
  type MutatingWebhookOptions,
  type ValidateHandler,
  type ValidatingWebhookOptions,
} from './admission.js';
export {
  checkRoundTrip,
  conversionWebhook,
  MalformedConversionError,
  reviewConversion,
  spoke,
  type ConversionReviewResponse,
  type ConversionWebhook,
  type ConversionWebhookOptions,
  type Spoke,
  type SpokeOf,
} from './conversion.js';
export { applyJsonPatch, jsonPatch, type JsonPatchOp } from './json-patch.js';
export { generateDevelopmentTls, type DevelopmentTls, type TlsPem } from './tls.js';
export {
  checkWebhookServerOptions,
  startWebhookServer,
  type AnyWebhook,
  type TlsReload,
  type WebhookServer,
  type WebhookServerOptions,
  type WebhookTls,
} from './server.js';
export {
  DEFAULT_WEBHOOK_PORT,
  mountedCertificate,
  WEBHOOK_CERT_DIR,
  webhookManifests,
  type WebhookManifestOptions,
  type WebhookManifests,
} from './manifests.js';
export type { WebhookMetrics } from './metrics.js';
