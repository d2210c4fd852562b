// What a username may be: the rules a lookup applies to its `username` parameter (service/lookup.ts),
// so that `reglookup users` never saves a name no lookup could send; and, for a new one, nothing
// invisible that would make it look like another.

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

// Characters that show as nothing, or as another character, so that two different usernames look the
// same in a table, the console or a CSV: controls and format characters (bidirectional controls,
// zero-width spaces and joiners, the byte order mark, ...), whatever Unicode says to ignore when
// drawing (soft hyphen, Hangul fillers, variation selectors, tags), a lone surrogate, and spaces
// other than the plain one (no-break, ideographic, ...).
const INVISIBLE_RE = /[\p{Cc}\p{Cf}\p{Cs}\p{Default_Ignorable_Code_Point}\u2028\u2029]|(?! )\p{Zs}/u;
const INVISIBLE_ALL_RE = new RegExp(INVISIBLE_RE.source, 'gu');

const codePoint = (c: string): string =>
  `U+${(c.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`;

/** The first invisible or look-alike character of `name` (as U+XXXX), or null. */
export function invisibleIn(name: string): string | null {
  const m = INVISIBLE_RE.exec(name);
  return m ? codePoint(m[0]) : null;
}

/** Why `name` cannot be a new username (usernameProblem, and no invisible characters), or null. */
export function newUsernameProblem(name: string): string | null {
  const base = usernameProblem(name);
  if (base) return base;
  const c = invisibleIn(name);
  if (c)
    return `a username cannot contain invisible or formatting characters (bidirectional controls, zero-width characters, ...): it holds ${c}`;
  return null;
}

/** `name` with each invisible or look-alike character written as \u{XXXX} (and `\` as `\\`), for showing it. */
export function escapeInvisible(name: string): string {
  return name
    .replace(/\\/g, '\\\\')
    .replace(INVISIBLE_ALL_RE, (c) => `\\u{${(c.codePointAt(0) as number).toString(16).toUpperCase()}}`);
}

/** A new username of 128 random bits, in hex: unguessable, and safe in URLs, shells and logs. */
export function generateUsername(): string {
  return randomBytes(16).toString('hex');
}

/** The longest name of an account. */
const MAX_NAME_CHARS = 64;
const NAME_RE = /^[\p{L}\p{N}][\p{L}\p{N}._@-]*$/u;

/** Why `name` cannot name a new account, or null: letters, digits and . _ @ - only, starting with a letter or digit. */
export function nameProblem(name: string): string | null {
  if (name === '') return 'a name cannot be empty';
  if ([...name].length > MAX_NAME_CHARS) return `a name is at most ${MAX_NAME_CHARS} characters`;
  if (!NAME_RE.test(name)) return 'a name holds letters, digits and . _ @ - only, and starts with a letter or a digit';
  return null;
}
