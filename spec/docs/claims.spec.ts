/**
 * Sentences of the user documentation checked against what the code does: a feature the table
 * says rxkube lacks, or a task a page says you must do yourself, while rxkube does it, is a doc
 * that sends a user the wrong way.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { startApiServer } from '@rxkube/apiserver';
import { expect } from 'chai';
import * as webhooks from '../../lib/webhooks.js';
import { eventually } from '../../lib/testing/index.js';

const root = new URL('../../', import.meta.url).pathname;
const read = (page: string) => readFileSync(join(root, page), 'utf8');
/** A page's text with its line breaks folded, so a sentence is found across them. */
const prose = (page: string) => read(page).replace(/\s+/g, ' ');

describe('the user documentation against the behaviour', () => {
  it('README: the feature table says rxkube has admission and conversion webhooks, and rxkube/webhooks exports them', () => {
    const row = read('README.md')
      .split('\n')
      .find((line) => /^\| Admission and conversion webhooks +\|/.test(line));
    const rxkube = row?.split('|')[2]?.trim() ?? '';
    expect(rxkube, row).to.match(/^yes\b/);
    expect(rxkube).to.include('rxkube/webhooks');
    expect(
      [
        webhooks.validatingWebhook,
        webhooks.mutatingWebhook,
        webhooks.conversionWebhook,
        webhooks.startWebhookServer,
        webhooks.webhookManifests,
      ].map((f) => typeof f),
    ).to.deep.equal(Array(5).fill('function'));
  });

  it("custom-resources.md: a conversion webhook is rxkube's conversionWebhook, declared in the CRD by the manifests — not one to write and declare yourself", () => {
    const page = prose('docs/custom-resources.md');
    expect(page).to.not.match(/webhooks?[^.]*yourself/i);
    expect(page).to.include('`conversionWebhook`').and.include('(webhooks.md)');
    const convert = webhooks.conversionWebhook({
      group: 'example.com',
      plural: 'greetings',
      hub: 'v1',
      spokes: { v2: webhooks.spoke({ toHub: (o) => o, fromHub: (o) => o }) },
    });
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'greetings.example.com' },
      spec: {},
    };
    const [declared] = webhooks
      .webhookManifests([convert], { name: 'hello', namespace: 'hello-system', selector: { app: 'hello' } })
      .withConversion([crd]);
    expect((declared as { spec: { conversion?: { strategy?: string } } }).spec.conversion?.strategy).to.equal('Webhook');
  });

  it("getting-started.md: the demo's simulated Deployments have Pods that kubectl shows Running, though no container runs", async function () {
    this.timeout(30_000);
    const page = prose('docs/getting-started.md');
    expect(page).to.not.include('without pods');
    expect(page).to.include(
      'its ReplicaSet and Pods, which `kubectl get pods` shows `Running` on simulated Nodes — though no container runs',
    );
    // As the demo starts its server (demos/webpage/main.ts).
    const server = await startApiServer({ port: 0, simulate: { deployments: { readyAfterMs: 50 } } });
    try {
      const kc = server.kubeConfig();
      const labels = { app: 'web' };
      await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
        namespace: 'default',
        body: {
          metadata: { name: 'web' },
          spec: {
            replicas: 1,
            selector: { matchLabels: labels },
            template: { metadata: { labels }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
          },
        },
      });
      const pods = await eventually('a Running Pod', async () => {
        const list = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: 'default' });
        return list.items.some((p) => p.status?.phase === 'Running') ? list.items : undefined;
      });
      expect(pods.map((p) => p.metadata?.name)).to.have.length(1);
    } finally {
      await server.close();
    }
  });

  it('getting-started.md: node bin/rxkube.js needs dist/, which npm run build makes and npm ci does not', () => {
    const page = prose('docs/getting-started.md');
    expect(page).to.not.match(/npm ci` (has )?built `dist\//);
    expect(page).to.include('which `npm ci` does not build: in a clone, run `npm run build` first');
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string | undefined> }).scripts;
    expect(scripts['build']).to.include('tsc -p tsconfig.build.json');
    expect(scripts['postinstall'] ?? scripts['prepare'], 'nothing builds dist/ on install').to.equal(undefined);
  });
});
