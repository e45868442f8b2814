// rxkube variant of the end-to-end bench: an Operator with defaults, status = { observedGeneration, value: spec.value * 2 }.
// Module paths that exist in older trees too (the rxkube-before variant compiles this file there).
import { Operator } from '../../../lib/controller/index.js';
import { loadKubeConfig } from '../../../lib/kube/index.js';
import { createLogger } from '../../../lib/observe/index.js';
import { COUNTER_RESOURCE, counterReconciler } from './counter-reconciler.js';

const mark = (globalThis as { e2eMark?: (name: string) => void }).e2eMark;
mark?.('imports');

const operator = new Operator({ kubeConfig: loadKubeConfig(), logger: createLogger({ level: 'warn' }), handleSignals: true });
operator.register(counterReconciler(), { resource: COUNTER_RESOURCE, namespaces: ['default'] });
await operator.start();
mark?.('started');
