/** Results, not thrown errors, cross every process boundary. */
export type ErrorCode =
  | 'bad_args'
  | 'not_found'
  | 'forbidden_path'
  | 'conflict'
  | 'read_only'
  | 'invalid_input'
  | 'io'
  | 'unauthorized'
  /** The caller may not do this (e.g. the renderer appending a kind only the host writes). */
  | 'forbidden'
  /** An append to a run after its run_completed or run_failed. */
  | 'run_ended'
  /** A request or event over its size limit. */
  | 'too_large'
  | 'internal';

export interface ApiError {
  code: ErrorCode;
  message: string;
}

export type Result<T> = { ok: true; value: T } | { ok: false; error: ApiError };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const err = (code: ErrorCode, message: string): Result<never> => ({
  ok: false,
  error: { code, message },
});

/** An error carrying a code the UI and CLI can act on; transports turn it into a Result. */
export class ProofloopError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ProofloopError';
  }
}
