// The store's key of a username (key.ts) as the request path takes it: every lookup needs it, and a
// hash costs a few microseconds where a map hit costs a tenth of that; a service has few callers.
// Emptied when full (as ops/fingerprint.ts does), so a flood of distinct usernames costs a hash each
// and no memory beyond the bound.

import { accountKey } from './key';

const MAX_CACHED = 4096;
const cached = new Map<string, string>();

/** accountKey(username), remembered for the next requests of the same caller. */
export function keyOf(username: string): string {
  let key = cached.get(username);
  if (key === undefined) {
    key = accountKey(username);
    if (cached.size >= MAX_CACHED) cached.clear();
    cached.set(username, key);
  }
  return key;
}
