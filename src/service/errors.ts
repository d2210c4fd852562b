// What a lookup's failure becomes on the wire: the error table and LookupError (core/errors.ts), and
// the translation of anything thrown below the service (a store that cannot serve) into one of them.

import { LookupError } from '../core/errors';
import { StoreUnavailableError } from '../store/store';

export { ERRORS, LookupError, quote, type ErrorCode } from '../core/errors';

/** Seconds a caller is asked to wait while the store cannot be reached. */
const STORE_RETRY_AFTER_S = 5;

/**
 * Any thrown value as a LookupError: a store that cannot be reached is SERVICE_UNAVAILABLE (the
 * outage is logged once by the store's watcher, not per request); anything else unexpected becomes
 * INTERNAL_ERROR with no detail.
 */
export function asLookupError(err: unknown): LookupError {
  if (err instanceof LookupError) return err;
  if (err instanceof StoreUnavailableError) {
    return new LookupError(
      'SERVICE_UNAVAILABLE',
      `The service cannot use its database right now; nothing was charged; retry in ${STORE_RETRY_AFTER_S} s`,
      STORE_RETRY_AFTER_S,
    );
  }
  return LookupError.internal();
}
