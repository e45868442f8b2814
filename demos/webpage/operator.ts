/**
 * The WebPage operator as `rxkube manifests` reads it: what it registers, its CRD and the options
 * it runs with (`npx tsx lib/cli/main.ts manifests --module demos/webpage/operator.ts`).
 */
import type { Operator, OperatorOptions, RegisteredController } from '../../lib/index.js';
import { webPageCrd } from './model.js';
import { DEFAULT_VARIANT, variants } from './variants.js';

export const crds = [webPageCrd];

export const operatorOptions: Omit<OperatorOptions, 'kubeConfig'> = { health: { port: 8080 }, handleSignals: true };

/** Registers the WebPage controller (the default, managed variant). */
export function register(operator: Operator): RegisteredController {
  const variant = variants[DEFAULT_VARIANT];
  return operator.register(variant.reconciler, variant.config);
}
