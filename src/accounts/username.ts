// What a username may be: the rules a lookup applies to its `username` parameter (service/lookup.ts),
// so that `reglookup users` never saves a name no lookup could send.

import { randomBytes } from 'node:crypto';
import { CONTROL_RE, MAX_PARAM_CHARS } from '../core/params';

/** Why the name cannot be a username, or null when it can. */
export function usernameProblem(name: string): string | null {
  if (name === '') return 'a username cannot be empty';
  if (name.trim() !== name) return 'a username cannot start or end with spaces (lookups trim them)';
  if ([...name].length > MAX_PARAM_CHARS) return `a username is at most ${MAX_PARAM_CHARS} characters`;
  if (CONTROL_RE.test(name)) return 'a username cannot contain control characters (tabs, line breaks, ...)';
  return null;
}

/** A new username of 128 random bits, in hex: unguessable, and safe in URLs, shells and logs. */
export function generateUsername(): string {
  return randomBytes(16).toString('hex');
}
