// A caller's username is its only credential, so no log line holds it. A log line names the caller
// instead by a short fingerprint: enough to tell callers apart and to find one caller's lines
// (`reglookup users fingerprint USERNAME`), too short to be the credential or to look it up.

import { createHash } from 'node:crypto';

/** `sha256:` and the first 12 hex characters of SHA-256 of the username's UTF-8; `-` when none was given. */
export function fingerprint(username: string | undefined | null): string {
  if (username === undefined || username === null || username === '') return '-';
  return `sha256:${createHash('sha256').update(username, 'utf8').digest('hex').slice(0, 12)}`;
}
