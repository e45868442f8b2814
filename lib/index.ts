// The public entry point of rxkube. The embedded API server is `rxkube/apiserver`, test helpers `rxkube/testing`.
export * from './core/index.js';
export * from './processing/index.js';
export * from './kube/index.js';
export * from './sources/index.js';
export * from './observe/index.js';
export * from './leader/index.js';
export * from './controller/index.js';
export * from './dependent/index.js';
export * from './workflow/index.js';
