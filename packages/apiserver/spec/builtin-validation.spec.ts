import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { failure, kubectlAvailable, raw, startWithClients, type Clients } from './helpers.js';

const deployment = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } },
    ...spec,
  },
});

describe('apiserver: built-in kinds by their OpenAPI definitions', function () {
  let c: Clients;
  before(async () => {
    c = await startWithClients();
  });
  after(async () => {
    await c?.server.close();
  });

  describe('decoding (client-node and raw HTTP)', () => {
    it('an unknown field: dropped with a Warning by default, 400 strict decoding error with fieldValidation=Strict, silently dropped with Ignore', async () => {
      const body = JSON.stringify(deployment('warned', { replica: 3 }));
      const warned = await raw(c.server, 'POST', '/apis/apps/v1/namespaces/default/deployments', body);
      expect(warned.status).to.equal(201);
      expect(warned.headers.warning).to.equal('299 - "unknown field \\"spec.replica\\""');
      expect((warned.json as { spec: Record<string, unknown> }).spec).to.not.have.property('replica');

      const strict = await raw(
        c.server,
        'POST',
        '/apis/apps/v1/namespaces/default/deployments?fieldValidation=Strict',
        JSON.stringify(deployment('strict', { replica: 3 })),
      );
      expect(strict.status).to.equal(400);
      expect((strict.json as { message: string }).message).to.equal(
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.replica"',
      );

      const ignored = await raw(
        c.server,
        'POST',
        '/apis/apps/v1/namespaces/default/deployments?fieldValidation=Ignore',
        JSON.stringify(deployment('ignored', { replica: 3 })),
      );
      expect(ignored.status).to.equal(201);
      expect(ignored.headers.warning).to.equal(undefined);
    });

    it('an unknown field named in any script is a Warning carrying its UTF-8 bytes, as Go sends them, not a 500', async () => {
      const warned = await raw(
        c.server,
        'POST',
        '/apis/apps/v1/namespaces/default/deployments',
        JSON.stringify(deployment('warned-utf8', { réplicas: 3, 副本: 1 })),
      );
      expect(warned.status).to.equal(201);
      const sent = Buffer.from(warned.headers.warning as string, 'latin1').toString('utf8');
      expect(sent).to.equal('299 - "unknown field \\"spec.réplicas\\"", 299 - "unknown field \\"spec.副本\\""');
    });

    it('unknown fields deep in a pod template and in metadata are named by their paths', async () => {
      const d = deployment('deep', {});
      (d.spec.template.spec.containers[0] as Record<string, unknown>).imagePolicy = 'x';
      (d.metadata as Record<string, unknown>).label = { a: 'b' };
      const strict = await raw(c.server, 'POST', '/apis/apps/v1/namespaces/default/deployments?fieldValidation=Strict', JSON.stringify(d));
      expect(strict.status).to.equal(400);
      expect((strict.json as { message: string }).message).to.equal(
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "metadata.label", unknown field "spec.template.spec.containers[0].imagePolicy"',
      );
    });

    it('a value of the wrong type fails as Go decoding fails it (400, cannot be handled as)', async () => {
      const { code, status } = await failure(
        c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment('many', { replicas: 'many' }) }),
      );
      expect(code).to.equal(400);
      expect(status.reason).to.equal('BadRequest');
      expect(status.message).to.equal(
        'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32',
      );
    });

    it('a number its Go integer type cannot hold fails as Go decoding fails it (StatefulSet replicas 1e12 into int32), never reaching a controller', async () => {
      const set = { ...deployment('huge', {}), kind: 'StatefulSet' };
      const body = JSON.stringify({ ...set, spec: { ...set.spec, replicas: 1e12 } });
      const res = await raw(c.server, 'POST', '/apis/apps/v1/namespaces/default/statefulsets', body);
      expect(res.status).to.equal(400);
      expect((res.json as { message: string }).message).to.equal(
        'StatefulSet in version "v1" cannot be handled as a StatefulSet: json: cannot unmarshal number 1000000000000 into Go struct field StatefulSetSpec.spec.replicas of type int32',
      );
      const fits = await raw(
        c.server,
        'POST',
        '/apis/apps/v1/namespaces/default/statefulsets?dryRun=All',
        JSON.stringify({ ...set, spec: { ...set.spec, replicas: 2 ** 31 - 1 } }),
      );
      expect(fits.status).to.equal(201);
    });

    it('Lease leaseDurationSeconds "abc" is refused; a string in a map of strings too; quantities take numbers', async () => {
      const lease = await failure(
        c.coordination.createNamespacedLease({
          namespace: 'default',
          body: { metadata: { name: 'l' }, spec: { leaseDurationSeconds: 'abc' } } as never,
        }),
      );
      expect(lease.code).to.equal(400);
      expect(lease.status.message).to.contain(
        'json: cannot unmarshal string into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32',
      );
      const cm = await failure(
        c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'n' }, data: { n: 1 } } as never }),
      );
      expect(cm.status.message).to.contain('json: cannot unmarshal number into Go struct field ConfigMap.data of type string');
      const pod = await c.core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { name: 'q' },
          spec: { containers: [{ name: 'c', image: 'busybox', resources: { limits: { cpu: 1 as never, memory: '64Mi' } } }] },
        },
      });
      expect(pod.spec?.containers[0].resources?.limits).to.deep.equal({ cpu: 1, memory: '64Mi' });
    });

    it('patches are decoded too: a merge patch adding an unknown field is refused under Strict', async () => {
      await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'patched' }, data: { a: '1' } } });
      const res = await raw(
        c.server,
        'PATCH',
        '/api/v1/namespaces/default/configmaps/patched?fieldValidation=Strict',
        JSON.stringify({ datum: { b: '2' } }),
        {
          'content-type': 'application/merge-patch+json',
        },
      );
      expect(res.status).to.equal(400);
      expect((res.json as { message: string }).message).to.equal(
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "datum"',
      );
    });
  });

  describe('Go validation table (ranges and enums)', () => {
    it('Service port 99999 and type Bogus are 422 Invalid with field paths', async () => {
      const { code, status } = await failure(
        c.core.createNamespacedService({
          namespace: 'default',
          body: { metadata: { name: 'bad' }, spec: { type: 'Bogus', ports: [{ port: 99999 }] } },
        }),
      );
      expect(code).to.equal(422);
      const causes = (status.details as { causes: { field: string; message: string }[] }).causes;
      expect(causes).to.deep.include({
        reason: 'FieldValueNotSupported',
        field: 'spec.type',
        message: 'Unsupported value: "Bogus": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
      });
      expect(causes).to.deep.include({
        reason: 'FieldValueInvalid',
        field: 'spec.ports[0].port',
        message: 'Invalid value: 99999: must be between 1 and 65535, inclusive',
      });
    });

    it('Deployment replicas -1, Lease leaseDurationSeconds 0 and a Pod restartPolicy Sometimes are 422', async () => {
      const d = await failure(c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment('neg', { replicas: -1 }) }));
      expect(d.code).to.equal(422);
      expect(d.status.message).to.contain('spec.replicas: Invalid value: -1: must be greater than or equal to 0');
      const l = await failure(
        c.coordination.createNamespacedLease({
          namespace: 'default',
          body: { metadata: { name: 'zero' }, spec: { leaseDurationSeconds: 0 } },
        }),
      );
      expect(l.code).to.equal(422);
      expect(l.status.message).to.contain('spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0');
      const p = await failure(
        c.core.createNamespacedPod({
          namespace: 'default',
          body: { metadata: { name: 'p' }, spec: { restartPolicy: 'Sometimes', containers: [{ name: 'c', image: 'busybox' }] } },
        }),
      );
      expect(p.code).to.equal(422);
      expect(p.status.message).to.contain('spec.restartPolicy: Unsupported value: "Sometimes"');
    });

    it('a Deployment whose pod template has restartPolicy Never is 422, as for every controller that keeps Pods running', async () => {
      const d = deployment('never', {});
      (d.spec.template.spec as Record<string, unknown>).restartPolicy = 'Never';
      const { code, status } = await failure(c.apps.createNamespacedDeployment({ namespace: 'default', body: d }));
      expect(code).to.equal(422);
      const causes = (status.details as { causes: unknown[] }).causes;
      expect(causes).to.deep.equal([
        {
          reason: 'FieldValueNotSupported',
          field: 'spec.template.spec.restartPolicy',
          message: 'Unsupported value: "Never": supported values: "Always"',
        },
      ]);
    });

    it('CronJob: a name over 52 characters, a negative startingDeadlineSeconds and history limits are 422', async () => {
      const cronJob = (name: string, spec: Record<string, unknown>) => ({
        metadata: { name },
        spec: {
          schedule: '* * * * *',
          jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } },
          ...spec,
        },
      });
      const long = 'x'.repeat(53);
      const named = await failure(
        c.kc.makeApiClient(k8s.BatchV1Api).createNamespacedCronJob({ namespace: 'default', body: cronJob(long, {}) }),
      );
      expect(named.code).to.equal(422);
      expect(named.status.message).to.equal(
        `CronJob.batch "${long}" is invalid: metadata.name: Invalid value: "${long}": must be no more than 52 characters`,
      );
      const counts = await failure(
        c.kc.makeApiClient(k8s.BatchV1Api).createNamespacedCronJob({
          namespace: 'default',
          body: cronJob('negative', { startingDeadlineSeconds: -5, successfulJobsHistoryLimit: -1, failedJobsHistoryLimit: -1 }),
        }),
      );
      expect(counts.code).to.equal(422);
      for (const field of ['startingDeadlineSeconds', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit']) {
        expect(counts.status.message).to.match(new RegExp(`spec\\.${field}: Invalid value: -\\d: must be greater than or equal to 0`));
      }
      await c.kc.makeApiClient(k8s.BatchV1Api).createNamespacedCronJob({ namespace: 'default', body: cronJob('x'.repeat(52), {}) });
    });
  });

  describe('defaults (the real server defaults, applied on every write)', () => {
    it('Deployment strategy, revisionHistoryLimit, progressDeadlineSeconds; pod template restartPolicy, dnsPolicy; Service type and sessionAffinity', async () => {
      const d = await c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment('defaulted', {}) });
      expect(d.spec?.replicas).to.equal(1);
      expect(d.spec?.strategy).to.deep.equal({ type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } });
      expect(d.spec?.revisionHistoryLimit).to.equal(10);
      expect(d.spec?.progressDeadlineSeconds).to.equal(600);
      expect(d.spec?.template.spec?.restartPolicy).to.equal('Always');
      expect(d.spec?.template.spec?.dnsPolicy).to.equal('ClusterFirst');
      const s = await c.core.createNamespacedService({
        namespace: 'default',
        body: { metadata: { name: 'defaulted' }, spec: { ports: [{ port: 80 }] } },
      });
      expect(s.spec?.type).to.equal('ClusterIP');
      expect(s.spec?.sessionAffinity).to.equal('None');
      expect(s.spec?.ports?.[0]).to.include({ protocol: 'TCP', targetPort: 80 });
    });
  });

  describe('/openapi/v3 carries the Kubernetes definitions', () => {
    it('apis/apps/v1 has io.k8s.api.apps.v1.Deployment with x-kubernetes-group-version-kind and its referenced definitions', async () => {
      const res = await raw(c.server, 'GET', '/openapi/v3/apis/apps/v1');
      const schemas = (res.json as { components: { schemas: Record<string, Record<string, unknown>> } }).components.schemas;
      expect(schemas['io.k8s.api.apps.v1.Deployment']['x-kubernetes-group-version-kind']).to.deep.equal([
        { group: 'apps', version: 'v1', kind: 'Deployment' },
      ]);
      expect(schemas['io.k8s.api.apps.v1.DeploymentSpec'].required).to.deep.equal(['selector', 'template']);
      expect(schemas).to.have.property('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
    });
  });

  describe('kubectl v1.32', function () {
    let dir: string;
    let kubeconfig: string;
    before(async function () {
      if (!(await kubectlAvailable())) this.skip(); // kubectl is not on PATH
      dir = await mkdtemp(join(tmpdir(), 'rxkube-builtin-'));
      kubeconfig = join(dir, 'kubeconfig');
      await c.server.writeKubeconfig(kubeconfig);
    });
    after(async () => {
      if (dir) await rm(dir, { recursive: true, force: true });
    });
    const kubectl = (stdin: string | undefined, ...args: string[]): Promise<{ code: number; out: string; err: string }> =>
      new Promise((resolve) => {
        const child = execFile(
          'kubectl',
          ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args],
          { timeout: 30_000 },
          (error, out, err) => resolve({ code: error ? Number(error.code ?? 1) : 0, out, err }),
        );
        child.stdin?.end(stdin ?? '');
      });
    const manifest = (name: string, extra: string) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  ${extra}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec: {containers: [{name: web, image: nginx}]}
`;

    it('apply of a Deployment with the typo spec.replica fails with strict decoding error; --validate=false drops the field', async () => {
      const strict = await kubectl(manifest('typo', 'replica: 3'), 'apply', '-f', '-');
      expect(strict.code).to.not.equal(0);
      expect(strict.err).to.contain('strict decoding error: unknown field "spec.replica"');
      const lax = await kubectl(manifest('typo', 'replica: 3'), 'apply', '--validate=false', '-f', '-');
      expect(lax.out).to.contain('deployment.apps/typo created');
      const d = await c.apps.readNamespacedDeployment({ name: 'typo', namespace: 'default' });
      expect(d.spec).to.not.have.property('replica');
    });

    it('apply of replicas: "many" fails with the Go decoding error', async () => {
      const r = await kubectl(manifest('many', 'replicas: "many"'), 'apply', '-f', '-');
      expect(r.code).to.not.equal(0);
      expect(r.err).to.contain('cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32');
    });

    it('explain deployment.spec and deployment.spec.template.spec.containers.ports describe the fields', async () => {
      const spec = await kubectl(undefined, 'explain', 'deployment.spec');
      expect(spec.err).to.equal('');
      expect(spec.out).to.contain('FIELD: spec <DeploymentSpec>');
      expect(spec.out).to.match(/replicas\s+<integer>/);
      expect(spec.out).to.match(/template\s+<PodTemplateSpec> -required-/);
      const ports = await kubectl(undefined, 'explain', 'deployment.spec.template.spec.containers.ports');
      expect(ports.out).to.match(/containerPort\s+<integer> -required-/);
    });
  });
});
