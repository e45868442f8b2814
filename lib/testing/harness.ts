/**
 * The operator a test harness drives (the explorer's runs, trace replay, `startTestCluster`): quiet,
 * with a metrics registry of its own so that whether it is working is read from its own metrics,
 * and one place that sees (and may adjust) each controller as it is registered.
 */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { type ControllerConfig, type Reconciler, type RegisteredController } from '../controller/index.js';
import { Operator, type OperatorOptions } from '../operator/index.js';
import { createLogger } from '../observe/index.js';
import { runsOwed } from './idle.js';

/** Events (core and events.k8s.io) are written asynchronously and rate-limited: a harness neither counts nor orders them. */
export const EVENTS_PATH = /\/events(?:\/|\?|$)/;

export interface HarnessOptions extends Omit<OperatorOptions, 'kubeConfig'> {
  /** Rewrites a controller's config as it is registered (a quick retry, a virtual clock). */
  readonly adjust?: <P extends KubernetesObject>(config: ControllerConfig<P>) => ControllerConfig<P>;
  /** Hears each controller once registered, with the config it was registered with. */
  readonly registered?: <P extends KubernetesObject>(controller: RegisteredController, config: ControllerConfig<P>) => void;
}

export interface HarnessOperator {
  readonly operator: Operator;
  /** The operator's own metrics. */
  readonly registry: Registry;
  /** Runs in progress and resources waiting for a run: zero is one of the facts a harness settles on. */
  runsOwed(): Promise<number>;
}

/** A silent operator on `kubeConfig` with its own registry (unless given one), whose registrations pass through `adjust` and `registered`. */
export function harnessOperator(kubeConfig: KubeConfig, options: HarnessOptions = {}): HarnessOperator {
  const { adjust, registered, ...operatorOptions } = options;
  const registry = operatorOptions.registry ?? new Registry();
  const operator = new Operator({ logger: createLogger({ level: 'silent' }), ...operatorOptions, registry, kubeConfig });
  if (adjust || registered) {
    const register = operator.register.bind(operator);
    operator.register = <P extends KubernetesObject>(reconciler: Reconciler<P>, config: ControllerConfig<P>) => {
      const used = adjust ? adjust(config) : config;
      const controller = register(reconciler, used);
      registered?.(controller, used);
      return controller;
    };
  }
  return { operator, registry, runsOwed: () => runsOwed(registry) };
}
