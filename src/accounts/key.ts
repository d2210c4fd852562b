// An account's key in the store: SHA-256 of the username's UTF-8, in hex (docs/security.md).
import { createHash } from 'node:crypto';

/** The store's key for a username. */
export function accountKey(username: string): string {
  return createHash('sha256').update(username, 'utf8').digest('hex');
}
