/** The built-in ValidatingWebhookConfiguration (admissionregistration.k8s.io/v1): defaults and validation. */
import type { ResourceType } from '../registry.js';
import { builtin } from './builtin.js';
import { defaultWebhooks, WEBHOOK_CONFIGURATION_COLUMNS, webhooksCauses } from './admission-webhooks.js';

export function validatingWebhookConfigurationType(): ResourceType {
  return builtin({
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    plural: 'validatingwebhookconfigurations',
    kind: 'ValidatingWebhookConfiguration',
    namespaced: false,
    categories: ['api-extensions'],
    generation: true,
    strategy: { defaults: (obj) => defaultWebhooks(obj, false), validate: (obj) => webhooksCauses(obj, false) },
    columns: WEBHOOK_CONFIGURATION_COLUMNS,
  });
}
