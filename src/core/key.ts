// An account's key in the store: SHA-256 of the username's UTF-8, in hex (docs/security.md). The
// accounts are kept under it and a log line names a caller by its first 12 characters
// (ops/fingerprint.ts), so a username is hashed once, here, for both.

import { createHash } from 'node:crypto';

/** The store's key for a username. */
export function accountKey(username: string): string {
  return createHash('sha256').update(username, 'utf8').digest('hex');
}

/**
 * The part of a username an account keeps for recognition (its `prefix`): a quarter of it, at most 6
 * characters, so that a short username is not kept whole (the stores' migrations keep the same).
 */
export function prefixOf(username: string): string {
  const chars = [...username];
  return chars.slice(0, Math.min(6, Math.floor(chars.length / 4))).join('');
}

// Every request needs the key, and a hash costs a few microseconds where a map hit costs a tenth of
// that; a service has few callers. Emptied when full, so a flood of distinct usernames costs a hash
// each and no memory beyond the bound.
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
