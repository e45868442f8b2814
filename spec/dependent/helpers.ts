/** Shared setup of the dependent specs: the controller fixtures (on startTestCluster) plus write counting and a recording reconciler. */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Fault } from '@rxkube/apiserver';
import {
  UpdateControl,
  type Context,
  type ControllerConfig,
  type RegisteredController,
  type Reconciler,
} from '../../lib/controller/index.js';
import { workflow, type WorkflowBuilder, type WorkflowReconcileResult } from '../../lib/workflow/index.js';
import { recordOutcomes, widgetConfig, type Env, type Outcomes, type Widget } from '../controller/fixtures.js';

export type WidgetWorkflow = WorkflowBuilder<Widget, Context<Widget>>;

/** A workflow builder typed for the widget controller. */
export function widgetWorkflow(): WidgetWorkflow {
  return workflow<Widget, Context<Widget>>();
}

export type ConfigMap = KubernetesObject & { data?: Record<string, string> };

/**
 * Counts the API writes (create, update, patch, delete) to `resource` from now on: a zero-delay
 * fault matches them and counts its hits. The test's own writes count too.
 */
export function countWrites(env: Env, resource = 'configmaps'): Fault {
  return env.server.faults.delayRequests({ verb: ['create', 'update', 'patch', 'delete'], resource, delayMs: 0 });
}

export interface Recorded {
  readonly results: WorkflowReconcileResult[];
  readonly outcomes: Outcomes;
  readonly controller: RegisteredController;
  /** The latest managed workflow result. */
  last(): WorkflowReconcileResult | undefined;
}

/**
 * Starts an operator whose widget reconciler only records the managed workflow's result (and
 * optionally asks to run again after `rescheduleMs`).
 */
export async function startWidgets(
  env: Env,
  flow: WidgetWorkflow,
  extra: Partial<ControllerConfig<Widget>> & { readonly rescheduleMs?: number; readonly reconciler?: Partial<Reconciler<Widget>> } = {},
): Promise<Recorded> {
  const { rescheduleMs, reconciler: overrides, ...config } = extra;
  const results: WorkflowReconcileResult[] = [];
  const reconciler: Reconciler<Widget> = {
    reconcile(_w, ctx) {
      const result = ctx.workflow?.reconcileResult;
      if (result) results.push(result);
      return rescheduleMs === undefined ? undefined : UpdateControl.noUpdate<Widget>().rescheduleAfter(rescheduleMs);
    },
    ...overrides,
  };
  const op = env.operator();
  const registered = op.register(reconciler, widgetConfig({ workflow: flow, ...config }));
  const outcomes = recordOutcomes(registered.outcome$);
  await op.start();
  return { results, outcomes, controller: registered, last: () => results.at(-1) };
}

export function configMapOf(env: Env, name: string, namespace = 'default'): Promise<ConfigMap | undefined> {
  return env.configMaps.find({ name, namespace });
}
