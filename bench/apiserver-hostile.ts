/**
 * The hostile-client repros of the embedded API server, with the bound each now meets:
 *
 *   npx tsx --expose-gc bench/apiserver-hostile.ts [--out bench/results/apiserver-hostile.json]
 *
 * Each case is the attack, scaled to run in seconds, timed from request to answer over real
 * HTTP (client and server share one process). Memory cases report RSS growth and the heap after
 * a collection. Phases:
 *   1. json-patch: a 1.7 KB patch of 40 self-copies (was out of memory after 113 s);
 *   2. cel: a 6 KB object whose rule replaces a string by itself, then matches (was 69 s);
 *   3. strategic-merge: a dry-run patch of a 645 KB keyed list onto a Deployment holding one
 *      (was 48 s of a blocked event loop);
 *   4. watch-history: 200 updates of one 2.5 MB ConfigMap (was every version kept: 500 MB);
 *   5. unread-lists: 20 connections each asking for a 25 MB list and reading nothing (was 670 MB held).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startApiServer, type ApiServer } from '@rxkube/apiserver';

const CMS = '/api/v1/namespaces/default/configmaps';
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const mib = (n: number): number => Number((n / 1024 / 1024).toFixed(1));

async function call(
  server: ApiServer,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; ms: number }> {
  const t = performance.now();
  const res = await fetch(server.url + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': contentType },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await res.arrayBuffer();
  return { status: res.status, ms: Number((performance.now() - t).toFixed(1)) };
}

async function jsonPatch(server: ApiServer): Promise<Record<string, unknown>> {
  await call(server, 'POST', CMS, { metadata: { name: 'copies' } });
  const ops: unknown[] = [{ op: 'add', path: '/x', value: ['x'.repeat(16)] }];
  for (let i = 0; i < 40; i++) ops.push({ op: 'copy', from: '/x', path: '/x/-' });
  const r = await call(server, 'PATCH', `${CMS}/copies`, ops, 'application/json-patch+json');
  return { patchBytes: JSON.stringify(ops).length, ...r, bound: '10,000 operations; copies add at most 3 MiB' };
}

async function cel(server: ApiServer): Promise<Record<string, unknown>> {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'words.bench.rxkube.dev' },
    spec: {
      group: 'bench.rxkube.dev',
      scope: 'Namespaced',
      names: { plural: 'words', kind: 'Word' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    s: {
                      type: 'string',
                      maxLength: 8000,
                      'x-kubernetes-validations': [{ rule: "self.replace('a', self).matches('^(a|b)*c$') == false" }],
                    },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
  await call(server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
  for (let i = 0; i < 100 && (await call(server, 'GET', '/apis/bench.rxkube.dev/v1/words')).status !== 200; i++)
    await new Promise((r) => setTimeout(r, 20));
  const r = await call(server, 'POST', '/apis/bench.rxkube.dev/v1/namespaces/default/words', {
    apiVersion: 'bench.rxkube.dev/v1',
    kind: 'Word',
    metadata: { name: 'w' },
    spec: { s: 'a'.repeat(6000) },
  });
  return { objectBytes: 6000, ...r, bound: '1,000,000 cost units per evaluation, 10,000,000 per object' };
}

async function strategicMerge(server: ApiServer): Promise<Record<string, unknown>> {
  const env = (n: number, from: number) => Array.from({ length: n }, (_, i) => ({ name: `VARIABLE_${i + from}`, value: 'v' }));
  const n = 15_000;
  const deployment = {
    metadata: { name: 'big' },
    spec: {
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i', env: env(n, 0) }] } },
    },
  };
  await call(server, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment);
  const patch = { spec: { template: { spec: { containers: [{ name: 'c', env: env(n, n / 2).reverse() }] } } } };
  const r = await call(
    server,
    'PATCH',
    '/apis/apps/v1/namespaces/default/deployments/big?dryRun=All',
    patch,
    'application/strategic-merge-patch+json',
  );
  return { patchBytes: JSON.stringify(patch).length, items: n, ...r, bound: 'linear (items found by key)' };
}

async function watchHistory(): Promise<Record<string, unknown>> {
  const server = await startApiServer({ clientNode: false });
  try {
    gc();
    const before = process.memoryUsage();
    const value = (i: number) => ({ metadata: { name: 'large' }, data: { v: String(i % 10).repeat(2_500_000) } });
    await call(server, 'POST', CMS, value(0));
    const t = performance.now();
    for (let i = 1; i <= 200; i++) await call(server, 'PUT', `${CMS}/large`, value(i));
    const ms = performance.now() - t;
    gc();
    const after = process.memoryUsage();
    return {
      updates: 200,
      objectBytes: 2_500_000,
      ms: Math.round(ms),
      heapGrowthMiB: mib(after.heapUsed - before.heapUsed),
      rssGrowthMiB: mib(after.rss - before.rss),
      bound: 'historyBytes 64 MiB per resource',
    };
  } finally {
    await server.close();
  }
}

async function unreadLists(): Promise<Record<string, unknown>> {
  const server = await startApiServer({ clientNode: false });
  const sockets: Socket[] = [];
  try {
    for (let i = 0; i < 25; i++) await call(server, 'POST', CMS, { metadata: { name: `big-${i}` }, data: { v: 'x'.repeat(1_000_000) } });
    gc();
    const before = process.memoryUsage();
    const url = new URL(server.url);
    const statuses: Record<string, number> = {};
    for (let i = 0; i < 20; i++) {
      const socket = await new Promise<Socket>((resolve) => {
        const s = connect(Number(url.port), url.hostname, () => {
          s.write(`GET ${CMS} HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`);
          s.pause();
          resolve(s);
        });
      });
      sockets.push(socket);
      await new Promise((r) => setTimeout(r, 150));
    }
    await new Promise((r) => setTimeout(r, 1000));
    gc();
    const after = process.memoryUsage();
    const probe = await call(server, 'GET', `${CMS}/big-0`);
    statuses[probe.status] = 1;
    return {
      connections: 20,
      listBytes: 25_000_000,
      rssGrowthMiB: mib(after.rss - before.rss),
      externalGrowthMiB: mib(after.external + after.arrayBuffers - before.external - before.arrayBuffers),
      probeStatus: probe.status,
      bound: '400 in flight, 256 MiB unread answers (429 beyond), unread answers cut after 60 s',
    };
  } finally {
    for (const s of sockets) s.destroy();
    await server.close();
  }
}

const out = process.argv.includes('--out') ? process.argv[process.argv.indexOf('--out') + 1] : 'bench/results/apiserver-hostile.json';
const server = await startApiServer({ clientNode: false });
const result: Record<string, unknown> = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: cpus().length,
  loadavg: loadavg().map((l) => Number(l.toFixed(2))),
};
try {
  result.jsonPatch = await jsonPatch(server);
  result.cel = await cel(server);
  result.strategicMerge = await strategicMerge(server);
} finally {
  await server.close();
}
result.watchHistory = await watchHistory();
result.unreadLists = await unreadLists();
console.log(JSON.stringify(result, null, 2));
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
