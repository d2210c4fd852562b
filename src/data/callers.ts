// Callers moving house: every caller's settings, credits, allow-list and usage as NDJSON, and read
// back into another store (SQLite -> PostgreSQL, or a new file). One line per caller, then one per
// usage row:
//   {"caller":{"username":"acme","credits":5,"dailyLimit":null,"rate":null,"allow":[],"enabled":true}}
//   {"usage":{"username":"acme","day":"2026-03-01","operation":"Check","found":3,"notFound":1}}
// Reading checks every line before anything is written. A caller's settings are written whether it
// is new to the store or not; its usage only when it is new, so that importing a file twice never
// counts a lookup twice.

import { allowProblem, rateProblem, SETTING_BOUNDS, type ManagedStore } from '../accounts/manage';
import { usernameProblem } from '../accounts/username';
import type { Account, UsageCount } from '../store/accounts';

export async function exportCallers(
  store: ManagedStore,
  write: (line: string) => void,
): Promise<{ callers: number; usage: number }> {
  const accounts = await store.accounts.listAccounts('');
  for (const a of accounts)
    write(
      JSON.stringify({
        caller: {
          username: a.username,
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
        usage: { username: u.username, day: u.day, operation: u.operation, found: u.found, notFound: u.notFound },
      }),
    );
  return { callers: accounts.length, usage: usage.length };
}

class CallersFileError extends Error {}

const isInt = (v: unknown, min: number, max: number): boolean =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

function callerProblem(c: Record<string, unknown>): string | null {
  if (typeof c.username !== 'string') return 'caller.username must be a string';
  const u = usernameProblem(c.username);
  if (u) return u;
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
  if (typeof u.username !== 'string' || typeof u.operation !== 'string')
    return 'usage.username and usage.operation must be strings';
  if (typeof u.day !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(u.day)) return 'usage.day must be YYYY-MM-DD';
  if (!isInt(u.found, 0, Number.MAX_SAFE_INTEGER) || !isInt(u.notFound, 0, Number.MAX_SAFE_INTEGER))
    return 'usage.found and usage.notFound must be whole numbers';
  return null;
}

/** The callers and usage of a file's lines, every line checked; the first problems as one error. */
export function parseCallers(lines: readonly string[]): { callers: Account[]; usage: UsageCount[] } {
  const callers: Account[] = [];
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
    else if (v.caller) callers.push(v.caller as unknown as Account);
    else usage.push(v.usage as unknown as UsageCount);
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
  parsed: { callers: Account[]; usage: UsageCount[] },
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
      target: c.username,
      before: before ?? null,
      after: c,
    });
  }
  const usage = parsed.usage.filter((u) => fresh.has(u.username));
  for (let i = 0; i < usage.length; i += 1000) await store.accounts.addUsage(usage.slice(i, i + 1000));
  return { callers: parsed.callers.length, added: fresh.size, usage: usage.length };
}
