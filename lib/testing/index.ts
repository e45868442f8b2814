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
