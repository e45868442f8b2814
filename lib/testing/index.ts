/**
 * `rxkube/testing`: helpers for tests of an operator — marble tests of its scheduling in virtual
 * time, and waiting for a condition; tests against the embedded API server: `rxkube/testing/cluster`.
 *
 * @module rxkube/testing
 */
import '../node-check.js';
export { causeCode, failAfter, outcomeCode, succeedAfter, testScheduler } from './marbles.js';
// Also in the main entry point (it builds events for pipelines of your own); kept here for marble tests.
export { resourceEvent, type ResourceEventOptions } from '../core/index.js';
export { consistently, eventually } from './wait.js';
export {
  parseTrace,
  recordTrace,
  replayTrace,
  TRACE_FORMAT,
  TRACE_VERSION,
  type TraceEntry,
  type TraceFile,
  type TraceRecorder,
  type TraceReplay,
  type TraceReplayOptions,
} from './trace.js';
