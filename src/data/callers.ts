// Callers moving house: every caller's settings, credits, allow-list and usage as NDJSON, and read
// back into another store (SQLite -> PostgreSQL, or a new file). One line per caller, then one per
// usage row, each naming the account by its key (SHA-256 of its username, core/key.ts), never by
// the username:
//   {"caller":{"key":"9f86d0…","name":"acme","prefix":"acme-l","credits":5,"dailyLimit":null,"rate":null,
//     "allow":[],"enabled":true}}
//   {"usage":{"key":"9f86d0…","day":"2026-03-01","operation":"Check","found":3,"notFound":1}}
// A file written by a release before keys names callers by "username" instead: those are hashed as
// they are read, and named as the store's migration names them (the prefix and the key's start).
// Reading checks every line before anything is written. A caller's settings are written whether it
// is new to the store or not; its usage only when it is new, so that importing a file twice never
// counts a lookup twice.

import { allowProblem, rateProblem, SETTING_BOUNDS, type ManagedStore } from '../accounts/manage';
import { accountKey, prefixOf } from '../core/key';
import { invisibleIn, usernameProblem } from '../accounts/username';
import type { AccountInput, UsageCount } from '../store/accounts';

export async function exportCallers(
  store: ManagedStore,
  write: (line: string) => void,
): Promise<{ callers: number; usage: number }> {
  const accounts = await store.accounts.listAccounts('');
  for (const a of accounts)
    write(
      JSON.stringify({
        caller: {
          key: a.username,
          name: a.name,
          prefix: a.prefix,
          credits: a.credits,
          dailyLimit: a.dailyLimit,
          rate: a.rate,
          allow: a.allow,
          enabled: a.enabled,
        },
      }),
    );
  const usage = await store.admin.usageRange('0000-01-01', '9999-12-31');
  for (const u of usage)
    write(
      JSON.stringify({
        usage: { key: u.username, day: u.day, operation: u.operation, found: u.found, notFound: u.notFound },
      }),
    );
  return { callers: accounts.length, usage: usage.length };
}

class CallersFileError extends Error {}

const isInt = (v: unknown, min: number, max: number): boolean =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

const KEY_RE = /^[0-9a-f]{64}$/;

/** Who a line names: its key, or (a file of a release before keys) its username. */
function whoProblem(c: Record<string, unknown>, what: string): string | null {
  if (c.key !== undefined)
    return typeof c.key === 'string' && KEY_RE.test(c.key) ? null : `${what}.key must be 64 hex digits`;
  if (typeof c.username !== 'string') return `${what}.key (or, from an older release, ${what}.username) must be given`;
  return usernameProblem(c.username);
}

function callerProblem(c: Record<string, unknown>): string | null {
  const who = whoProblem(c, 'caller');
  if (who) return who;
  if (c.name !== undefined && (typeof c.name !== 'string' || c.name === '' || c.name.length > 200))
    return 'caller.name must be a string of 1 to 200 characters';
  if (c.prefix !== undefined && (typeof c.prefix !== 'string' || [...c.prefix].length > 6))
    return 'caller.prefix must be a string of at most 6 characters';
  if (c.credits !== null && !isInt(c.credits, 0, SETTING_BOUNDS.credits.max))
    return `caller.credits must be null or a whole number 0..${SETTING_BOUNDS.credits.max}`;
  if (c.dailyLimit !== null && !isInt(c.dailyLimit, SETTING_BOUNDS.dailyLimit.min, SETTING_BOUNDS.dailyLimit.max))
    return 'caller.dailyLimit must be null or a whole number of at least 1';
  if (c.rate !== null && (typeof c.rate !== 'number' || rateProblem(c.rate)))
    return 'caller.rate must be null, 0 or a number of lookups per second';
  if (!Array.isArray(c.allow) || c.allow.some((x) => typeof x !== 'string'))
    return 'caller.allow must be a list of addresses or CIDRs';
  const a = allowProblem(c.allow as string[]);
  if (a) return `caller.allow: ${a}`;
  if (typeof c.enabled !== 'boolean') return 'caller.enabled must be true or false';
  return null;
}

function usageProblem(u: Record<string, unknown>): string | null {
  const who = whoProblem(u, 'usage');
  if (who) return who;
  if (typeof u.operation !== 'string') return 'usage.operation must be a string';
  if (typeof u.day !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(u.day)) return 'usage.day must be YYYY-MM-DD';
  if (!isInt(u.found, 0, Number.MAX_SAFE_INTEGER) || !isInt(u.notFound, 0, Number.MAX_SAFE_INTEGER))
    return 'usage.found and usage.notFound must be whole numbers';
  return null;
}

/** A caller line as the store takes it: by key, named; an older release's username hashed and forgotten. */
function callerOf(c: Record<string, unknown>): AccountInput {
  const legacy = typeof c.key !== 'string';
  const key = legacy ? accountKey(c.username as string) : (c.key as string);
  const given = typeof c.prefix === 'string' ? c.prefix : legacy ? prefixOf(c.username as string) : '';
  // As the store's migration does: a prefix holding an invisible character is not kept.
  const prefix = invisibleIn(given) === null ? given : '';
  const name = typeof c.name === 'string' ? c.name : `${prefix === '' ? 'caller' : prefix}-${key.slice(0, 12)}`;
  return {
    username: key,
    name,
    prefix,
    credits: c.credits as number | null,
    dailyLimit: c.dailyLimit as number | null,
    rate: c.rate as number | null,
    allow: c.allow as string[],
    enabled: c.enabled as boolean,
  };
}

function usageOf(u: Record<string, unknown>): UsageCount {
  return {
    username: typeof u.key === 'string' ? u.key : accountKey(u.username as string),
    day: u.day as string,
    operation: u.operation as string,
    found: u.found as number,
    notFound: u.notFound as number,
  };
}

/** The callers and usage of a file's lines, every line checked; the first problems as one error. */
export function parseCallers(lines: readonly string[]): { callers: AccountInput[]; usage: UsageCount[] } {
  const callers: AccountInput[] = [];
  const usage: UsageCount[] = [];
  const problems: string[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    let v: Record<string, Record<string, unknown>>;
    try {
      v = JSON.parse(line) as Record<string, Record<string, unknown>>;
    } catch {
      problems.push(`line ${i + 1}: not JSON`);
      return;
    }
    const problem = v?.caller
      ? callerProblem(v.caller)
      : v?.usage
        ? usageProblem(v.usage)
        : 'neither a "caller" nor a "usage" line';
    if (problem) problems.push(`line ${i + 1}: ${problem}`);
    else if (v.caller) callers.push(callerOf(v.caller));
    else usage.push(usageOf(v.usage));
  });
  if (problems.length > 0)
    throw new CallersFileError(
      `${problems.length} line(s) refused, nothing imported: ${problems.slice(0, 5).join('; ')}`,
    );
  return { callers, usage };
}

/** Writes the callers (settings always; usage only of callers new to the store). */
export async function importCallers(
  store: ManagedStore,
  parsed: { callers: AccountInput[]; usage: UsageCount[] },
  actor: string,
): Promise<{ callers: number; added: number; usage: number }> {
  const fresh = new Set<string>();
  for (const c of parsed.callers) {
    const before = await store.accounts.getAccount(c.username);
    if (!before) fresh.add(c.username);
    await store.accounts.putAccount(c);
    await store.admin.addAudit({
      at: new Date().toISOString(),
      actor,
      action: 'import',
      target: c.name ?? c.username,
      before: before ?? null,
      after: c,
    });
  }
  const usage = parsed.usage.filter((u) => fresh.has(u.username));
  for (let i = 0; i < usage.length; i += 1000) await store.accounts.addUsage(usage.slice(i, i + 1000));
  return { callers: parsed.callers.length, added: fresh.size, usage: usage.length };
}
