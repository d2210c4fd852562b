// A caller's username is its only credential, so no log line holds it. A log line names the caller
// instead by a short fingerprint: enough to tell callers apart and to find one caller's lines
// (`reglookup users fingerprint USERNAME`), too short to stand in for the username.

// The fingerprint is the start of the account's key in the store (accounts/key.ts), so a log line
// and an account's row are matched by eye.

import { accountKey } from '../accounts/key';

// Every lookup needs the key (admission) and the fingerprint (the access line); a hash costs a few
// microseconds and a map hit a tenth of that, and a service has few callers. Emptied when full, so a
// flood of distinct usernames costs a hash each and no memory beyond the bound.
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

/** `sha256:` and the first 12 hex characters of SHA-256 of the username's UTF-8; `-` when none was given. */
export function fingerprint(username: string | undefined | null): string {
  if (username === undefined || username === null || username === '') return '-';
  return `sha256:${keyOf(username).slice(0, 12)}`;
}
