/** The built-in MutatingWebhookConfiguration (admissionregistration.k8s.io/v1): defaults and validation. */
import type { ResourceType } from '../registry.js';
import { builtin } from './builtin.js';
import { defaultWebhooks, WEBHOOK_CONFIGURATION_COLUMNS, webhooksCauses } from './admission-webhooks.js';

export function mutatingWebhookConfigurationType(): ResourceType {
  return builtin({
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    plural: 'mutatingwebhookconfigurations',
    kind: 'MutatingWebhookConfiguration',
    namespaced: false,
    categories: ['api-extensions'],
    generation: true,
    strategy: { defaults: (obj) => defaultWebhooks(obj, true), validate: (obj) => webhooksCauses(obj, true) },
    columns: WEBHOOK_CONFIGURATION_COLUMNS,
  });
}
