// rxkube variant of the end-to-end bench: an Operator with defaults (the kubeconfig of KUBECONFIG,
// as a user's program without a KubeConfig of its own), status = { observedGeneration, value: spec.value * 2 }.
// Module paths that exist in older trees too (the rxkube-before variant compiles this file there).
import { Operator } from '../../../lib/operator/index.js';
import { createLogger } from '../../../lib/observe/index.js';
import { COUNTER_RESOURCE, counterReconciler } from './counter-reconciler.js';

const mark = (globalThis as { e2eMark?: (name: string) => void }).e2eMark;
mark?.('imports');

const operator = new Operator({ logger: createLogger({ level: 'warn' }), handleSignals: true });
operator.register(counterReconciler(), { resource: COUNTER_RESOURCE, namespaces: ['default'] });
await operator.start();
mark?.('started');
