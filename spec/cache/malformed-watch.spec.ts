/**
 * Issue 32: a watch event that is no Kubernetes object must end that watch with an error naming
 * what was wrong, and the informer lists again and serves on — never an exception that ends the
 * process. The embedded server cannot be made to send such a stream, so a raw HTTP server here
 * serves the list and the watches, and the real informer (client-node's authentication, our line
 * reader) reads them.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { expect } from 'chai';
import { firstValueFrom, filter, take, toArray } from 'rxjs';
import { informer, type Informer, type InformerError } from '../../lib/cache/index.js';

const configMaps = { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true } as const;

function cm(name: string, resourceVersion: string): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'default', resourceVersion, uid: `uid-${name}` },
    data: { a: 'b' },
  };
}

/** Malformed watch lines, each with what the error must name. */
const MALFORMED: ReadonlyArray<readonly [string, RegExp]> = [
  ['{"type":"ADDED"}', /"ADDED" event without an object/],
  ['{"type":"MODIFIED","object":null}', /"MODIFIED" event whose object is null, not an object/],
  ['{"type":"ADDED","object":"x"}', /"ADDED" event whose object is a string, not an object/],
  ['{"type":"DELETED","object":[1]}', /"DELETED" event whose object is an array, not an object/],
  ['{"type":"ADDED","object":{"kind":"ConfigMap"}}', /"ADDED" event whose object is an object without metadata/],
  ['{"type":"ADDED","object":{"metadata":{"namespace":"default"}}}', /"ADDED" event whose object has no metadata.name/],
  ['{"type":"BOOKMARK","object":null}', /"BOOKMARK" event whose object is null/],
  ['{"type":"EXPLODED","object":{"metadata":{"name":"x"}}}', /event of unknown type "EXPLODED"/],
  ['{"object":{"metadata":{"name":"x"}}}', /event of unknown type "undefined"/],
  ['{"type":"ERROR","object":null}', /ERROR event without a Status \(object is null\)/],
  ['{"type":"ERROR","object":{"kind":"Status","code":"boom"}}', /ERROR event whose Status has no numeric code/],
];

describe('cache: a malformed watch event ends the watch and the informer lists again (issue 32)', function () {
  this.timeout(30_000);
  let server: Server;
  let inf: Informer<V1ConfigMap> | undefined;
  const served = { lists: 0, watches: 0 };
  /** What the n-th watch sends (index = watch number), then it stays open. */
  let watchLines: string[] = [];
  let listItems: unknown[] = [];
  const open = new Set<ServerResponse>();

  before(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (url.pathname !== '/api/v1/configmaps') {
        res.writeHead(404).end();
        return;
      }
      if (url.searchParams.get('watch') === 'true' && url.searchParams.get('sendInitialEvents') === 'true') {
        // As a server before 1.27 answers a watch-list: the informer falls back to paged lists.
        res.writeHead(422, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            reason: 'Invalid',
            code: 422,
            message: 'resourceVersionMatch is forbidden for watch',
          }),
        );
        return;
      }
      if (url.searchParams.get('watch') === 'true') {
        const line = watchLines[served.watches++];
        res.writeHead(200, { 'content-type': 'application/json' });
        if (line !== undefined) res.write(`${line}\n`);
        open.add(res);
        res.on('close', () => open.delete(res));
        return;
      }
      served.lists++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMapList',
          metadata: { resourceVersion: String(10 + served.lists) },
          items: listItems,
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterEach(() => {
    inf?.stop();
    inf = undefined;
    for (const res of open) res.destroy();
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  function start(): Informer<V1ConfigMap> {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'raw', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
      users: [{ name: 'raw' }],
      contexts: [{ name: 'raw', cluster: 'raw', user: 'raw' }],
      currentContext: 'raw',
    });
    inf = informer<V1ConfigMap>({ resource: configMaps, kubeConfig, backoff: { initialMs: 5, maxMs: 20, jitter: 0 } });
    return inf;
  }

  it('each malformed event (no object, null, not an object, no metadata, unknown type, ERROR without a Status) ends the watch with an error naming it; the informer relists and keeps serving', async () => {
    served.lists = 0;
    served.watches = 0;
    listItems = [cm('a', '1')];
    // Every watch but the last sends one malformed line; the last sends a good event.
    watchLines = [...MALFORMED.map(([line]) => line), JSON.stringify({ type: 'ADDED', object: cm('b', '99') })];
    const i = start();
    const errors = firstValueFrom(i.errors$.pipe(take(MALFORMED.length), toArray()));
    const added = firstValueFrom(i.events$.pipe(filter((e) => e.type === 'added' && e.object.metadata?.name === 'b')));
    i.start();
    const seen: InformerError[] = await errors;
    seen.forEach((failure, n) => {
      const [line, names] = MALFORMED[n]!;
      expect(failure.phase, line).to.equal('watch');
      expect((failure.error as Error).name, line).to.equal('MalformedWatchEventError');
      expect((failure.error as Error).message, line)
        .to.match(/watch of ConfigMap sent a malformed event: /)
        .and.to.match(names);
    });
    await added;
    // One list at the start and one after each malformed event: what came before it may be lost.
    expect(served.lists).to.equal(1 + MALFORMED.length);
    expect(
      i.store
        .list()
        .map((o) => o.metadata?.name)
        .sort(),
    ).to.deep.equal(['a', 'b']);
    expect(i.isHealthy()).to.equal(true);
  });

  it('a list item that is no object fails that list with an error naming it, and the list is retried', async () => {
    served.lists = 0;
    served.watches = 0;
    listItems = [cm('a', '1'), null];
    watchLines = [];
    const i = start();
    const failure = firstValueFrom(i.errors$);
    i.start();
    const { error, phase } = await failure;
    expect(phase).to.equal('list');
    expect((error as Error).message).to.match(/list of ConfigMap answered a malformed item: items\[1\] is null, not an object/);
    listItems = [cm('a', '1')];
    await firstValueFrom(i.synced$.pipe(filter(Boolean)));
    expect(i.store.list().map((o) => o.metadata?.name)).to.deep.equal(['a']);
  });
});
