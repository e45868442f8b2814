import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startApiServer, type ApiServer } from '../src/index.js';
import { kubectlAvailable } from './helpers.js';

const run = promisify(execFile);

describe('apiserver: simulated workloads with kubectl v1.32', function () {
  this.timeout(60_000);
  let server: ApiServer;
  let dir: string;
  let kubeconfig: string;

  before(async function () {
    if (!(await kubectlAvailable())) this.skip(); // kubectl is not on PATH
    server = await startApiServer({ clientNode: false, simulate: { pods: { readyAfterMs: 10 }, jobs: { durationMs: 20 } } });
    dir = await mkdtemp(join(tmpdir(), 'rxkube-workloads-'));
    kubeconfig = join(dir, 'kubeconfig');
    await server.writeKubeconfig(kubeconfig);
  });
  after(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const kubectl = async (...args: string[]): Promise<string> => {
    const { stdout } = await run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args], { timeout: 30_000 });
    return stdout;
  };

  it('create deployment, rollout status, set image, rollout history and undo, scale', async () => {
    await kubectl('create', 'deployment', 'web', '--image=nginx:1.25', '--replicas=3');
    expect(await kubectl('rollout', 'status', 'deployment/web', '--timeout=30s')).to.contain('deployment "web" successfully rolled out');
    await kubectl('set', 'image', 'deployment/web', 'nginx=nginx:1.26');
    expect(await kubectl('rollout', 'status', 'deployment/web', '--timeout=30s')).to.contain('successfully rolled out');
    expect(await kubectl('rollout', 'history', 'deployment/web')).to.match(/^1\s+<none>\n2\s+<none>/m);
    expect(await kubectl('rollout', 'history', 'deployment/web', '--revision=1')).to.contain('nginx:1.25');
    expect(await kubectl('rollout', 'undo', 'deployment/web')).to.contain('deployment.apps/web rolled back');
    expect(await kubectl('rollout', 'status', 'deployment/web', '--timeout=30s')).to.contain('successfully rolled out');
    // The rollback reuses revision 1's ReplicaSet as revision 3.
    expect(await kubectl('rollout', 'history', 'deployment/web')).to.match(/^2\s+<none>\n3\s+<none>/m);
    const rs = await kubectl(
      'get',
      'rs',
      '-l',
      'app=web',
      '-o',
      'jsonpath={range .items[*]}{.metadata.annotations.deployment\\.kubernetes\\.io/revision}={.spec.replicas}{"\\n"}{end}',
    );
    expect(rs.trim().split('\n').sort()).to.deep.equal(['2=0', '3=3']);
    expect(await kubectl('get', 'deploy', 'web', '-o', 'jsonpath={.spec.template.spec.containers[0].image}')).to.equal('nginx:1.25');
    expect(await kubectl('scale', 'deployment/web', '--replicas=5')).to.contain('deployment.apps/web scaled');
    expect(await kubectl('rollout', 'status', 'deployment/web', '--timeout=30s')).to.contain('successfully rolled out');
    expect(await kubectl('get', 'deploy', 'web')).to.match(/^web\s+5\/5\s+5\s+5\s+/m);
  });

  it('describe deployment shows the new ReplicaSet and the ScalingReplicaSet Events', async () => {
    const out = await kubectl('describe', 'deployment', 'web');
    expect(out).to.match(/NewReplicaSet:\s+web-\w+ \(5\/5 replicas created\)/);
    expect(out).to.match(/Normal\s+ScalingReplicaSet\s+\S+\s+deployment-controller\s+Scaled up replica set web-\w+ from 0 to 3/);
    expect(out).to.match(/Scaled up replica set web-\w+ from 3 to 5/);
  });

  it('get nodes, pods bound to them; describe pod shows Scheduled', async () => {
    expect(await kubectl('get', 'nodes')).to.match(/^rxkube-node-0\s+Ready\s+<none>\s+v1\.32\.0-rxkube/m);
    const pods = await kubectl('get', 'pods', '-l', 'app=web', '--field-selector=status.phase=Running', '-o', 'name');
    const first = pods.trim().split('\n')[0] ?? '';
    expect(await kubectl('describe', first)).to.match(
      /Normal\s+Scheduled\s+\S+\s+default-scheduler\s+Successfully assigned default\/web-\S+ to rxkube-node-\d/,
    );
  });

  it('get -o wide: pods show IP and NODE, deployments CONTAINERS, IMAGES and SELECTOR after AGE, as the real printers', async () => {
    const pods = await kubectl('get', 'pods', '-l', 'app=web', '--field-selector=status.phase=Running', '-o', 'wide');
    expect(pods.split('\n')[0]).to.match(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/);
    expect(pods).to.match(/^web-\S+\s+1\/1\s+Running\s+0\s+\S+\s+10\.244\.\d+\.\d+\s+rxkube-node-\d\s+<none>\s+<none>$/m);
    const deploy = await kubectl('get', 'deploy', 'web', '-o', 'wide');
    expect(deploy).to.match(/^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$/m);
    expect(deploy).to.match(/^web\s+5\/5\s+5\s+5\s+\S+\s+nginx\s+nginx:1\.25\s+app=web$/m);
  });

  it('create job, wait --for=condition=complete, describe shows SuccessfulCreate and Completed', async () => {
    await kubectl('create', 'job', 'pi', '--image=perl', '--', 'perl', '-e', '1');
    expect(await kubectl('wait', '--for=condition=complete', 'job/pi', '--timeout=30s')).to.contain('job.batch/pi condition met');
    expect(await kubectl('get', 'job', 'pi')).to.match(/^pi\s+Complete\s+1\/1\s+/m);
    const out = await kubectl('describe', 'job', 'pi');
    expect(out).to.match(/Normal\s+SuccessfulCreate\s+\S+\s+job-controller\s+Created pod: pi-\w+/);
    expect(out).to.match(/Normal\s+Completed\s+\S+\s+job-controller\s+Job completed/);
  });

  it('delete pod --grace-period=0 --force removes it at once', async () => {
    await kubectl('run', 'solo', '--image=nginx');
    await kubectl('wait', '--for=condition=Ready', 'pod/solo', '--timeout=30s');
    await kubectl('delete', 'pod', 'solo', '--grace-period=0', '--force');
    expect(await kubectl('get', 'pods', '--field-selector=metadata.name=solo', '-o', 'name')).to.equal('');
  });
});
