// Preloaded into every variant process (node --import): peak heap sampled every 50 ms, and the
// runs a variant counts in globalThis.e2eRuns, answered over the IPC channel the bench opens.
// A variant that also counts its status writes (globalThis.e2eWrites) and records the counters
// it wrote (globalThis.e2eWritten, a Set) gets those reported too; the set starts over at each
// report, so that it tells what the variant wrote in each phase.
import { registerHooks } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapSpaceStatistics, getHeapStatistics, writeHeapSnapshot } from 'node:v8';

// Modules loaded (imported or required, node's built-ins included), told with each mark.
let modules = 0;
registerHooks({
  load(url, context, next) {
    modules++;
    return next(url, context);
  },
});

// v8's heap statistics, not process.memoryUsage(): that one also reads the RSS from /proc and
// cost a few % of a variant's CPU at this rate.
let peakHeap = 0;
let reports = 0;
let mapReports = 0;
const sample = () => {
  peakHeap = Math.max(peakHeap, getHeapStatistics().used_heap_size);
};
setInterval(sample, 50).unref();

// What the RSS consists of at its peak: process.memoryUsage() every 250 ms (a fifth of the rate
// above), the sample with the highest RSS kept until the next report.
let atPeakRss;
const sampleMemory = () => {
  const usage = process.memoryUsage();
  if (atPeakRss && usage.rss <= atPeakRss.rss) return;
  // Which heap spaces hold the used heap: new (young objects), old (survivors, garbage not yet
  // collected among them), large objects (a big string or buffer, such as a whole list's body).
  const used = Object.fromEntries(getHeapSpaceStatistics().map((space) => [space.space_name, space.space_used_size]));
  atPeakRss = {
    ...usage,
    newSpace: used.new_space ?? 0,
    oldSpace: used.old_space ?? 0,
    largeObjectSpace: (used.large_object_space ?? 0) + (used.new_large_object_space ?? 0),
  };
};
setInterval(sampleMemory, 250).unref();

const mark = (name) => process.send?.({ type: 'mark', name, modules });
// The first run, the one moment every variant has alike (each one's own 'started' means something
// else: caches synced, a list done, a watch answered): marked when e2eRuns first counts one.
let runs = 0;
Object.defineProperty(globalThis, 'e2eRuns', {
  configurable: true,
  get: () => runs,
  set: (value) => {
    if (runs === 0 && value > 0) mark('first-run');
    runs = value;
  },
});
// A variant marks moments of its start-up (imports done, started); the bench times them on arrival.
globalThis.e2eMark = mark;
process.on('message', (message) => {
  if (message?.type !== 'report') return;
  // E2E_SMAPS_DIR: the process's memory map at each report, before the GC (where the RSS lies).
  const maps = process.env.E2E_SMAPS_DIR;
  if (maps) writeFileSync(join(maps, `${process.pid}-${++mapReports}.smaps`), readFileSync('/proc/self/smaps'));
  sample();
  sampleMemory();
  const peak = atPeakRss;
  atPeakRss = undefined;
  let heapAfterGc;
  let rssAfterGc;
  if (message.gc && typeof globalThis.gc === 'function') {
    globalThis.gc();
    const usage = process.memoryUsage();
    heapAfterGc = usage.heapUsed;
    rssAfterGc = usage.rss;
  }
  // E2E_HEAP_SNAPSHOT_DIR: a heap snapshot at each report after a GC (what the settled heap holds).
  const snapshots = process.env.E2E_HEAP_SNAPSHOT_DIR;
  if (snapshots && heapAfterGc !== undefined) writeHeapSnapshot(join(snapshots, `${process.pid}-${++reports}.heapsnapshot`));
  const resources = globalThis.e2eWritten?.size;
  globalThis.e2eWritten?.clear();
  process.send?.({
    type: 'report',
    peakHeap,
    heapUsed: process.memoryUsage().heapUsed,
    heapAfterGc,
    rssAfterGc,
    atPeakRss: peak,
    runs,
    writes: globalThis.e2eWrites,
    resources,
  });
});
// The IPC channel must not keep the process alive by itself.
process.channel?.unref();
