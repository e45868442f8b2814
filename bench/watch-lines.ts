/**
 * CPU time to read one long watch line fed in 64 KB chunks, as a socket delivers it: the line
 * splitter of the watch stream against the reader it replaced (the text so far rescanned from its
 * start on every chunk). Prints and saves the figures.
 *
 *   npm run bench:watch-lines -- [--out bench/results/watch-lines.json]
 */
import { writeFileSync } from 'node:fs';
import { lineSplitter } from '../lib/kube/line-splitter.js';
import { flag } from './heap.js';

const CHUNK = 64 * 1024;

/** The reader before issue 32: pending text plus the chunk, searched for a newline from its start. */
function rescanningReader(onLine: (line: string) => void): (chunk: Buffer) => void {
  let pending = '';
  return (chunk) => {
    const text = pending + chunk.toString('utf8');
    let start = 0;
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', start)) {
      onLine(text.slice(start, newline));
      start = newline + 1;
    }
    pending = text.slice(start);
  };
}

function cpuMs(read: (feed: (chunk: Buffer) => void) => void, make: (onLine: (line: string) => void) => (chunk: Buffer) => void): number {
  let lines = 0;
  const feed = make(() => lines++);
  const before = process.cpuUsage();
  read(feed);
  const used = process.cpuUsage(before);
  if (lines !== 1) throw new Error(`read ${lines} lines, not 1`);
  return Math.round((used.user + used.system) / 1000);
}

const out = flag('out', 'bench/results/watch-lines.json');
const results = [];
for (const megabytes of [2, 16]) {
  const line = Buffer.alloc(megabytes * 1024 * 1024, 'a');
  const read = (feed: (chunk: Buffer) => void): void => {
    for (let at = 0; at < line.length; at += CHUNK) feed(line.subarray(at, at + CHUNK));
    feed(Buffer.from('\n'));
  };
  const before = cpuMs(read, rescanningReader);
  const after = cpuMs(read, (onLine) => {
    const splitter = lineSplitter(onLine);
    return (chunk) => splitter.push(chunk);
  });
  results.push({ lineMegabytes: megabytes, chunkBytes: CHUNK, rescanningReaderCpuMs: before, lineSplitterCpuMs: after });
  console.log(results.at(-1));
}
writeFileSync(out, `${JSON.stringify({ node: process.version, date: new Date().toISOString(), results }, null, 2)}\n`);
console.log(`saved ${out}`);
