import { CoordinationV1Api, KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { expect } from 'chai';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { firstValueFrom, filter, timeout } from 'rxjs';
import { startApiServer } from '@rxkube/apiserver';
import { createLeaderElector, type LeaderElector } from '../../lib/leader/index.js';
import { consistently } from '../../lib/testing/index.js';

// Short durations so the suite takes seconds: the lease is written as 2 s (whole seconds, rounded up).
const TIMING = { leaseDurationMs: 1_500, renewDeadlineMs: 1_000, retryPeriodMs: 200 };
// How long these smoke tests give a hand-over over real HTTP on a loaded machine. The timings
// themselves (release seen at once, step-down within the renew deadline, take-over within lease
// + 1 s) are pinned in virtual time in failover.spec.ts.
const SMOKE_MS = 3 * 2_000;

/** A pass-through HTTP proxy in front of the API server whose traffic a test can break. */
async function startProxy(target: string): Promise<{ url: string; mode: 'pass' | 'fail' | 'hang'; close(): Promise<void> }> {
  const upstream = new URL(target);
  const state = { mode: 'pass' as 'pass' | 'fail' | 'hang' };
  const server: Server = createServer((req, res) => {
    if (state.mode === 'hang') return;
    if (state.mode === 'fail') {
      res.writeHead(503, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          code: 503,
          reason: 'ServiceUnavailable',
          message: 'injected',
        }),
      );
      return;
    }
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}

function kubeConfigFor(url: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser({ name: 'embedded', server: url, skipTLSVerify: true }, { name: 'test', token: 'test' });
  return kc;
}

/** Records every transition with its time, and whether two electors ever led at once. */
function track(electors: LeaderElector[]) {
  const changes: Array<{ who: string; leader: boolean; at: number }> = [];
  let overlap = false;
  const subs = electors.map((e) =>
    e.isLeader$.subscribe((leader) => {
      changes.push({ who: e.identity, leader, at: Date.now() });
      if (electors.filter((x) => x.isLeader).length > 1) overlap = true;
    }),
  );
  return { changes, overlap: () => overlap, unsubscribe: () => subs.forEach((s) => s.unsubscribe()) };
}

const becomes = (e: LeaderElector, value: boolean, ms = 5_000) =>
  firstValueFrom(
    e.isLeader$.pipe(
      filter((v) => v === value),
      timeout(ms),
    ),
  );

const microTime = (value: unknown): number => new Date(String(value instanceof Date ? value.toISOString() : value)).getTime();

describe('leader/LeaderElector against the embedded API server', function () {
  this.timeout(20_000);
  let server: Awaited<ReturnType<typeof startApiServer>>;
  let leases: CoordinationV1Api;
  const electors: LeaderElector[] = [];
  let leaseCount = 0;
  let leaseName: string;

  const elector = (name: string, options: { url?: string; releaseOnStop?: boolean } = {}) => {
    const e = createLeaderElector({
      kubeConfig: kubeConfigFor(options.url ?? server.url),
      leaseName,
      leaseNamespace: 'default',
      identity: name,
      ...TIMING,
      ...(options.releaseOnStop !== undefined ? { releaseOnStop: options.releaseOnStop } : {}),
    });
    electors.push(e);
    return e;
  };
  const readLease = (): Promise<V1Lease> => leases.readNamespacedLease({ name: leaseName, namespace: 'default' });

  before(async () => {
    server = await startApiServer();
    leases = kubeConfigFor(server.url).makeApiClient(CoordinationV1Api);
  });
  beforeEach(() => {
    leaseName = `lease-${++leaseCount}`;
  });
  afterEach(async () => {
    await Promise.all(electors.splice(0).map((e) => e.stop()));
  });
  after(async () => {
    await server?.close();
  });

  it('OB4: creates the lease when absent and renews it with MicroTime timestamps', async () => {
    const a = elector('a');
    a.start();
    await becomes(a, true);
    const first = await readLease();
    expect(first.spec?.holderIdentity).to.equal('a');
    expect(first.spec?.leaseDurationSeconds).to.equal(2);
    expect(first.spec?.leaseTransitions).to.equal(0);
    expect(String(first.spec?.renewTime)).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    await new Promise((resolve) => setTimeout(resolve, 3 * TIMING.retryPeriodMs));
    const later = await readLease();
    expect(microTime(later.spec?.renewTime)).to.be.greaterThan(microTime(first.spec?.renewTime));
    expect(String(later.spec?.acquireTime)).to.equal(String(first.spec?.acquireTime));
    expect(a.isLeader).to.equal(true);
  });

  it('OB4: of two electors on one lease only one leads', async () => {
    const a = elector('a');
    const b = elector('b');
    const t = track([a, b]);
    a.start();
    b.start();
    await Promise.race([becomes(a, true), becomes(b, true)]);
    await consistently('exactly one of a and b leads', () => [a.isLeader, b.isLeader].filter(Boolean).length === 1, 1_000);
    expect((await readLease()).spec?.holderIdentity).to.equal(a.isLeader ? 'a' : 'b');
    expect(t.overlap()).to.equal(false);
    t.unsubscribe();
  });

  it('OB4/OB5: when the leader stops it releases the lease and the other takes over', async () => {
    const a = elector('a');
    a.start();
    await becomes(a, true);
    const b = elector('b');
    b.start();
    await consistently('b does not lead while a holds the lease', () => !b.isLeader, 500);

    await a.stop();
    expect(a.isLeader).to.equal(false);
    // Released: the lease names a no longer (empty, or b already), so b need not wait it out.
    expect((await readLease()).spec?.holderIdentity).to.be.oneOf(['', 'b']);
    await becomes(b, true, SMOKE_MS);
    const lease = await readLease();
    expect(lease.spec?.holderIdentity).to.equal('b');
    expect(lease.spec?.leaseTransitions).to.equal(1);
  });

  it('OB4: a leader that vanishes without releasing is replaced only after its lease expires', async () => {
    const a = elector('a', { releaseOnStop: false });
    a.start();
    await becomes(a, true);
    const b = elector('b');
    b.start();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await a.stop();
    const lastRenew = microTime((await readLease()).spec?.renewTime);
    await becomes(b, true, SMOKE_MS);
    expect(Date.now() - lastRenew).to.be.at.least(2_000);
  });

  for (const mode of ['fail', 'hang'] as const) {
    it(`OB4: a leader whose renewals ${mode === 'fail' ? 'fail' : 'hang'} steps down by itself, before anyone else leads`, async () => {
      const proxy = await startProxy(server.url);
      try {
        const a = elector('a', { url: proxy.url });
        const b = elector('b');
        const t = track([a, b]);
        a.start();
        await becomes(a, true);
        b.start();
        await new Promise((resolve) => setTimeout(resolve, 400));
        const before = await readLease();
        expect(before.spec?.holderIdentity).to.equal('a');

        proxy.mode = mode;
        const brokenAt = Date.now();
        await becomes(a, false, SMOKE_MS);
        const steppedDownAt = Date.now();
        await becomes(b, true, SMOKE_MS);
        const takenOverAt = Date.now();

        const lease = await readLease();
        // It stepped down by itself, then b took over, never both leading.
        expect(steppedDownAt - brokenAt).to.be.below(SMOKE_MS);
        expect(takenOverAt).to.be.at.least(steppedDownAt);
        expect(lease.spec?.holderIdentity).to.equal('b');
        expect(t.overlap()).to.equal(false);
        t.unsubscribe();
      } finally {
        proxy.mode = 'pass';
        await proxy.close();
      }
    });
  }
});
