/** The WebPage operator, written three ways with the same behaviour. */
import type { ControllerConfig, Reconciler } from '../../lib/index.js';
import { lowLevelConfig, lowLevelReconciler } from './low-level.js';
import { managedConfig, managedReconciler } from './managed.js';
import { standaloneConfig, standaloneReconciler } from './standalone.js';
import type { WebPage } from './model.js';

export interface WebPageVariant {
  readonly description: string;
  readonly reconciler: Reconciler<WebPage>;
  readonly config: ControllerConfig<WebPage>;
}

export const variants = {
  'low-level': {
    description: 'a reconciler that applies its secondaries itself',
    reconciler: lowLevelReconciler,
    config: lowLevelConfig,
  },
  managed: {
    description: 'managed dependent resources in a workflow that runs before the reconciler',
    reconciler: managedReconciler,
    config: managedConfig,
  },
  standalone: {
    description: 'a standalone workflow the reconciler runs itself',
    reconciler: standaloneReconciler,
    config: standaloneConfig,
  },
} satisfies Record<string, WebPageVariant>;

export type VariantName = keyof typeof variants;

export const DEFAULT_VARIANT: VariantName = 'managed';
