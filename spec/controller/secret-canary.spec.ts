/**
 * Issue 32: no log line, Event or status message carries a Secret's data. A marker value in a
 * Secret dependent goes through (a) a failed workflow run (another dependent refused), (b) a 422 on
 * the Secret's own write whose message echoes the data (an admission policy's messageExpression),
 * (c) the Events and the error status of those failures; then every captured log line, every Event
 * and the primaries' status are searched for the marker, plain and base64: no hit.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import { ErrorStatusUpdateControl, UpdateControl, type Reconciler } from '../../lib/controller/index.js';
import { errorMessage } from '../../lib/kube/index.js';
import { kubernetesDependent } from '../../lib/dependent/index.js';
import { AggregatedOperatorError, workflow } from '../../lib/workflow/index.js';
import type { Context } from '../../lib/controller/index.js';
import {
  capturingLogger,
  CONFIGMAPS,
  createWidget,
  eventually,
  getWidget,
  SECRETS,
  startEnv,
  widget,
  widgetConfig,
  type ConfigMap,
  type Env,
  type Widget,
} from './fixtures.js';

const MARKER = 'canary-9f4c1e-hunter2-pass';
const FORMS = [MARKER, Buffer.from(MARKER).toString('base64')];
const EVENTS = { apiVersion: 'events.k8s.io/v1', kind: 'Event', plural: 'events', namespaced: true } as const;
const ADMISSION = 'admissionregistration.k8s.io/v1';

function hits(text: string): string[] {
  return FORMS.filter((form) => text.includes(form));
}

describe('controller: no Secret data in logs, Events or status (issue 32)', function () {
  this.timeout(60_000);
  let env: Env;
  before(async () => {
    env = await startEnv();
    // (b): the write of w-b's Secret is refused with a message that quotes the password.
    await env.client
      .resource({ apiVersion: ADMISSION, kind: 'ValidatingAdmissionPolicy', plural: 'validatingadmissionpolicies', namespaced: false })
      .create({
        apiVersion: ADMISSION,
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'no-weak-passwords' },
        spec: {
          matchConstraints: {
            resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['secrets'], operations: ['CREATE', 'UPDATE'] }],
          },
          validations: [
            {
              expression: "object.metadata.name != 'w-b-credentials'",
              messageExpression: "'weak password: ' + string(object.data.password)",
            },
          ],
        },
      } as KubernetesObject);
    await env.client
      .resource({
        apiVersion: ADMISSION,
        kind: 'ValidatingAdmissionPolicyBinding',
        plural: 'validatingadmissionpolicybindings',
        namespaced: false,
      })
      .create({
        apiVersion: ADMISSION,
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name: 'no-weak-passwords' },
        spec: { policyName: 'no-weak-passwords', validationActions: ['Deny'] },
      } as KubernetesObject);
  });
  after(() => env?.close());

  it('a marker in a Secret dependent is in no log line, Event or status after a failed workflow, a 422 echoing it and the Events of both', async () => {
    const credentials = kubernetesDependent<KubernetesObject & { stringData?: Record<string, string> }, Widget>({
      name: 'credentials',
      resource: SECRETS,
      desired: (w) => ({
        metadata: { name: `${w.metadata!.name}-credentials` },
        stringData: { password: MARKER, url: `postgres://app:${MARKER}@db:5432/app` },
      }),
    });
    // (a): refused by the server (a key no ConfigMap may have) after the Secret was written.
    const broken = kubernetesDependent<ConfigMap, Widget>({
      name: 'broken',
      resource: CONFIGMAPS,
      desired: (w) => ({ metadata: { name: `${w.metadata!.name}-broken` }, data: { 'not a valid key!': 'x' } }),
    });
    const reconciler: Reconciler<Widget> = {
      reconcile: (w) => UpdateControl.patchStatus({ ...w, status: { observed: 'ok' } }),
      updateErrorStatus: (w, _ctx, error) => {
        const ready =
          error instanceof AggregatedOperatorError && error.result?.kind === 'reconcile' ? error.result.readyCondition(w) : undefined;
        return ErrorStatusUpdateControl.patchStatus({
          ...w,
          status: { error: errorMessage(error), text: String(error), ...(ready ? { ready } : {}) },
        });
      },
    };
    const { logger, lines } = capturingLogger('debug');
    const op = env.operator({ logger });
    op.register(reconciler, widgetConfig({ workflow: workflow<Widget, Context<Widget>>().add(credentials).add(broken).build() }));
    await op.start();
    try {
      await createWidget(env, widget('w-a'));
      await createWidget(env, widget('w-b'));
      const events = async () =>
        (
          await env.client
            .resource<KubernetesObject & { reason?: string; note?: string; regarding?: { name?: string } }>(EVENTS)
            .list({ namespace: 'default' })
        ).items;
      await eventually('a ReconcileFailed Event and an error status for both widgets', async () => {
        const failed = (await events()).filter((e) => e.reason === 'ReconcileFailed').map((e) => e.regarding?.name);
        const statuses = await Promise.all(['w-a', 'w-b'].map(async (name) => (await getWidget(env, name))?.status?.['error']));
        return failed.includes('w-a') && failed.includes('w-b') && statuses.every((s) => typeof s === 'string');
      });
      // The failures happened as meant: w-a's Secret was written and its ConfigMap refused; w-b's Secret refused by the policy.
      expect(await env.secrets.find({ name: 'w-a-credentials', namespace: 'default' })).to.not.equal(undefined);
      const statusB = (await getWidget(env, 'w-b'))!.status!;
      expect(statusB['error']).to.match(/weak password: /);
      const logged = lines();
      expect(logged.some((l) => l['msg'] === 'run of default/w-a failed')).to.equal(true);

      const found: string[] = [];
      for (const line of logged)
        for (const form of hits(JSON.stringify(line))) found.push(`log line '${String(line['msg'])}' carries ${form}`);
      for (const event of await events())
        for (const form of hits(JSON.stringify(event))) found.push(`Event ${event.reason} of ${event.regarding?.name} carries ${form}`);
      for (const name of ['w-a', 'w-b'])
        for (const form of hits(JSON.stringify((await getWidget(env, name))?.status ?? {})))
          found.push(`status of ${name} carries ${form}`);
      expect(found).to.deep.equal([]);
      expect(statusB['error']).to.match(/weak password: \[redacted\]/);
      // The failed run's line names the Secret by reference, not by content.
      const failedLine = logged.find((l) => l['msg'] === 'run of default/w-a failed')!;
      expect(JSON.stringify(failedLine['err'])).to.match(/'broken'/);
    } finally {
      await op.stop();
    }
  });
});
