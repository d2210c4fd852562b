// A caller's username is its only credential, so no log line holds it. A log line names the caller
// instead by a short fingerprint: enough to tell callers apart and to find one caller's lines
// (`reglookup users fingerprint USERNAME`), too short to stand in for the username. It is the start
// of the account's key (core/key.ts), so a caller known only by its key has the same one.

import { keyOf } from '../core/key';

/** `sha256:` and the first 12 hex characters of an account key. */
export function fingerprintOfKey(key: string): string {
  return `sha256:${key.slice(0, 12)}`;
}

/** `sha256:` and the first 12 hex characters of SHA-256 of the username's UTF-8; `-` when none was given. */
export function fingerprint(username: string | undefined | null): string {
  if (username === undefined || username === null || username === '') return '-';
  return fingerprintOfKey(keyOf(username));
}
