import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import { kubeListWatch } from '../../lib/cache/index.js';
import { createKubeClient } from '../../lib/kube/index.js';
import { CONFIGMAPS, configMap, useCluster } from './helpers.js';

describe('cache/kubeListWatch: paged lists on the embedded API server', function () {
  this.timeout(30_000);
  const cluster = useCluster();

  async function fiveConfigMaps(): Promise<string> {
    const namespace = await cluster.namespace();
    for (const name of ['a', 'b', 'c', 'd', 'e']) await cluster.configMaps.create(configMap(namespace, name));
    return namespace;
  }

  const names = (items: readonly KubernetesObject[]) => items.map((o) => o.metadata?.name);

  it('ES1: with onPage, each page is handed over as it comes and the answer holds no items; without, the answer holds them all', async () => {
    const namespace = await fiveConfigMaps();
    const client = kubeListWatch<KubernetesObject>(createKubeClient(cluster.kubeConfig), CONFIGMAPS, { pageSize: 2 });
    const pages: (string | undefined)[][] = [];
    const streamed = await client.list({ namespace }, { onPage: (items) => pages.push(names(items)) });
    expect(pages).to.deep.equal([['a', 'b'], ['c', 'd'], ['e']]);
    expect(streamed.items).to.deep.equal([]);
    expect(Number(streamed.resourceVersion)).to.be.greaterThan(0);
    const whole = await client.list({ namespace });
    expect(names(whole.items)).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
  });

  it('ES1: an expired continue token (410 on a later page) takes the whole list again, once: no item twice, pages handed over or not', async () => {
    const namespace = await fiveConfigMaps();
    const client = kubeListWatch<KubernetesObject>(createKubeClient(cluster.kubeConfig), CONFIGMAPS, { pageSize: 2 });
    const expireSecondPage = () =>
      cluster.server.faults.failRequests({ verb: 'list', resource: 'configmaps', namespace, status: 410, skip: 1, count: 1 });
    expireSecondPage();
    const whole = await client.list({ namespace });
    expect(names(whole.items)).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
    expireSecondPage();
    const pages: (string | undefined)[][] = [];
    const streamed = await client.list({ namespace }, { onPage: (items) => pages.push(names(items)) });
    expect(pages).to.deep.equal([
      ['a', 'b'],
      ['a', 'b', 'c', 'd', 'e'],
    ]);
    expect(streamed.items).to.deep.equal([]);
  });
});
