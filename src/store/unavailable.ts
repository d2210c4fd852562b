// A store that cannot do what was asked for now, for a reason the operator fixes and the caller can
// wait out: its disk is full, its write lock is held past the wait allowed (an import on SQLite),
// the server cannot be reached. The service answers SERVICE_UNAVAILABLE with Retry-After for it;
// the detail (`reason`) is for the log, never for the caller.

export type UnavailableKind = 'full' | 'busy' | 'unreachable' | 'io';

export class StoreUnavailableError extends Error {
  constructor(
    readonly kind: UnavailableKind,
    /** One line for the log: what failed and what to do. */
    readonly reason: string,
    /** Seconds a caller is told to wait before retrying. */
    readonly retryAfter = 5,
  ) {
    super(reason);
    this.name = 'StoreUnavailableError';
  }
}
