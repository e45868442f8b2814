/**
 * The built-in resource types a controller needs, one file per kind, with the parts of their REST
 * strategies that clients can observe: defaults, status resets, immutable fields, validation and
 * table columns.
 */
import type { ResourceType } from '../registry.js';
import { namespaceType } from './namespace.js';
import { configMapType } from './config-map.js';
import { secretType } from './secret.js';
import { serviceType } from './service.js';
import { serviceAccountType } from './service-account.js';
import { podType } from './pod.js';
import { coreEventType, eventsV1EventType } from './event.js';
import { deploymentType } from './deployment.js';
import { replicaSetType } from './replica-set.js';
import { statefulSetType } from './stateful-set.js';
import { jobType } from './job.js';
import { cronJobType } from './cron-job.js';
import { nodeType } from './node.js';
import { persistentVolumeClaimType } from './persistent-volume-claim.js';
import { persistentVolumeType } from './persistent-volume.js';
import { storageClassType } from './storage-class.js';
import { controllerRevisionType } from './controller-revision.js';
import { endpointsType } from './endpoints.js';
import { endpointSliceType } from './endpoint-slice.js';
import { ingressType } from './ingress.js';
import { leaseType } from './lease.js';
import { customResourceDefinitionType } from './custom-resource-definition.js';
import { mutatingWebhookConfigurationType } from './mutating-webhook-configuration.js';
import { validatingWebhookConfigurationType } from './validating-webhook-configuration.js';
import { validatingAdmissionPolicyType } from './validating-admission-policy.js';
import { validatingAdmissionPolicyBindingType } from './validating-admission-policy-binding.js';

export { ALL_VERBS, builtin, column, type BuiltinSpec } from './builtin.js';
export { jobPodLabels } from './job.js';
export { DEFAULT_STORAGE_CLASS } from './storage-class.js';

/** Every built-in type, fresh (a server owns its registry's objects), in the order discovery lists them. */
export function builtinTypes(): ResourceType[] {
  return [
    namespaceType(),
    configMapType(),
    secretType(),
    serviceType(),
    serviceAccountType(),
    podType(),
    coreEventType(),
    eventsV1EventType(),
    deploymentType(),
    replicaSetType(),
    statefulSetType(),
    jobType(),
    cronJobType(),
    nodeType(),
    persistentVolumeClaimType(),
    persistentVolumeType(),
    storageClassType(),
    controllerRevisionType(),
    endpointsType(),
    endpointSliceType(),
    ingressType(),
    leaseType(),
    customResourceDefinitionType(),
    mutatingWebhookConfigurationType(),
    validatingWebhookConfigurationType(),
    validatingAdmissionPolicyType(),
    validatingAdmissionPolicyBindingType(),
  ];
}
