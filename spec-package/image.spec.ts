/**
 * The demo operator's image recipe (demos/webpage/Dockerfile), proven without building an image:
 * its run stage replayed in an empty directory — production dependencies only, the compiled
 * operator, no embedded API server — then the entrypoint run against a cluster named by KUBECONFIG
 * (an embedded server of the test's own), SIGTERM, exit 0 (OB5).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ApiextensionsV1Api } from '@kubernetes/client-node';
import { startApiServer } from '@rxkube/apiserver';
import { expect } from 'chai';
import { crds } from '../demos/webpage/operator.js';
import { freePort, NPM_ENV, replayRunStage, runUntilReadyThenTerm } from './dockerfile.js';

const run = promisify(execFile);
const ROOT = new URL('../', import.meta.url).pathname;

describe('the demo operator image (demos/webpage/Dockerfile), its run stage replayed', function () {
  this.timeout(300_000);
  const work = mkdtempSync(join(tmpdir(), 'rxkube-image-'));
  after(() => rmSync(work, { recursive: true, force: true }));

  it('installs production dependencies only (not the embedded server), runs the compiled operator against a cluster, and exits 0 on SIGTERM', async () => {
    // The build stage (WORKDIR /src): the compiler over lib/ and demos/, as `RUN npx tsc -p tsconfig.demos.json` does.
    const build = join(work, 'build');
    await run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.demos.json', '--outDir', join(build, 'src', 'dist-demos')], {
      cwd: ROOT,
    });
    const app = join(work, 'app');
    mkdirSync(app);
    const replay = await replayRunStage(join(ROOT, 'demos/webpage/Dockerfile'), {
      context: ROOT,
      workdir: app,
      stages: { build },
      env: NPM_ENV,
    });
    for (const step of replay.runs) console.log(`      RUN ${step.command.slice(0, 60)}…: ${(step.ms / 1000).toFixed(1)} s`);
    expect(replay.user).to.equal('node');
    expect(replay.entrypoint[0], 'node is PID 1').to.equal('node');
    expect(existsSync(join(app, 'node_modules/typescript')), 'no devDependencies').to.equal(false);
    expect(existsSync(join(app, 'node_modules/mocha')), 'no devDependencies').to.equal(false);
    expect(existsSync(join(app, 'node_modules/rxjs')), 'the peer dependencies').to.equal(true);
    expect(existsSync(join(app, 'node_modules/@rxkube/apiserver')), 'no embedded server in the image').to.equal(false);
    expect(existsSync(join(app, 'node_modules/@bufbuild/cel')), "none of the server's dependencies").to.equal(false);
    const { stdout: size } = await run('du', ['-sk', join(app, 'node_modules')]);
    console.log(`      production node_modules: ${(Number(size.split('\t')[0]) / 1024).toFixed(0)} MB`);

    const cluster = await startApiServer({ port: 0 });
    try {
      const extensions = cluster.kubeConfig().makeApiClient(ApiextensionsV1Api);
      for (const crd of crds) await extensions.createCustomResourceDefinition({ body: crd });
      const kubeconfig = join(work, 'kubeconfig');
      await cluster.writeKubeconfig(kubeconfig);
      const port = await freePort();
      const result = await runUntilReadyThenTerm([process.execPath, ...replay.entrypoint.slice(1)], {
        cwd: app,
        env: { PATH: process.env['PATH'] ?? '', ...replay.env, HEALTH_PORT: String(port), LOG_LEVEL: 'info', KUBECONFIG: kubeconfig },
        readyUrl: `http://127.0.0.1:${port}/readyz`,
        timeoutMs: 60_000,
      });
      console.log(`      SIGTERM to exit: ${result.stopMs} ms`);
      expect(result.code, result.output).to.equal(0);
      expect(result.output).to.include('"msg":"operator stopped"');
    } finally {
      await cluster.close();
    }
  });
});
