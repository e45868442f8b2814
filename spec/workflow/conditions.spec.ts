import * as k8s from '@kubernetes/client-node';
import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import { kubernetesDependent } from '../../lib/dependent/index.js';
import { crdPresent, deploymentReadiness, deploymentReady } from '../../lib/workflow/index.js';
import { CONFIGMAPS, createWidget, eventually, patchWidget, startEnv, widget, type Env, type Widget } from '../controller/fixtures.js';
import { configMapOf, startWidgets, widgetWorkflow, type ConfigMap } from '../dependent/helpers.js';

const DEPLOYMENTS = { apiVersion: 'apps/v1', kind: 'Deployment', plural: 'deployments' } as const;

interface Deployment extends KubernetesObject {
  spec?: Record<string, unknown>;
  status?: { readyReplicas?: number; availableReplicas?: number; observedGeneration?: number };
}

function deploymentOf(w: Widget): Deployment {
  const name = w.metadata!.name!;
  return {
    metadata: { name },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'web', image: `nginx:${w.spec?.value ?? 'latest'}` }] },
      },
    },
  };
}

describe('workflow: shipped conditions against the embedded API server', () => {
  let env: Env;
  afterEach(async () => {
    await env.close();
  });

  it('WF2: deploymentReady holds the ConfigMap back until the simulated rollout is ready', async () => {
    env = await startEnv({ simulate: { deployments: { readyAfterMs: 150 } } });
    const deployments = env.client.resource<Deployment>(DEPLOYMENTS);
    const deployment = kubernetesDependent<Deployment, Widget>({ name: 'deployment', resource: DEPLOYMENTS, desired: deploymentOf });
    const config = kubernetesDependent<ConfigMap, Widget>({
      name: 'config',
      resource: CONFIGMAPS,
      desired: (w) => ({ metadata: { name: `${w.metadata!.name!}-config` }, data: { ready: 'yes' } }),
    });
    const recorded = await startWidgets(
      env,
      widgetWorkflow().add(deployment, { readyPostcondition: deploymentReady }).add(config, { dependsOn: deployment }),
    );
    await createWidget(env, widget('w1', { value: '1.25' }));

    const cm = await eventually('w1-config', () => configMapOf(env, 'w1-config'), 5000);
    const rolledOut = await deployments.get({ name: 'w1', namespace: 'default' });
    expect(rolledOut.status).to.include({ readyReplicas: 2, availableReplicas: 2, observedGeneration: 1 });
    expect(cm.data).to.deep.equal({ ready: 'yes' });

    const first = recorded.results[0];
    expect(first.notReady).to.deep.equal(['deployment']);
    expect(first.dependent('config').outcome).to.equal('notVisited');
    expect(first.conditionResult('deployment', 'readyPostcondition')).to.deep.include({ met: false });
    const ready = recorded.results.find((r) => r.allReady())!;
    expect(ready.conditionResult('deployment', 'readyPostcondition')?.detail).to.include({
      exists: true,
      replicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
    });

    // A new generation is not ready until the simulated controller observed and rolled it out.
    await patchWidget(env, 'w1', { spec: { value: '1.26' } });
    const rolling = await eventually('a not-ready result of generation 2', () =>
      recorded.results.find(
        (r) =>
          (r.conditionResult('deployment', 'readyPostcondition')?.detail as { generation?: number } | undefined)?.generation === 2 &&
          !r.allReady(),
      ),
    );
    expect(rolling.conditionResult('deployment', 'readyPostcondition')?.met).to.equal(false);
    await eventually('generation 2 ready', () =>
      recorded.results.find(
        (r) =>
          (r.conditionResult('deployment', 'readyPostcondition')?.detail as { generation?: number } | undefined)?.generation === 2 &&
          r.allReady(),
      ),
    );
  });

  it('deploymentReadiness: observedGeneration and both replica counts must reach the spec', () => {
    const d = (status: Record<string, number>, generation = 2, replicas?: number) => ({
      metadata: { generation },
      spec: replicas === undefined ? {} : { replicas },
      status,
    });
    expect(deploymentReadiness(undefined)).to.deep.equal({ met: false, detail: { exists: false } });
    expect(deploymentReadiness(d({ observedGeneration: 2, readyReplicas: 3, availableReplicas: 3 }, 2, 3)).met).to.equal(true);
    expect(deploymentReadiness(d({ observedGeneration: 1, readyReplicas: 3, availableReplicas: 3 }, 2, 3)).met).to.equal(false);
    expect(deploymentReadiness(d({ observedGeneration: 2, readyReplicas: 3, availableReplicas: 2 }, 2, 3)).met).to.equal(false);
    expect(deploymentReadiness(d({ observedGeneration: 2, readyReplicas: 1, availableReplicas: 1 })).met, 'replicas default to 1').to.equal(
      true,
    );
    expect(deploymentReadiness(d({ observedGeneration: 2 }, 2, 0)).met).to.equal(true);
  });

  it('WF5: crdPresent registers the dependent event source only once the CRD exists; listEventSources shows it', async () => {
    env = await startEnv();
    const GADGETS = { apiVersion: 'extra.rxkube.dev/v1', kind: 'Gadget', plural: 'gadgets' } as const;
    const gadgets = env.client.resource<KubernetesObject & { spec?: Record<string, string> }>(GADGETS);
    const gadget = kubernetesDependent<KubernetesObject & { spec?: Record<string, string> }, Widget>({
      name: 'gadget',
      resource: GADGETS,
      desired: (w) => ({ metadata: { name: w.metadata!.name! }, spec: { color: 'red' } }),
    });
    const recorded = await startWidgets(
      env,
      widgetWorkflow().add(gadget, { activationCondition: crdPresent('gadgets.extra.rxkube.dev', { recheckAfterMs: 0 }) }),
    );
    await env.watchesOpen(1);
    const watchesWithoutGadgets = env.server.stats().watches;
    await createWidget(env, widget('w1', { value: 'a' }));
    const inactive = await eventually('a result', () => recorded.last());
    expect(inactive.dependent('gadget').outcome).to.equal('inactive');
    expect(inactive.conditionResult('gadget', 'activationCondition')).to.deep.equal({
      met: false,
      detail: { crd: 'gadgets.extra.rxkube.dev', present: false },
    });
    expect(env.server.stats().watches, 'no informer for an absent CRD').to.equal(watchesWithoutGadgets);
    expect(
      recorded.controller.listEventSources().map((s) => s.name),
      'listed before',
    ).to.deep.equal(['widgets.sample.rxkube.dev']);

    await env.kubeConfig.makeApiClient(k8s.ApiextensionsV1Api).createCustomResourceDefinition({
      body: {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'gadgets.extra.rxkube.dev' },
        spec: {
          group: 'extra.rxkube.dev',
          scope: 'Namespaced',
          names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
            },
          ],
        },
      },
    });
    await patchWidget(env, 'w1', { spec: { value: 'b' } });
    const created = await eventually('gadget w1', () => gadgets.find({ name: 'w1', namespace: 'default' }));
    expect(created.spec).to.deep.equal({ color: 'red' });
    expect(recorded.last()?.dependent('gadget').outcome).to.equal('reconciled');
    await env.watchesOpen(watchesWithoutGadgets + 1);
    expect(recorded.controller.listEventSources()).to.deep.equal([
      {
        name: 'widgets.sample.rxkube.dev',
        type: 'primary',
        resource: { apiVersion: 'sample.rxkube.dev/v1', kind: 'Widget' },
        namespaces: 'all',
      },
      {
        name: 'gadgets',
        type: 'secondary',
        resource: { apiVersion: 'extra.rxkube.dev/v1', kind: 'Gadget' },
        namespaces: 'all',
        registeredBy: ['gadget'],
      },
    ]);

    // The registered source triggers the widget: a drifted gadget is applied again.
    await gadgets.mergePatch({ name: 'w1', namespace: 'default' }, { spec: { color: 'blue' } }, { fieldManager: 'someone' });
    await eventually('gadget restored', async () => (await gadgets.get({ name: 'w1', namespace: 'default' })).spec?.['color'] === 'red');
  });

  it('crdPresent: a present answer is trusted for recheckAfterMs, an absent one is read again', async () => {
    env = await startEnv();
    const client = env.client;
    let now = 0;
    const condition = crdPresent('widgets.sample.rxkube.dev', { recheckAfterMs: 1000, now: () => now });
    const absent = crdPresent('nothing.sample.rxkube.dev');
    const reads = env.server.faults.delayRequests({ verb: 'get', resource: 'customresourcedefinitions', delayMs: 0 });
    const ctx = { client };
    expect((await condition({}, {}, ctx)).met).to.equal(true);
    now = 999;
    expect((await condition({}, {}, ctx)).met).to.equal(true);
    expect(reads.hits).to.equal(1);
    now = 1000;
    await condition({}, {}, ctx);
    expect(reads.hits).to.equal(2);
    expect((await absent({}, {}, ctx)).met).to.equal(false);
    expect((await absent({}, {}, ctx)).met).to.equal(false);
    expect(reads.hits).to.equal(4);
    expect(() => crdPresent('Not A Name')).to.throw(TypeError, /is not a CRD name/);
  });
});
