// A caller's username is its only credential, so no log line holds it. A log line names the caller
// instead by a short fingerprint: enough to tell callers apart and to find one caller's lines
// (`reglookup users fingerprint USERNAME`), too short to stand in for the username.

import { createHash } from 'node:crypto';

// The access line of every request needs one; a hash costs a few microseconds and a map hit a
// tenth of that, and a service has few callers. Emptied when full, so a flood of distinct
// usernames costs a hash each and no memory beyond the bound.
const MAX_CACHED = 4096;
const cached = new Map<string, string>();

/** `sha256:` and the first 12 hex characters of SHA-256 of the username's UTF-8; `-` when none was given. */
export function fingerprint(username: string | undefined | null): string {
  if (username === undefined || username === null || username === '') return '-';
  let fp = cached.get(username);
  if (fp === undefined) {
    fp = `sha256:${createHash('sha256').update(username, 'utf8').digest('hex').slice(0, 12)}`;
    if (cached.size >= MAX_CACHED) cached.clear();
    cached.set(username, fp);
  }
  return fp;
}
