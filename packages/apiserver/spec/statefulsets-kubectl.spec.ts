import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startApiServer, type ApiServer } from '../src/index.js';
import { kubectlAvailable, kubectlSession, type KubectlSession } from './helpers.js';

const MANIFEST = `
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  clusterIP: None
  selector:
    app: web
  ports:
  - port: 80
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: web
  replicas: 3
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        volumeMounts:
        - name: data
          mountPath: /usr/share/nginx/html
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: ["ReadWriteOnce"]
      resources:
        requests:
          storage: 1Gi
`;

describe('apiserver: simulated StatefulSets and volumes with kubectl v1.32', function () {
  this.timeout(90_000);
  let server: ApiServer;
  let session: KubectlSession;

  before(async function () {
    if (!(await kubectlAvailable())) this.skip(); // kubectl is not on PATH
    server = await startApiServer({ clientNode: false, simulate: { pods: { readyAfterMs: 10 } } });
    session = await kubectlSession(server);
    await writeFile(join(session.dir, 'web.yaml'), MANIFEST);
  });
  after(async () => {
    await server?.close();
    await session?.close();
  });

  const kubectl = (...args: string[]): Promise<string> => session.kubectl(...args);

  it('apply, rollout status statefulset, get pods/pvc/pv/sc: ordered Pods with Bound claims on the default class', async () => {
    await kubectl('apply', '-f', join(session.dir, 'web.yaml'));
    expect(await kubectl('rollout', 'status', 'statefulset/web', '--timeout=30s')).to.contain(
      'partitioned roll out complete: 3 new pods have been updated...',
    );
    expect(await kubectl('get', 'statefulset', 'web')).to.match(/^web\s+3\/3\s+/m);
    expect(await kubectl('get', 'pods', '-l', 'app=web', '-o', 'name')).to.equal('pod/web-0\npod/web-1\npod/web-2\n');
    const pvc = await kubectl('get', 'pvc');
    for (const i of [0, 1, 2])
      expect(pvc).to.match(new RegExp(`^data-web-${i}\\s+Bound\\s+pvc-[\\w-]+\\s+1Gi\\s+RWO\\s+standard\\s+`, 'm'));
    expect(await kubectl('get', 'pv')).to.match(/^pvc-[\w-]+\s+1Gi\s+RWO\s+Delete\s+Bound\s+default\/data-web-0\s+standard\s+/m);
    expect(await kubectl('get', 'storageclass')).to.match(
      /^standard \(default\)\s+rxkube\.dev\/simulated\s+Delete\s+Immediate\s+false\s+/m,
    );
  });

  it('set image rolls out, rollout history lists the ControllerRevisions, rollout undo goes back', async () => {
    await kubectl('set', 'image', 'statefulset/web', 'nginx=nginx:1.26');
    expect(await kubectl('rollout', 'status', 'statefulset/web', '--timeout=30s')).to.contain(
      'partitioned roll out complete: 3 new pods have been updated...',
    );
    expect(await kubectl('get', 'pod', 'web-0', '-o', 'jsonpath={.spec.containers[0].image}')).to.equal('nginx:1.26');
    expect(await kubectl('rollout', 'history', 'statefulset/web')).to.match(/^1\s+<none>\n2\s+<none>/m);
    expect(await kubectl('rollout', 'history', 'statefulset/web', '--revision=1')).to.contain('nginx:1.25');
    expect(await kubectl('get', 'controllerrevisions')).to.match(/^web-\w+\s+statefulset\.apps\/web\s+2\s+/m);
    expect(await kubectl('rollout', 'undo', 'statefulset/web')).to.contain('statefulset.apps/web rolled back');
    expect(await kubectl('rollout', 'status', 'statefulset/web', '--timeout=30s')).to.contain(
      'partitioned roll out complete: 3 new pods have been updated...',
    );
    expect(await kubectl('get', 'pod', 'web-0', '-o', 'jsonpath={.spec.containers[0].image}')).to.equal('nginx:1.25');
    expect(await kubectl('rollout', 'history', 'statefulset/web')).to.match(/^2\s+<none>\n3\s+<none>/m);
  });

  it("describe statefulset shows the controller's Events, scale down removes the highest ordinals", async () => {
    const out = await kubectl('describe', 'statefulset', 'web');
    expect(out).to.match(
      /Normal\s+SuccessfulCreate\s+.*statefulset-controller\s+create Claim data-web-0 Pod web-0 in StatefulSet web success/,
    );
    expect(out).to.match(/Normal\s+SuccessfulCreate\s+.*statefulset-controller\s+create Pod web-0 in StatefulSet web successful/);
    expect(await kubectl('scale', 'statefulset/web', '--replicas=1')).to.contain('statefulset.apps/web scaled');
    expect(await kubectl('rollout', 'status', 'statefulset/web', '--timeout=30s')).to.contain(
      'partitioned roll out complete: 1 new pods have been updated...',
    );
    await kubectl('wait', '--for=delete', 'pod/web-1', 'pod/web-2', '--timeout=30s');
    expect(await kubectl('get', 'pods', '-l', 'app=web', '-o', 'name')).to.equal('pod/web-0\n');
    // Retain (the default): the claims of the removed Pods stay.
    expect((await kubectl('get', 'pvc', '-o', 'name')).trim().split('\n')).to.have.length(3);
  });
});
