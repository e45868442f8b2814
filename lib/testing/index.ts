/**
 * `rxkube/testing`: helpers for tests of an operator — marble tests of its scheduling in virtual
 * time, and waiting for a condition; tests against the embedded API server: `rxkube/testing/cluster`.
 * It exports its own names only: the `Operator`, `ResourceEvent` and the types of its configuration
 * that its signatures use are imported from `rxkube`; `resourceEvent` (an event for a marble test)
 * and `RunResult` from `rxkube/pipeline`.
 *
 * @module rxkube/testing
 */
import '../node-check.js';
export { causeCode, failAfter, outcomeCode, succeedAfter, testScheduler } from './marbles.js';
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
