// Which upstream-cache entries an operator means (`reglookup cache`, the admin API's cache
// routes): an operation by its name (or a near spelling), a registration as lookups normalise it.

import { findOperation, suggestOperation } from '../contract/operations';
import type { CacheFilter } from '../store/cache';
import { normalizeRegistration } from './normalize';

/**
 * The filter for those texts (either may be absent: all entries); throws an Error naming `label(field)` for a bad one.
 */
export function cacheFilterOf(
  operation: string | undefined,
  registration: string | undefined,
  label: (field: 'operation' | 'registration') => string,
): CacheFilter {
  let op: string | undefined;
  if (operation !== undefined) {
    const found = findOperation(operation) ?? suggestOperation(operation);
    if (!found)
      throw new Error(
        `${label('operation')}: no operation is named '${operation.slice(0, 64)}' (see the list at /api/reg.asmx)`,
      );
    op = found.name;
  }
  let reg: string | undefined;
  if (registration !== undefined) {
    const r = normalizeRegistration(registration);
    if (!r.ok) throw new Error(`${label('registration')} '${registration.slice(0, 64)}' ${r.reason}`);
    reg = r.value;
  }
  return { operation: op, registration: reg };
}
