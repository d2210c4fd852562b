// The accounts side of the SQLite store (see accounts.ts for each method's contract), on the
// accounts file's connection (sqlite-layout.ts): a write lock of its own, which an import (on the
// records file) never holds.
// Today's charged lookups live in the account row (day, day_count) so that charging a lookup is one
// UPDATE: SQLite runs it under the file's write lock, which orders it against every other
// process's charge. The charges of one event-loop turn are committed together, in one transaction
// (charge()). The usage of a charged lookup is written in the same transaction as its charge;
// other usage records (lookups not found, accounts not metered) are written in batches, off the
// request path. The schema comes from migrations/sqlite-accounts.ts, applied when the store opens.
// Every write waits for the write lock asynchronously (sqlite-lock.ts), and one that cannot be
// committed (a full disk) throws: an UPDATE ... RETURNING is read with all(), which steps the
// statement to its end, where SQLite commits; get() stops at the first row and the commit's
// failure would be lost, with the credit reported taken but never written.

import type Database from 'better-sqlite3';
import { withWriteLock } from './sqlite-lock';
import {
  ACCOUNT_DEFAULTS,
  CREDITS_BOUND,
  type Account,
  type AccountChanges,
  type AccountInput,
  type AccountStore,
  type AccountSummary,
  type ChargeResult,
  type CreditResult,
  type UsageCount,
  defaultName,
} from './accounts';
import { callerLeft, type ChargeCaller } from './store';

export interface Row {
  username: string;
  credits: number | null;
  daily_limit: number | null;
  rate: number | null;
  allow: string;
  enabled: number;
  day: string | null;
  day_count: number;
  name: string;
  prefix: string;
  key_until: number | null;
  weak: string | null;
}

/** What the store does after each write: tell its watcher how writes go. */
interface WriteHooks {
  written(): void;
  failed(e: unknown): void;
}

interface PendingCharge {
  readonly username: string;
  readonly day: string;
  readonly operation: string | undefined;
  readonly caller: ChargeCaller | undefined;
  readonly resolve: (r: ChargeResult) => void;
  readonly reject: (e: unknown) => void;
}

export const COLUMNS =
  'username, credits, daily_limit, rate, allow, enabled, day, day_count, name, prefix, key_until, weak';

/** An account found by one of its keys: COLUMNS with that key's end (accounts.ts, keyUntil). */
const BY_KEY = `SELECT ${COLUMNS} FROM accounts WHERE username = @key
  UNION ALL SELECT ${COLUMNS.split(', ')
    .map((c) => (c === 'key_until' ? 'k.until AS key_until' : `a.${c}`))
    .join(', ')} FROM account_keys k JOIN accounts a ON a.username = k.account WHERE k.key = @key
  LIMIT 1`;

export function toAccount(r: Row): Account {
  return {
    username: r.username,
    name: r.name ?? defaultName(r.username),
    prefix: r.prefix,
    keyUntil: r.key_until,
    weak: r.weak,
    credits: r.credits,
    dailyLimit: r.daily_limit,
    rate: r.rate,
    allow: r.allow === '' ? [] : r.allow.split(','),
    enabled: r.enabled !== 0,
  };
}

/** Column values of the fields given; an absent field is not in the result. */
function columnsOf(changes: AccountChanges): Record<string, string | number | null> {
  const out: Record<string, string | number | null> = {};
  if (changes.credits !== undefined) out.credits = changes.credits;
  if (changes.dailyLimit !== undefined) out.daily_limit = changes.dailyLimit;
  if (changes.rate !== undefined) out.rate = changes.rate;
  if (changes.allow !== undefined) out.allow = changes.allow.join(',');
  if (changes.enabled !== undefined) out.enabled = changes.enabled ? 1 : 0;
  return out;
}

export class SqliteAccounts implements AccountStore {
  private readonly getStmt: Database.Statement<[string], Row>;
  private readonly byKeyStmt: Database.Statement<{ key: string }, Row>;
  private readonly chargeStmt: Database.Statement<
    { username: string; day: string },
    { credits: number | null; day_count: number }
  >;
  private readonly usageStmt: Database.Statement<[string, string, string, number, number]>;
  /** Charges asked for in this turn, committed together at its end (chargePending). */
  private pendingCharges: PendingCharge[] = [];

  constructor(
    private readonly db: Database.Database,
    private readonly hooks: WriteHooks,
    private readonly file: string,
  ) {
    // The tables are the accounts file's migrations' (migrations/sqlite-accounts.ts), applied before this.
    this.getStmt = db.prepare(`SELECT ${COLUMNS} FROM accounts WHERE username = ?`);
    this.byKeyStmt = db.prepare(BY_KEY);
    this.chargeStmt = db.prepare(
      `UPDATE accounts SET
         credits = CASE WHEN credits IS NULL THEN NULL ELSE credits - 1 END,
         day_count = CASE WHEN day = @day THEN day_count + 1 ELSE 1 END,
         day = @day
       WHERE username = @username AND enabled = 1
         AND (credits IS NULL OR credits > 0)
         AND (daily_limit IS NULL OR day IS NOT @day OR day_count < daily_limit)
       RETURNING credits, day_count`,
    );
    this.usageStmt = db.prepare(
      `INSERT INTO usage (username, day, operation, found, not_found) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (username, day, operation) DO UPDATE SET found = found + excluded.found, not_found = not_found + excluded.not_found`,
    );
  }

  async getAccount(username: string): Promise<Account | null> {
    const row = this.byKeyStmt.get({ key: username });
    return row ? toAccount(row) : null;
  }

  async getAccountByName(name: string): Promise<Account | null> {
    const row = this.db.prepare(`SELECT ${COLUMNS} FROM accounts WHERE name = ?`).get(name) as Row | undefined;
    return row ? toAccount(row) : null;
  }

  rotateKey(username: string, newKey: string, prefix: string, until: number): Promise<boolean> {
    return this.write(() =>
      this.db
        .transaction(() => {
          if (!this.getStmt.get(username) || this.byKeyStmt.get({ key: newKey })) return false;
          this.db
            .prepare(
              'UPDATE accounts SET key_until = MIN(COALESCE(key_until, @until), @until), prefix = @prefix WHERE username = @username',
            )
            .run({ username, until, prefix });
          this.db
            .prepare('UPDATE account_keys SET until = MIN(COALESCE(until, @until), @until) WHERE account = @username')
            .run({ username, until });
          this.db.prepare('INSERT INTO account_keys (key, account, until) VALUES (?, ?, NULL)').run(newKey, username);
          return true;
        })
        .immediate(),
    );
  }

  private insert(account: AccountInput): boolean {
    const a = { ...ACCOUNT_DEFAULTS, ...account };
    // No conflict target: a name or key already taken is refused alike (false).
    return (
      this.db
        .prepare(
          'INSERT INTO accounts (username, name, prefix, credits, daily_limit, rate, allow, enabled) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
        )
        .run(
          a.username,
          a.name ?? defaultName(a.username),
          a.prefix ?? '',
          a.credits,
          a.dailyLimit,
          a.rate,
          a.allow.join(','),
          a.enabled ? 1 : 0,
        ).changes > 0
    );
  }

  private update(username: string, changes: AccountChanges): boolean {
    const cols = columnsOf(changes);
    const names = Object.keys(cols);
    if (names.length === 0) return this.getStmt.get(username) !== undefined;
    const sql = `UPDATE accounts SET ${names.map((n) => `${n} = ?`).join(', ')} WHERE username = ?`;
    return this.db.prepare(sql).run(...names.map((n) => cols[n]), username).changes > 0;
  }

  /** One write (a statement or a transaction), once the write lock is free, its failure reported. */
  async write<T>(fn: () => T): Promise<T> {
    try {
      const done = await withWriteLock(fn, this.file);
      this.hooks.written();
      return done;
    } catch (e) {
      this.hooks.failed(e);
      throw e;
    }
  }

  addAccount(account: AccountInput): Promise<boolean> {
    return this.write(() => this.insert(account));
  }

  async putAccount(account: AccountInput): Promise<void> {
    const { username, ...changes } = account;
    await this.write(() =>
      this.db
        .transaction(() => {
          if (!this.insert(account) && !this.update(username, changes))
            throw new Error(`the name ${JSON.stringify(account.name)} is another account's`);
        })
        .immediate(),
    );
  }

  updateAccount(username: string, changes: AccountChanges, day: string): Promise<Account | null> {
    return this.write(() =>
      this.db
        .transaction(() => {
          const before = this.getStmt.get(username);
          if (!before) return null;
          this.update(username, changes);
          if (before.daily_limit === null && changes.dailyLimit != null && before.day !== day) {
            // A limit set mid-day counts the day's lookups so far, as far as usage has been flushed.
            this.db
              .prepare(
                'UPDATE accounts SET day = ?, day_count = (SELECT COALESCE(SUM(found), 0) FROM usage WHERE username = ? AND day = ?) WHERE username = ?',
              )
              .run(day, username, day, username);
          }
          return toAccount(this.getStmt.get(username) as Row);
        })
        .immediate(),
    );
  }

  addCredits(username: string, delta: number): Promise<CreditResult> {
    return this.write(() => this.creditNow(username, delta));
  }

  /** addCredits without the write lock: for a caller already inside a write (sqlite-admin.ts). */
  creditNow(username: string, delta: number): CreditResult {
    const [row] = this.db
      .prepare(
        'UPDATE accounts SET credits = MAX(0, credits + @delta) WHERE username = @username AND credits IS NOT NULL AND credits + @delta <= @bound RETURNING credits',
      )
      .all({ delta, username, bound: CREDITS_BOUND }) as { credits: number }[];
    if (row) return { balance: row.credits };
    const now = this.getStmt.get(username);
    return !now ? 'unknown' : now.credits === null ? 'unlimited' : 'bound';
  }

  setEnabled(username: string, enabled: boolean): Promise<boolean> {
    return this.write(
      () =>
        this.db.prepare('UPDATE accounts SET enabled = ? WHERE username = ?').run(enabled ? 1 : 0, username).changes >
        0,
    );
  }

  removeAccount(username: string): Promise<boolean> {
    return this.write(() =>
      this.db
        .transaction(() => {
          this.db.prepare('DELETE FROM usage WHERE username = ?').run(username);
          this.db.prepare('DELETE FROM account_keys WHERE account = ?').run(username);
          return this.db.prepare('DELETE FROM accounts WHERE username = ?').run(username).changes > 0;
        })
        .immediate(),
    );
  }

  async listAccounts(day: string): Promise<AccountSummary[]> {
    const rows = this.db
      .prepare(
        `SELECT ${COLUMNS}, MAX(CASE WHEN day = @day THEN day_count ELSE 0 END,
                COALESCE((SELECT SUM(found) FROM usage u WHERE u.username = a.username AND u.day = @day), 0)) AS used_today
         FROM accounts a ORDER BY username`,
      )
      .all({ day }) as (Row & { used_today: number })[];
    return rows.map((r) => ({ ...toAccount(r), usedToday: r.used_today }));
  }

  /**
   * Group commit: the charges asked for in one event-loop turn (the lookups served together) are
   * committed in one transaction at the end of the turn, each UPDATE in the order asked, so each
   * caller still learns whether its own credit was granted. One commit (one WAL append) per turn
   * instead of one per lookup; a batch that cannot be committed (full disk, lock held past its
   * bound) fails every charge in it, and none of them is taken. A charge is durable before its
   * lookup is answered, as before.
   */
  charge(username: string, day: string, operation?: string, caller?: ChargeCaller): Promise<ChargeResult> {
    return new Promise((resolve, reject) => {
      this.pendingCharges.push({ username, day, operation, caller, resolve, reject });
      if (this.pendingCharges.length === 1) setImmediate(() => void this.chargePending());
    });
  }

  private async chargePending(): Promise<void> {
    const batch = this.pendingCharges;
    this.pendingCharges = [];
    let granted: ({ credits: number | null; day_count: number } | 'left' | undefined)[];
    try {
      granted = await this.write(() =>
        this.db
          .transaction(() =>
            batch.map((c) => {
              // Asked inside the transaction: the answer follows its commit in the same turn, so a
              // caller still there now is there when it is sent.
              if (c.caller?.destroyed === true) return 'left' as const;
              const [row] = this.chargeStmt.all({ username: c.username, day: c.day });
              // The usage of a charged lookup is committed with its charge.
              if (row && c.operation !== undefined) this.usageStmt.run(c.username, c.day, c.operation, 1, 0);
              return row;
            }),
          )
          .immediate(),
      );
    } catch (e) {
      for (const c of batch) c.reject(e);
      return;
    }
    batch.forEach((c, i) => {
      const done = granted[i];
      if (done === 'left') c.reject(callerLeft('SQLite'));
      else c.resolve(done ? { ok: true, credits: done.credits, usedToday: done.day_count } : this.refusal(c.username));
    });
  }

  /** Why a charge was not granted, read after its batch. */
  private refusal(username: string): ChargeResult {
    const row = this.getStmt.get(username);
    if (!row) return { ok: false, reason: 'unknown' };
    if (row.enabled === 0) return { ok: false, reason: 'disabled' };
    if (row.credits !== null && row.credits <= 0) return { ok: false, reason: 'credits' };
    return { ok: false, reason: 'daily' };
  }

  async addUsage(counts: readonly UsageCount[]): Promise<void> {
    if (counts.length === 0) return;
    await this.write(() =>
      this.db
        .transaction(() => {
          for (const c of counts) this.usageStmt.run(c.username, c.day, c.operation, c.found, c.notFound);
        })
        .immediate(),
    );
  }

  async usage(username: string, fromDay: string): Promise<UsageCount[]> {
    return (
      this.db
        .prepare(
          'SELECT username, day, operation, found, not_found AS notFound FROM usage WHERE username = ? AND day >= ? ORDER BY day DESC, operation',
        )
        .all(username, fromDay) as UsageCount[]
    ).map((r) => ({ ...r }));
  }

  pruneUsage(beforeDay: string): Promise<number> {
    return this.write(() => this.db.prepare('DELETE FROM usage WHERE day < ?').run(beforeDay).changes);
  }
}
