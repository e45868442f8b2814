/**
 * `rxkube/webhooks`: admission (validating, mutating) and conversion webhooks — typed handlers,
 * pipeable operators over the requests, a round-trip check for conversions, and the HTTPS server
 * that serves them, and the objects that register them (`webhookManifests`). It exports its own
 * names only: the types the Operator shares with it (`AdmissionWebhook`, `AdmissionRequest`,
 * `WebhookServerOptions`, `JsonPatchOperation`, …) are imported from `rxkube`.
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
  type AdmissionMutation,
  type AdmissionReviewResponse,
  type AdmissionVerdict,
  type AdmissionWebhookOptions,
  type MutateHandler,
  type MutatingWebhookOptions,
  type ValidateHandler,
  type ValidatingWebhookOptions,
} from './webhooks/index.js';
export {
  checkRoundTrip,
  conversionWebhook,
  MalformedConversionError,
  reviewConversion,
  spoke,
  type ConversionReviewResponse,
  type ConversionWebhookOptions,
  type Spoke,
  type SpokeOf,
} from './webhooks/index.js';
export { applyJsonPatch, jsonPatch } from './webhooks/index.js';
export { generateDevelopmentTls, type DevelopmentTls, type TlsPem } from './webhooks/index.js';
export { startWebhookServer, type TlsReload, type WebhookServer } from './webhooks/index.js';
export { DEFAULT_WEBHOOK_PORT, mountedCertificate, WEBHOOK_CERT_DIR } from './webhooks/index.js';
export { webhookManifests, type WebhookManifestOptions, type WebhookManifests } from './deploy/index.js';
export type { WebhookMetrics } from './webhooks/index.js';
