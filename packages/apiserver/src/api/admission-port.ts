/**
 * What the server's own controllers need from admission, declared where they can reach it: the
 * garbage collector and the namespace controller delete through admission, as the real ones delete
 * through the API (so a webhook or a ValidatingAdmissionPolicy that refuses a DELETE keeps the
 * object). admission/ implements it; parts.ts hands it to the controllers.
 */
import type { ApiError } from '../base/errors.js';
import type { JsonObject } from '../base/json.js';
import type { Resolved } from './registry.js';

export interface DeleteAdmission {
  /** Whether admission may see this DELETE at all; false for most, and the controller deletes at once. */
  covers(r: Resolved, obj: JsonObject): boolean;
  /**
   * Admits the DELETE of `obj` (as stored) by the controller running as the kube-system
   * ServiceAccount `controller`; resolves with the refusal, or undefined when admitted.
   */
  admit(r: Resolved, obj: JsonObject, controller: string): Promise<ApiError | undefined>;
}
