/** The WebPage operator, written three ways with the same behaviour. */
import type { ControllerConfig, Reconciler } from '../../lib/index.js';
import { lowLevelConfig, lowLevelReconciler } from './low-level.js';
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
} satisfies Record<string, WebPageVariant>;

export type VariantName = keyof typeof variants;

export const DEFAULT_VARIANT: VariantName = 'low-level';
