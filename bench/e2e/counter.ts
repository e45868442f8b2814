import { customResourceDefinition } from '../../lib/kube/index.js';

/** The custom resource of the end-to-end bench: status = { observedGeneration, value: spec.value * 2 }. */
export const GROUP = 'bench.rxkube.io';
export const VERSION = 'v1';
export const PLURAL = 'counters';
export const NAMESPACE = 'default';
export const COUNTERS = { apiVersion: `${GROUP}/${VERSION}`, kind: 'Counter', plural: PLURAL, namespaced: true } as const;

export const counterCrd = customResourceDefinition({ group: GROUP, version: VERSION, kind: 'Counter', plural: PLURAL });
