/** Pure figures over what the soak recorded. */

export interface RunInterval {
  readonly name: string;
  /** Who ran it (the operator's identity). */
  readonly by: string;
  readonly start: number;
  readonly end: number;
}

/**
 * The most runs of one resource that overlapped in time (touching ends do not overlap), over all
 * resources, and the runs of the first overlap found.
 */
export function maxConcurrentRuns(runs: readonly RunInterval[]): { max: number; overlap: RunInterval[] } {
  const byName = new Map<string, RunInterval[]>();
  for (const run of runs) byName.set(run.name, [...(byName.get(run.name) ?? []), run]);
  let max = 0;
  let overlap: RunInterval[] = [];
  for (const list of byName.values()) {
    // ends sort before starts at the same instant
    const edges = list.flatMap((run) => [
      { at: run.start, open: true, run },
      { at: run.end, open: false, run },
    ]);
    edges.sort((a, b) => a.at - b.at || Number(a.open) - Number(b.open));
    const open = new Set<RunInterval>();
    for (const edge of edges) {
      if (edge.open) open.add(edge.run);
      else open.delete(edge.run);
      if (open.size > max) {
        max = open.size;
        if (max > 1) overlap = [...open];
      }
    }
  }
  return { max, overlap };
}

export interface MemorySample {
  readonly at: number;
  readonly heapUsed: number;
  readonly rss: number;
}

export interface MemoryTrend {
  readonly samples: number;
  readonly heapFirstMb: number;
  readonly heapLastMb: number;
  readonly heapMaxMb: number;
  /** Least-squares slope of heapUsed, MB per minute. */
  readonly heapSlopeMbPerMin: number;
  readonly rssFirstMb: number;
  readonly rssLastMb: number;
  readonly rssMaxMb: number;
  readonly rssSlopeMbPerMin: number;
}

const MB = 1024 * 1024;
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

function slopePerMinute(points: ReadonlyArray<readonly [number, number]>): number {
  if (points.length < 2) return 0;
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  return sxx === 0 ? 0 : (sxy / sxx) * 60_000;
}

export function memoryTrend(samples: readonly MemorySample[]): MemoryTrend | undefined {
  const first = samples[0];
  const last = samples.at(-1);
  if (!first || !last) return undefined;
  return {
    samples: samples.length,
    heapFirstMb: round(first.heapUsed / MB),
    heapLastMb: round(last.heapUsed / MB),
    heapMaxMb: round(Math.max(...samples.map((s) => s.heapUsed)) / MB),
    heapSlopeMbPerMin: round(slopePerMinute(samples.map((s) => [s.at, s.heapUsed / MB])), 2),
    rssFirstMb: round(first.rss / MB),
    rssLastMb: round(last.rss / MB),
    rssMaxMb: round(Math.max(...samples.map((s) => s.rss)) / MB),
    rssSlopeMbPerMin: round(slopePerMinute(samples.map((s) => [s.at, s.rss / MB])), 2),
  };
}

export interface LeaseVersion {
  readonly holder: string;
  /** renewTime: when its writer began the write (ms, the machine's one clock). */
  readonly renewedAt: number;
  /** When a watcher beside the server received it: about when the server stored it. */
  readonly seenAt: number;
}

export interface Failover {
  readonly newHolder: string;
  /** From the server storing the vanished holder's last renewal to storing the next holder's first version (as a watcher saw both): the measure. */
  readonly ms: number;
  /** The same by the writers' renewTimes (each write's start): never below the lease, or a candidate acted early. */
  readonly byRenewTimeMs: number;
  readonly lastRenewalSeenAt: number;
}

/**
 * For a holder that vanished at `at`: from its last renewal to the first version written by
 * another holder (a new holder's first renewTime is its acquireTime). Undefined if no one took
 * over, or if the holder took its lease back first (a cut-off shorter than the lease).
 */
export function failoverAfter(versions: readonly LeaseVersion[], holder: string, at: number): Failover | undefined {
  const lastIndex = versions.findLastIndex((v) => v.holder === holder && v.renewedAt <= at);
  const last = versions[lastIndex];
  if (!last) return undefined;
  const next = versions.slice(lastIndex + 1).find((v) => v.holder !== '' && v.renewedAt > last.renewedAt);
  if (!next || next.holder === holder) return undefined;
  return {
    newHolder: next.holder,
    ms: next.seenAt - last.seenAt,
    byRenewTimeMs: next.renewedAt - last.renewedAt,
    lastRenewalSeenAt: last.seenAt,
  };
}
