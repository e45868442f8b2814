import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { expect } from 'chai';
import { GenericRetry, Operator } from '../../lib/index.js';
import { builtinResources } from '../../lib/kube.js';
import { createLogger } from '../../lib/observe/index.js';
import { eventually, parseTrace, recordTrace, replayTrace, TRACE_FORMAT, type TraceFile } from '../../lib/testing/index.js';
import { startTestCluster } from '../../lib/testing/cluster/index.js';
import { WEBPAGE, webPage, webPageCrd, type WebPage } from '../../demos/webpage/model.js';
import { register } from '../../demos/webpage/operator.js';

const VALID = '<html><body><h1>Hi</h1></body></html>';

/** Records the WebPage operator creating a page, following a change, and reporting ready. */
async function recordWebPage(): Promise<TraceFile> {
  const cluster = await startTestCluster({ crds: [webPageCrd], simulate: { deployments: { readyAfterMs: 50 } } });
  const recorder = recordTrace(cluster.kubeConfig);
  const operator = new Operator({ kubeConfig: recorder.kubeConfig, logger: createLogger({ level: 'silent' }) });
  try {
    register(operator);
    await operator.start();
    const ready = async (html: string) =>
      eventually('the page ready with its HTML', async () => {
        const page = await cluster.client.resource<WebPage>(WEBPAGE).find({ name: 'site', namespace: 'default' });
        return page?.status?.ready === true && page.status.observedGeneration === page.metadata?.generation && page.spec.html === html;
      });
    await cluster.apply(WEBPAGE, webPage('site', VALID, { exposed: true }));
    await ready(VALID);
    const changed = VALID.replace('Hi', 'Changed');
    await cluster.apply(WEBPAGE, webPage('site', changed, { exposed: false }));
    await ready(changed);
  } finally {
    await operator.stop();
    await cluster.close();
  }
  return recorder.trace();
}

describe('testing: record and replay of what an operator saw and wrote', function () {
  this.timeout(60_000);
  let trace: TraceFile;

  before(async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'rxkube-trace-')), 'webpage.trace.json');
    writeFileSync(file, JSON.stringify(await recordWebPage(), null, 2));
    trace = parseTrace(readFileSync(file, 'utf8'));
  });

  it('records the lists, watch events and writes of the WebPage operator in a versioned file', () => {
    expect(trace.format).to.equal(TRACE_FORMAT);
    expect(trace.version).to.equal(1);
    const types = new Set(trace.entries.map((e) => e.type));
    expect([...types].sort()).to.include.members(['event', 'list', 'write']);
    expect(trace.entries.some((e) => e.type === 'write' && e.path.includes('/webpages/site/status'))).to.equal(true);
  });

  it('replays the recorded WebPage trace as a passing test, without a cluster', async () => {
    const result = await replayTrace(trace, register);
    expect(result.mismatches).to.deep.equal([]);
    expect(result.passed).to.equal(true);
    expect(result.writes.length).to.equal(trace.entries.filter((e) => e.type === 'write').length);
    console.log(`      (${trace.entries.length} entries, ${result.writes.length} writes replayed)`);
  });

  it('replays in virtual time: a run retried a minute after it failed replays in milliseconds', async () => {
    // An operator whose first run fails: it copies a labelled ConfigMap once a retry succeeds.
    const copier =
      (retryMs: number) =>
      (operator: Operator): void => {
        let runs = 0;
        operator.register<V1ConfigMap>(
          {
            async reconcile(cm, ctx) {
              if (++runs === 1) throw new Error('the first run fails');
              const copy = {
                apiVersion: 'v1',
                kind: 'ConfigMap',
                metadata: { name: `${cm.metadata?.name ?? ''}-copy`, namespace: 'default' },
                data: cm.data ?? {},
              };
              await ctx.client.resource<V1ConfigMap>(builtinResources.configMap).apply(copy, { fieldManager: 'copier', force: true });
            },
          },
          {
            resource: builtinResources.configMap,
            labelSelector: { app: 'copier' },
            retry: GenericRetry.defaults().withInitialInterval(retryMs).withMaxInterval(Math.max(retryMs, 15_187)),
          },
        );
      };
    const cluster = await startTestCluster();
    const recorder = recordTrace(cluster.kubeConfig);
    const operator = new Operator({ kubeConfig: recorder.kubeConfig, logger: createLogger({ level: 'silent' }) });
    try {
      copier(50)(operator);
      await operator.start();
      await cluster.client
        .resource<V1ConfigMap>(builtinResources.configMap)
        .create({ metadata: { name: 'source', namespace: 'default', labels: { app: 'copier' } }, data: { a: '1' } });
      await eventually(
        'the copy',
        async () =>
          (await cluster.client.resource(builtinResources.configMap).find({ name: 'source-copy', namespace: 'default' })) !== undefined,
      );
    } finally {
      await operator.stop();
      await cluster.close();
    }
    const recorded = recorder.trace();
    expect(recorded.entries.filter((e) => e.type === 'write')).to.have.length(1);
    // Replayed with a retry of a minute: the clock is virtual, the replay takes milliseconds.
    const started = performance.now();
    const result = await replayTrace(recorded, copier(60_000));
    expect(result.mismatches).to.deep.equal([]);
    expect(result.writes).to.have.length(1);
    expect(result.virtualMs).to.be.at.least(60_000);
    console.log(`      (a 60 s retry replayed in ${Math.round(performance.now() - started)} ms of real time)`);
  });

  it('fails a replay whose operator writes something the trace does not have', async () => {
    const firstWrite = trace.entries.findIndex((e) => e.type === 'write');
    const without = { ...trace, entries: trace.entries.filter((_, i) => i !== firstWrite) };
    const result = await replayTrace(without, register, { timeoutMs: 1000 });
    expect(result.passed).to.equal(false);
    expect(result.mismatches[0]).to.match(/^unexpected write/);
  });

  it('rejects a trace file of another format or version, naming it', () => {
    expect(() => parseTrace(JSON.stringify({ ...trace, version: 2 }))).to.throw(/version 2 is not supported/);
    expect(() => parseTrace('{"format":"other"}')).to.throw(/format must be 'rxkube.dev\/trace'/);
  });
});
