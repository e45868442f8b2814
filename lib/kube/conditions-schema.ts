/** The schema of `status.conditions`, written once with TypeBox; `crd.ts` derives client-node's form from it. */
import { Type } from 'typebox';

/**
 * `status.conditions` as Kubernetes declares metav1.Condition lists, as a TypeBox schema: a
 * `listType=map` keyed by `type` (server-side apply merges each manager's conditions by type).
 * Its static type accepts what `statusCondition()` returns.
 */
export const StatusConditions = Type.Array(
  Type.Object({
    type: Type.String({
      maxLength: 316,
      pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
    }),
    status: Type.Union([Type.Literal('True'), Type.Literal('False'), Type.Literal('Unknown')]),
    reason: Type.String({ minLength: 1, maxLength: 1024, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' }),
    message: Type.String({ maxLength: 32768 }),
    lastTransitionTime: Type.String({ format: 'date-time' }),
    observedGeneration: Type.Optional(Type.Integer({ format: 'int64', minimum: 0 })),
  }),
  { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] },
);
