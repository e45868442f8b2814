/**
 * `rxkube/webhooks`: admission (validating, mutating) and conversion webhooks — typed handlers,
 * pipeable operators over the requests, a round-trip check for conversions, and the HTTPS server
 * that serves them. An entry point of its own: an operator without webhooks loads none of it.
 *
 * @module rxkube/webhooks
 */
import './node-check.js';
export * from './webhooks/index.js';
