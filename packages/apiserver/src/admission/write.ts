/**
 * Admission around the synchronous write path (api/core.ts). Webhooks answer over the network,
 * while a write is decoded, defaulted, validated and stored in one synchronous step; so a write
 * that a webhook may see runs in phases, each through the same core code:
 * 1. a dry run stops at the admission point (after decoding and defaulting, before validation)
 *    and hands over the object and the stored one;
 * 2. the mutating webhooks change that object;
 * 3. a dry run with the mutated object in its place gives the object as it would be stored
 *    (validated: an invalid mutation is the 422 the real server gives);
 * 4. the validating webhooks see that object;
 * 5. the write itself, with the mutated object, unless the stored object changed meanwhile: then
 *    all over again (at most MAX_ATTEMPTS), as the real server's update retries.
 * Writes no webhook's rules cover take the direct path.
 */
import type { WriteOptions, WriteResult } from '../api/core.js';
import { conflict, MODIFIED_CONFLICT } from '../api/errors.js';
import type { JsonObject } from '../api/json.js';
import { deepClone } from '../api/json.js';
import { resourceVersionOf } from '../api/meta.js';
import { replaceWithMutated, type AdmissionRequest, type AdmissionWebhooks } from './webhooks.js';

const MAX_ATTEMPTS = 3;

/** Thrown from the admission hook to end phase 1 once the object is in hand. */
const CAPTURED = Symbol('captured');
/** Thrown when the stored object changed between the phases. */
const STALE = Symbol('stale');

type Run = (opts: WriteOptions) => WriteResult;

/**
 * A create, update or patch through admission. `run` performs the write with the options given
 * (the core call the handler would make); `opts` are the request's.
 */
export async function admittedWrite(webhooks: AdmissionWebhooks, req: AdmissionRequest, opts: WriteOptions, run: Run): Promise<WriteResult> {
  if (!webhooks.mayApply(req)) return run(opts);
  const check = opts.admit;
  for (let attempt = 1; ; attempt++) {
    let captured: { obj: JsonObject; old: JsonObject | undefined } | undefined;
    try {
      run({
        ...opts,
        dryRun: true,
        warnings: [],
        admit: (obj, old) => {
          check?.(obj, old);
          captured = { obj: deepClone(obj), old: old && deepClone(old) };
          throw CAPTURED;
        },
      });
    } catch (err) {
      if (err !== CAPTURED) throw err;
    }
    // A write that never reached admission (none is known today) is written as it is.
    if (!captured) return run(opts);
    const { old } = captured;
    const sent = captured.obj;
    // A create from generateName: webhooks see no name yet, as on the real server.
    const generated = req.operation === 'CREATE' && req.name === '';
    const shown = generated ? withoutName(sent) : sent;
    const operation = old === undefined ? 'CREATE' : req.operation;
    const request: AdmissionRequest = { ...req, operation, name: generated ? '' : req.name };
    const warnings: string[] = [];
    const mutated = (await webhooks.mutate(request, shown, old, warnings)) ?? shown;
    const swap = (obj: JsonObject, current: JsonObject | undefined): void => {
      if ((current && resourceVersionOf(current)) !== (old && resourceVersionOf(old))) throw STALE;
      const name = (obj.metadata as JsonObject | undefined)?.name;
      replaceWithMutated(obj, mutated);
      if (generated) (obj.metadata as JsonObject).name = name ?? null;
      check?.(obj, current);
    };
    try {
      const preview = run({ ...opts, dryRun: true, warnings: [], admit: swap });
      await webhooks.validate({ ...request, name: generated ? String((preview.body.metadata as JsonObject | undefined)?.name ?? '') : request.name }, preview.body, old, warnings);
      const result = opts.dryRun ? preview : run({ ...opts, admit: swap });
      opts.warnings?.push(...warnings);
      return result;
    } catch (err) {
      if (err !== STALE) throw err;
      if (attempt >= MAX_ATTEMPTS) throw conflict({ group: req.resolved.type.group, plural: req.resolved.type.plural }, req.name, MODIFIED_CONFLICT);
    }
  }
}

function withoutName(obj: JsonObject): JsonObject {
  const copy = deepClone(obj);
  if (copy.metadata && typeof copy.metadata === 'object' && !Array.isArray(copy.metadata)) delete (copy.metadata as JsonObject).name;
  return copy;
}

/** A delete through admission: the webhooks see the stored object as oldObject. */
export async function admittedDelete<T>(webhooks: AdmissionWebhooks, req: AdmissionRequest, stored: JsonObject | undefined, run: () => T): Promise<T> {
  if (stored === undefined || !webhooks.mayApply(req)) return run();
  const warnings: string[] = [];
  await webhooks.mutate(req, undefined, stored, warnings);
  await webhooks.validate(req, undefined, stored, warnings);
  return run();
}
