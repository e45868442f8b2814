/**
 * The crash test: `rxkube apiserver --data DIR` in a child process, killed with SIGKILL at a
 * random point of a burst of concurrent writes (creates, updates, status writes, deletes), then
 * started again on the same directory, round after round. It checks that every acknowledged write
 * is there, that no resourceVersion a client saw is handed out again (the counter never goes
 * back), and that a watch from before the restart is answered 410 Gone.
 *
 *   npm run crash-test -- --rounds 50 [--writers 16] [--seed 1] [--out bench/results/crash-test.json]
 *
 * crash.spec.ts runs a few rounds of it in CI.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The repository, whose bench/results/ keeps the figures. */
const REPOSITORY = fileURLToPath(new URL('../../..', import.meta.url));
const NS = 'default';
const GROUP = 'crash.rxkube.dev';
const COUNTERS = `/apis/${GROUP}/v1/namespaces/${NS}/counters`;

export interface CrashTestOptions {
  rounds: number;
  /** Concurrent writers; each owns `keysPerWriter` objects, so what each write did is known. */
  writers?: number;
  keysPerWriter?: number;
  /** Longest time (ms) from the start of a burst to the kill. */
  maxBurstMs?: number;
  seed?: number;
  log?: (line: string) => void;
}

export interface CrashTestResult {
  rounds: number;
  kills: number;
  acknowledgedWrites: number;
  /** Acknowledged writes whose effect was missing after the restart (must be 0). */
  lostWrites: number;
  /** Restarts whose first new resourceVersion was not above every one a client had seen (must be 0). */
  resourceVersionRegressions: number;
  /** Watches from a pre-restart resourceVersion not answered 410 (must be 0). */
  watchesNot410: number;
  failures: string[];
}

interface State {
  v: number;
  s: number;
}
type Known = State | 'absent';
interface Key {
  name: string;
  acked: Known;
  rv: string;
  /** The write in flight when the server was killed: it may or may not have happened. */
  pending?: Known;
}

function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x1_0000_0000;
  };
}

interface Server {
  child: ChildProcess;
  url: string;
  exited: Promise<void>;
}

async function startServer(dataDir: string, kubeconfig: string): Promise<Server> {
  const child = spawn(
    process.execPath,
    [join(ROOT, 'bin/rxkube-apiserver.js'), '--port', '0', '--data', dataDir, '--kubeconfig', kubeconfig],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (b: Buffer): void => {
      out += b.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m && out.includes('press Ctrl-C')) resolve(m[1]);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then(() => reject(new Error(`apiserver exited before it was ready:\n${out}`)));
  });
  return { child, url, exited };
}

async function call(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': contentType },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const rvOf = (obj: Record<string, unknown>): string =>
  String((obj.metadata as { resourceVersion?: string } | undefined)?.resourceVersion ?? '');

const counterCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `counters.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'counters', singular: 'counter', kind: 'Counter' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

function counter(name: string, v: number, rv?: string): Record<string, unknown> {
  return { apiVersion: `${GROUP}/v1`, kind: 'Counter', metadata: { name, ...(rv ? { resourceVersion: rv } : {}) }, spec: { v } };
}

function stateOf(obj: Record<string, unknown>): State {
  return { v: Number((obj.spec as { v?: number } | undefined)?.v ?? -1), s: Number((obj.status as { s?: number } | undefined)?.s ?? 0) };
}

const same = (a: Known | undefined, b: Known): boolean =>
  a !== undefined && (a === 'absent' || b === 'absent' ? a === b : a.v === b.v && a.s === b.s);

/** One writer's loop: random writes to its own keys until the server goes away. */
async function writer(url: string, keys: Key[], random: () => number, counters: { acked: number; maxRv: number }): Promise<void> {
  let n = 0;
  for (;;) {
    const key = keys[Math.floor(random() * keys.length)];
    const cur = key.acked;
    n++;
    let next: Known;
    let req: () => Promise<{ status: number; body: Record<string, unknown> }>;
    if (cur === 'absent') {
      next = { v: n, s: 0 };
      req = () => call(url, 'POST', COUNTERS, counter(key.name, n));
    } else {
      const r = random();
      if (r < 0.45) {
        next = { v: n, s: cur.s };
        req = () => call(url, 'PUT', `${COUNTERS}/${key.name}`, counter(key.name, n, key.rv));
      } else if (r < 0.85) {
        next = { v: cur.v, s: n };
        req = () => call(url, 'PATCH', `${COUNTERS}/${key.name}/status`, { status: { s: n } }, 'application/merge-patch+json');
      } else {
        next = 'absent';
        req = () => call(url, 'DELETE', `${COUNTERS}/${key.name}`);
      }
    }
    key.pending = next;
    let res;
    try {
      res = await req();
    } catch {
      return; // killed: this write stays pending (unknown)
    }
    if (res.status >= 300) throw new Error(`${key.name}: unexpected ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    key.acked = next;
    key.pending = undefined;
    const rv = rvOf(res.body);
    if (next !== 'absent') key.rv = rv;
    counters.acked++;
    counters.maxRv = Math.max(counters.maxRv, Number(rv) || 0);
  }
}

/** Follows a watch, raising maxRv with every event it sees (a watcher must never see a version that is later lost). */
function follow(url: string, from: string, counters: { maxRv: number }): void {
  void (async () => {
    try {
      const res = await fetch(`${url}${COUNTERS}?watch=true&resourceVersion=${from}`);
      const reader = res.body?.getReader();
      if (!reader) return;
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += Buffer.from(value).toString();
        let nl;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = JSON.parse(buf.slice(0, nl)) as { object: Record<string, unknown> };
          buf = buf.slice(nl + 1);
          counters.maxRv = Math.max(counters.maxRv, Number(rvOf(line.object)) || 0);
        }
      }
    } catch {
      // the server was killed
    }
  })();
}

async function firstEvent(url: string, path: string): Promise<Record<string, unknown>> {
  const res = await fetch(url + path, { signal: AbortSignal.timeout(10_000) });
  const reader = res.body?.getReader();
  let buf = '';
  while (reader && !buf.includes('\n')) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += Buffer.from(value).toString();
  }
  await reader?.cancel();
  return JSON.parse(buf.slice(0, buf.indexOf('\n'))) as Record<string, unknown>;
}

export async function runCrashTest(options: CrashTestOptions): Promise<CrashTestResult> {
  const log = options.log ?? (() => undefined);
  const random = rng(options.seed ?? 1);
  const writers = options.writers ?? 16;
  const perWriter = options.keysPerWriter ?? 3;
  const maxBurstMs = options.maxBurstMs ?? 1500;
  const dir = await mkdtemp(join(tmpdir(), 'rxkube-crash-'));
  const dataDir = join(dir, 'data');
  const kubeconfig = join(dir, 'kubeconfig');
  const result: CrashTestResult = {
    rounds: options.rounds,
    kills: 0,
    acknowledgedWrites: 0,
    lostWrites: 0,
    resourceVersionRegressions: 0,
    watchesNot410: 0,
    failures: [],
  };
  const keys: Key[][] = Array.from({ length: writers }, (_, w) =>
    Array.from({ length: perWriter }, (_, k) => ({ name: `c-${w}-${k}`, acked: 'absent', rv: '' })),
  );
  let server: Server | undefined;
  let seenRv = 0;
  try {
    for (let round = 0; round <= options.rounds; round++) {
      server = await startServer(dataDir, kubeconfig);
      const { url } = server;
      if (round === 0) {
        const crd = await call(url, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', counterCrd);
        if (crd.status !== 201) throw new Error(`creating the CRD: ${crd.status}`);
        seenRv = Number(rvOf(crd.body));
        for (let i = 0; i < 100 && (await call(url, 'GET', COUNTERS)).status !== 200; i++) await new Promise((r) => setTimeout(r, 50));
      } else {
        // Everything acknowledged before the kill is there (or the write in flight, which may have happened).
        for (const k of keys.flat()) {
          const got = await call(url, 'GET', `${COUNTERS}/${k.name}`);
          const now: Known = got.status === 404 ? 'absent' : stateOf(got.body);
          if (same(k.acked, now)) {
            k.rv = got.status === 404 ? '' : rvOf(got.body);
          } else if (same(k.pending, now)) {
            k.acked = now;
            k.rv = now === 'absent' ? '' : rvOf(got.body);
          } else {
            result.lostWrites++;
            result.failures.push(
              `round ${round}: ${k.name} is ${JSON.stringify(now)} (${got.status} ${JSON.stringify(got.body).slice(0, 200)}), acknowledged ${JSON.stringify(k.acked)}`,
            );
            k.acked = now;
            k.rv = now === 'absent' ? '' : rvOf(got.body);
          }
          k.pending = undefined;
        }
        // A watch from the newest version a client saw before the kill: 410 Gone, so informers relist.
        const ev = await firstEvent(url, `${COUNTERS}?watch=true&resourceVersion=${seenRv}`);
        if (ev.type !== 'ERROR' || (ev.object as { code?: number }).code !== 410) {
          result.watchesNot410++;
          result.failures.push(`round ${round}: a watch from ${seenRv} got ${JSON.stringify(ev).slice(0, 200)}`);
        }
        // The counter moved on: the next write's version is above every version seen before the kill.
        const probe = await call(url, 'POST', `/api/v1/namespaces/${NS}/configmaps`, { metadata: { generateName: 'probe-' } });
        if (!(Number(rvOf(probe.body)) > seenRv)) {
          result.resourceVersionRegressions++;
          result.failures.push(`round ${round}: resourceVersion ${rvOf(probe.body)} after a restart, ${seenRv} seen before`);
        }
        seenRv = Math.max(seenRv, Number(rvOf(probe.body)));
      }
      if (round === options.rounds) break;
      const counters = { acked: 0, maxRv: seenRv };
      follow(url, String(seenRv), counters);
      const burst = Promise.all(keys.map((ks, w) => writer(url, ks, rng((options.seed ?? 1) * 1000 + round * 100 + w + 1), counters)));
      const errors = burst.catch((err: unknown) => err as Error);
      await new Promise((r) => setTimeout(r, 50 + random() * maxBurstMs));
      server.child.kill('SIGKILL');
      await server.exited;
      result.kills++;
      const err = await errors;
      if (err instanceof Error) throw err;
      result.acknowledgedWrites += counters.acked;
      seenRv = Math.max(seenRv, counters.maxRv);
      log(`round ${round + 1}: ${counters.acked} writes acknowledged before the kill, newest version seen ${seenRv}`);
    }
  } finally {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
    await rm(dir, { recursive: true, force: true });
  }
  return result;
}

/** The command's flags, read by node:util's parser as the server's own command reads its flags; a flag it does not know is an error. */
export function crashTestFlags(argv: string[]): { rounds: number; writers: number; seed: number; out: string } {
  const { values } = parseArgs({
    args: argv,
    options: { rounds: { type: 'string' }, writers: { type: 'string' }, seed: { type: 'string' }, out: { type: 'string' } },
    strict: true,
    allowPositionals: false,
  });
  const positive = (name: 'rounds' | 'writers' | 'seed', fallback: number): number => {
    const text = values[name];
    if (text === undefined) return fallback;
    const n = Number(text);
    if (text === '' || !Number.isInteger(n) || n <= 0) throw new Error(`crash-test: --${name} must be a positive integer, got ${text}`);
    return n;
  };
  return {
    rounds: positive('rounds', 50),
    writers: positive('writers', 16),
    seed: positive('seed', 1),
    out: values.out ?? join(REPOSITORY, 'bench/results/crash-test.json'),
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { out, ...options } = crashTestFlags(process.argv.slice(2));
  const started = Date.now();
  const result = await runCrashTest({ ...options, log: (l) => console.log(l) });
  const { failures, ...figures } = result;
  const report = {
    test: 'crash',
    date: new Date().toISOString(),
    node: process.version,
    config: options,
    results: { ...figures, seconds: Math.round((Date.now() - started) / 1000) },
  };
  console.log(JSON.stringify(report, null, 2));
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`saved ${out}`);
  for (const f of failures) console.error(f);
  process.exitCode = failures.length === 0 ? 0 : 1;
}
