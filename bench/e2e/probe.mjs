// Preloaded into every variant process (node --import): peak heap sampled every 20 ms, and the
// runs a variant counts in globalThis.e2eRuns, answered over the IPC channel the bench opens.
let peakHeap = 0;
const sample = () => {
  peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
};
setInterval(sample, 20).unref();
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
