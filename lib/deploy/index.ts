/** Deployment artifacts: an operator's RBAC, Deployment, Service, kustomize base and webhook manifests. */
export { kustomizeBase, manifestsToYaml, operatorManifests, type ManifestOptions, type OperatorManifests } from './manifests.js';
export { webhookManifests, type WebhookManifestOptions, type WebhookManifests } from './webhook-manifests.js';
