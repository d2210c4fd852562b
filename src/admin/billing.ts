// Billing: the usage of every caller over a range of UTC days, for an invoice run, as JSON rows or
// CSV. The admin API (GET /admin/api/usage) and `reglookup users usage --all` both write it from here.

import type { UsageCount } from '../store/accounts';
import type { AdminStore } from '../store/admin';
import { invalid } from './errors';

/** The longest range one request may ask for. */
const MAX_RANGE_DAYS = 366;

const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;

function checkDay(value: string, what: string): number {
  const ms = DAY_RE.test(value) ? Date.parse(`${value}T00:00:00Z`) : NaN;
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value)
    throw invalid(`${what} must be a UTC day written YYYY-MM-DD, got ${JSON.stringify(value.slice(0, 40))}`);
  return ms;
}

export async function usageRange(
  store: { readonly admin: AdminStore },
  from: string,
  to: string,
): Promise<{ from: string; to: string; rows: UsageCount[] }> {
  const a = checkDay(from, 'from');
  const b = checkDay(to, 'to');
  if (b < a) throw invalid(`to (${to}) is before from (${from})`);
  if ((b - a) / 86_400_000 + 1 > MAX_RANGE_DAYS)
    throw invalid(`from..to spans more than ${MAX_RANGE_DAYS} days; ask for a shorter range`);
  return { from, to, rows: await store.admin.usageRange(from, to) };
}

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote or line break; a text field that a
 * spreadsheet would take for a formula (= + - @ at its start) is prefixed with ' so it stays text.
 */
function field(v: string | number): string {
  if (typeof v === 'number') return String(v);
  const s = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The rows as the API answers them: by the account's name (the key of usage whose account is gone). */
export function usageJson(rows: readonly UsageCount[]): Record<string, string | number>[] {
  return rows.map((r) => ({
    name: r.name ?? r.username,
    day: r.day,
    operation: r.operation,
    found: r.found,
    notFound: r.notFound,
  }));
}

export function usageCsv(rows: readonly UsageCount[]): string {
  const lines = ['name,day,operation,found,not_found'];
  for (const r of rows)
    lines.push([r.name ?? r.username, r.day, r.operation, r.found, r.notFound].map(field).join(','));
  return lines.join('\r\n') + '\r\n';
}
