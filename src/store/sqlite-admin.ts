// The administration side of the SQLite store (see admin.ts for each method's contract), on the
// accounts file's connection and through its write path (write lock, hooks). A keyed top-up is one
// IMMEDIATE transaction: the key is looked up, the balance changed, the key and the audit entry
// written together, so a retry in this or another process finds the key and changes nothing.

import type Database from 'better-sqlite3';
import type { AccountSummary, CreditResult, UsageCount } from './accounts';
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
import { COLUMNS, toAccount, type Row, type SqliteAccounts } from './sqlite-accounts';

export class SqliteAdmin implements AdminStore {
  constructor(
    private readonly db: Database.Database,
    private readonly accounts: SqliteAccounts,
  ) {}

  async listPage(day: string, q: AccountPageQuery): Promise<AccountPage> {
    const rows = this.db
      .prepare(
        `SELECT ${COLUMNS}, MAX(CASE WHEN day = @day THEN day_count ELSE 0 END,
                COALESCE((SELECT SUM(found) FROM usage u WHERE u.username = a.username AND u.day = @day), 0)) AS used_today
         FROM accounts a WHERE name > @after AND (@search = '' OR instr(lower(name), lower(@search)) > 0
                                                  OR instr(lower(prefix), lower(@search)) > 0)
         ORDER BY name LIMIT @limit`,
      )
      .all({ day, after: q.after, search: q.search, limit: q.limit + 1 }) as (Row & { used_today: number })[];
    const page: AccountSummary[] = rows.slice(0, q.limit).map((r) => ({ ...toAccount(r), usedToday: r.used_today }));
    return { accounts: page, more: rows.length > q.limit };
  }

  private insertAudit(e: AuditInput): void {
    this.db
      .prepare('INSERT INTO audit (at, actor, action, target, before, after) VALUES (?, ?, ?, ?, ?, ?)')
      .run(
        e.at,
        e.actor,
        e.action,
        e.target,
        e.before === null ? null : JSON.stringify(e.before),
        e.after === null ? null : JSON.stringify(e.after),
      );
  }

  creditOnce(c: CreditOnce): Promise<CreditOnceResult> {
    return this.accounts.write(() =>
      this.db
        .transaction((): CreditOnceResult => {
          const seen = this.db.prepare('SELECT fingerprint, result FROM idempotency WHERE key = ?').get(c.key) as
            { fingerprint: string; result: string } | undefined;
          if (seen)
            return seen.fingerprint === c.fingerprint
              ? { result: JSON.parse(seen.result) as CreditResult, replayed: true }
              : 'conflict';
          const before = this.db.prepare('SELECT credits FROM accounts WHERE username = ?').get(c.username) as
            { credits: number | null } | undefined;
          const result = this.accounts.creditNow(c.username, c.delta);
          if (typeof result === 'object') {
            this.db
              .prepare('INSERT INTO idempotency (key, fingerprint, result, created_at) VALUES (?, ?, ?, ?)')
              .run(c.key, c.fingerprint, JSON.stringify(result), c.at);
            this.insertAudit({
              at: c.at,
              actor: c.actor,
              action: 'credit',
              target: c.target ?? c.username,
              before: { credits: before?.credits ?? null },
              after: { credits: result.balance, amount: c.delta },
            });
          }
          return { result, replayed: false };
        })
        .immediate(),
    );
  }

  addAudit(entry: AuditInput): Promise<void> {
    return this.accounts.write(() => this.insertAudit(entry));
  }

  async audit(beforeId: number, limit: number): Promise<AuditEntry[]> {
    const rows = this.db
      .prepare(
        'SELECT id, at, actor, action, target, before, after FROM audit WHERE (@before = 0 OR id < @before) ORDER BY id DESC LIMIT @limit',
      )
      .all({ before: beforeId, limit }) as AuditRow[];
    return rows.map(auditOf);
  }

  async usageRange(fromDay: string, toDay: string): Promise<UsageCount[]> {
    return (
      this.db
        .prepare(
          `SELECT u.username, COALESCE(a.name, u.username) AS name, u.day, u.operation, u.found, u.not_found AS notFound
             FROM usage u LEFT JOIN accounts a ON a.username = u.username WHERE u.day >= ? AND u.day <= ?
            ORDER BY COALESCE(a.name, u.username), u.day, u.operation`,
        )
        .all(fromDay, toDay) as UsageCount[]
    ).map((r) => ({ ...r }));
  }

  async countLowCredit(below: number): Promise<number> {
    return (
      this.db.prepare('SELECT COUNT(*) AS n FROM accounts WHERE credits IS NOT NULL AND credits < ?').get(below) as {
        n: number;
      }
    ).n;
  }

  prune(beforeDay: string): Promise<number> {
    return this.accounts.write(
      () =>
        this.db.prepare('DELETE FROM audit WHERE at < ?').run(beforeDay).changes +
        this.db.prepare('DELETE FROM idempotency WHERE created_at < ?').run(keysKeptFrom(beforeDay)).changes,
    );
  }
}
