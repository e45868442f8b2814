/**
 * `rxkube/operators`: the old name of `rxkube/pipeline` — the same module, kept for one release so
 * that code written against 0.1 still runs; import from `rxkube/pipeline`.
 *
 * @deprecated Import from `rxkube/pipeline`; this alias goes in the next release.
 * @module rxkube/operators
 */
export * from './pipeline.js';
