/**
 * `rxkube/webhooks`: admission (validating, mutating) and conversion webhooks — typed handlers,
 * pipeable operators over the requests, a round-trip check for conversions, and the HTTPS server
 * that serves them, and the objects that register them (`webhookManifests`).
 *
 * @module rxkube/webhooks
 */
import './node-check.js';
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
} from './webhooks/index.js';
// The handlers' return type; the same type the rest of rxkube uses.
export type { MaybePromise } from './core/index.js';
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
} from './webhooks/index.js';
export { applyJsonPatch, jsonPatch, type JsonPatchOp } from './webhooks/index.js';
export { generateDevelopmentTls, type DevelopmentTls, type TlsPem } from './webhooks/index.js';
export {
  startWebhookServer,
  type AnyWebhook,
  type TlsReload,
  type WebhookServer,
  type WebhookServerOptions,
  type WebhookTls,
} from './webhooks/index.js';
export {
  DEFAULT_WEBHOOK_PORT,
  mountedCertificate,
  WEBHOOK_CERT_DIR,
  webhookManifests,
  type WebhookManifestOptions,
  type WebhookManifests,
} from './webhooks/index.js';
export type { ResolvedDescriptor, ResourceDescriptor } from './kube/index.js';
export type { WebhookMetrics } from './webhooks/index.js';
export type { TracerProviderLike, TracingOptions } from './observe/index.js';
