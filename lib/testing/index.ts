export { causeCode, failAfter, outcomeCode, resourceEvent, succeedAfter, testScheduler, type ResourceEventOptions } from './marbles.js';
export { eventually, startTestCluster, type TestCluster, type TestClusterOptions } from './cluster.js';
