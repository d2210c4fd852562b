// The administration side of the PostgreSQL store (see admin.ts for each method's contract). A keyed
// top-up is one transaction that first locks the account's row, so top-ups of one caller (with the
// same key or not) take turns; the key is then looked up, and only a change of balance writes it
// (INSERT ... ON CONFLICT DO NOTHING: a key reused at that very moment for another caller is found
// taken, and the transaction changes nothing), the balance and the audit entry.

import type pg from 'pg';
import { CREDITS_BOUND, type CreditResult, type UsageCount } from './accounts';
import {
  keysKeptFrom,
  type AccountPage,
  type AccountPageQuery,
  type AdminStore,
  auditOf,
  type AuditEntry,
  type AuditInput,
  type AuditRow,
  type CreditOnce,
  type CreditOnceResult,
} from './admin';
import { COLUMNS, toAccount, type PgRunner, type Row } from './postgres-accounts';
import { FOLD_SHARDS, LEASED } from './postgres-shards';

const AUDIT_INSERT = 'INSERT INTO audit (at, actor, action, target, before, after) VALUES ($1, $2, $3, $4, $5, $6)';

function auditValues(e: AuditInput): unknown[] {
  return [
    e.at,
    e.actor,
    e.action,
    e.target,
    e.before === null ? null : JSON.stringify(e.before),
    e.after === null ? null : JSON.stringify(e.after),
  ];
}

export class PostgresAdmin implements AdminStore {
  constructor(private readonly db: PgRunner) {}

  async listPage(day: string, q: AccountPageQuery): Promise<AccountPage> {
    const r = await this.db.query<Row & { used_today: string }>(
      'account-page',
      `SELECT ${COLUMNS}, GREATEST(CASE WHEN day = $1 THEN day_count ELSE 0 END,
              COALESCE((SELECT SUM(found) FROM usage_all u WHERE u.username = accounts.username AND u.day = $1), 0)) AS used_today
         FROM accounts WHERE name COLLATE "C" > $2
          AND ($3 = '' OR strpos(lower(name), lower($3)) > 0 OR strpos(lower(prefix), lower($3)) > 0)
         ORDER BY name COLLATE "C" LIMIT $4`,
      [day, q.after, q.search, q.limit + 1],
    );
    const accounts = r.rows.slice(0, q.limit).map((row) => ({ ...toAccount(row), usedToday: Number(row.used_today) }));
    return { accounts, more: r.rows.length > q.limit };
  }

  creditOnce(c: CreditOnce): Promise<CreditOnceResult> {
    return this.db.transaction(async (client: pg.PoolClient): Promise<CreditOnceResult> => {
      await client.query('SELECT 1 FROM accounts WHERE username = $1 FOR UPDATE', [c.username]);
      // The credits leased to shards back into the row (locked above): the balance is then the row's.
      await client.query(FOLD_SHARDS, [c.username]);
      const row = (
        await client.query<{ credits: string | null }>('SELECT credits FROM accounts WHERE username = $1', [c.username])
      ).rows[0];
      const seen = (
        await client.query<{ fingerprint: string; result: string }>(
          'SELECT fingerprint, result FROM idempotency WHERE key = $1',
          [c.key],
        )
      ).rows[0];
      if (seen)
        return seen.fingerprint === c.fingerprint
          ? { result: JSON.parse(seen.result) as CreditResult, replayed: true }
          : 'conflict';
      if (!row) return { result: 'unknown', replayed: false };
      if (row.credits === null) return { result: 'unlimited', replayed: false };
      const before = Number(row.credits);
      if (before + c.delta > CREDITS_BOUND) return { result: 'bound', replayed: false };
      const result: CreditResult = { balance: Math.max(0, before + c.delta) };
      const taken = await client.query(
        'INSERT INTO idempotency (key, fingerprint, result, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (key) DO NOTHING',
        [c.key, c.fingerprint, JSON.stringify(result), c.at],
      );
      if ((taken.rowCount ?? 0) === 0) return 'conflict';
      // Relative to the row, not written from `before`: the lock is held, but the statement says what it does.
      const done = await client.query<{ credits: string }>(
        'UPDATE accounts SET credits = GREATEST(0, credits + $2) WHERE username = $1 RETURNING credits',
        [c.username, c.delta],
      );
      const balance = Number(done.rows[0].credits);
      await client.query(
        AUDIT_INSERT,
        auditValues({
          at: c.at,
          actor: c.actor,
          action: 'credit',
          target: c.target ?? c.username,
          before: { credits: before },
          after: { credits: balance, amount: c.delta },
        }),
      );
      return { result: { balance }, replayed: false };
    });
  }

  async addAudit(entry: AuditInput): Promise<void> {
    await this.db.query('audit-add', AUDIT_INSERT, auditValues(entry));
  }

  async audit(beforeId: number, limit: number): Promise<AuditEntry[]> {
    const r = await this.db.query<AuditRow>(
      'audit-page',
      'SELECT id, at, actor, action, target, before, after FROM audit WHERE ($1 = 0 OR id < $1) ORDER BY id DESC LIMIT $2',
      [beforeId, limit],
    );
    return r.rows.map(auditOf);
  }

  async usageRange(fromDay: string, toDay: string): Promise<UsageCount[]> {
    const r = await this.db.query<{
      username: string;
      name: string;
      day: string;
      operation: string;
      found: string;
      not_found: string;
    }>(
      'usage-range',
      `SELECT u.username, COALESCE(a.name, u.username) AS name, u.day, u.operation, u.found, u.not_found
         FROM usage_all u LEFT JOIN accounts a ON a.username = u.username WHERE u.day >= $1 AND u.day <= $2
        ORDER BY COALESCE(a.name, u.username) COLLATE "C", u.day COLLATE "C", u.operation COLLATE "C"`,
      [fromDay, toDay],
    );
    return r.rows.map((u) => ({
      username: u.username,
      name: u.name,
      day: u.day,
      operation: u.operation,
      found: Number(u.found),
      notFound: Number(u.not_found),
    }));
  }

  async countLowCredit(below: number): Promise<number> {
    const r = await this.db.query<{ n: string }>(
      'accounts-low-credit',
      `SELECT COUNT(*) AS n FROM accounts WHERE credits IS NOT NULL AND credits + ${LEASED} < $1`,
      [below],
    );
    return Number(r.rows[0].n);
  }

  async prune(beforeDay: string): Promise<number> {
    const a = await this.db.query('audit-prune', 'DELETE FROM audit WHERE at < $1', [beforeDay]);
    const k = await this.db.query('idempotency-prune', 'DELETE FROM idempotency WHERE created_at < $1', [
      keysKeptFrom(beforeDay),
    ]);
    return (a.rowCount ?? 0) + (k.rowCount ?? 0);
  }
}
