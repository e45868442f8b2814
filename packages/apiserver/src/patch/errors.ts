/**
 * The one error type the patch algorithms throw. `code` is the HTTP status the API server should
 * answer with; `causes` become `details.causes` of the Status body (`reason` is the Kubernetes
 * cause type, e.g. "FieldManagerConflict", `field` a path like ".spec.replicas").
 */
export interface PatchErrorCause {
  reason?: string;
  message: string;
  field?: string;
}

export type PatchErrorCode = 400 | 409 | 413 | 415 | 422;

export class PatchError extends Error {
  override readonly name = 'PatchError';

  constructor(
    readonly code: PatchErrorCode,
    message: string,
    readonly causes?: PatchErrorCause[],
  ) {
    super(message);
  }

  /** The `reason` of the Kubernetes Status body for this code. */
  get statusReason(): 'BadRequest' | 'Conflict' | 'RequestEntityTooLarge' | 'UnsupportedMediaType' | 'Invalid' {
    switch (this.code) {
      case 400:
        return 'BadRequest';
      case 409:
        return 'Conflict';
      case 413:
        return 'RequestEntityTooLarge';
      case 415:
        return 'UnsupportedMediaType';
      case 422:
        return 'Invalid';
    }
  }
}
