/** The process host: the Operator that runs controllers with health, leader election, sharding and webhooks. */
export { Operator, operatorFacts, type OperatorOptions } from './operator.js';
