// Preloaded into every variant process (node --import): peak heap sampled every 50 ms, and the
// runs a variant counts in globalThis.e2eRuns, answered over the IPC channel the bench opens.
import { getHeapStatistics } from 'node:v8';

// v8's heap statistics, not process.memoryUsage(): that one also reads the RSS from /proc and
// cost a few % of a variant's CPU at this rate.
let peakHeap = 0;
const sample = () => {
  peakHeap = Math.max(peakHeap, getHeapStatistics().used_heap_size);
};
setInterval(sample, 50).unref();
globalThis.e2eRuns = 0;
process.on('message', (message) => {
  if (message?.type !== 'report') return;
  sample();
  let heapAfterGc;
  if (message.gc && typeof globalThis.gc === 'function') {
    globalThis.gc();
    heapAfterGc = process.memoryUsage().heapUsed;
  }
  process.send?.({ type: 'report', peakHeap, heapUsed: process.memoryUsage().heapUsed, heapAfterGc, runs: globalThis.e2eRuns });
});
// The IPC channel must not keep the process alive by itself.
process.channel?.unref();
