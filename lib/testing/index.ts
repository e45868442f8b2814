/**
 * `rxkube/testing`: helpers for tests of an operator — marble tests of its scheduling in virtual
 * time, and a test cluster (the embedded API server) with RBAC usage to check its manifests against.
 *
 * @module rxkube/testing
 */
export { causeCode, failAfter, outcomeCode, succeedAfter, testScheduler } from './marbles.js';
// Also in the main entry point (it builds events for pipelines of your own); kept here for marble tests.
export { resourceEvent, type ResourceEventOptions } from '../core/index.js';
export { consistently, eventually } from './wait.js';
