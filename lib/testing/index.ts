/**
 * `rxkube/testing`: helpers for tests of an operator — marble tests of its scheduling in virtual
 * time, and waiting for a condition; tests against the embedded API server: `rxkube/testing/cluster`.
 * It exports its own names only: the `Operator` and the types of its configuration that its
 * signatures use are imported from `rxkube`.
 *
 * @module rxkube/testing
 */
import '../node-check.js';
export { causeCode, failAfter, outcomeCode, succeedAfter, testScheduler } from './marbles.js';
// Also in the main entry point (it builds events for pipelines of your own); kept here for marble tests.
export {
  resourceEvent,
  type ResourceEventOptions,
  type EventAction,
  type ReconcileCause,
  type ReconcileOutcome,
  type ResourceEvent,
} from '../core/index.js';
export type { RunResult } from '../processing/index.js';
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
