// The public entry point of rxkube: every folder re-exports its public names here.
export {};
