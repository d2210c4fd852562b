// The accounts side of the PostgreSQL store (see accounts.ts for each method's contract; the same
// contract as sqlite-accounts.ts keeps). Every write that must be atomic is one statement, or one
// transaction holding the row's lock: charge() groups the concurrent charges of one account in this
// process into one statement that locks the row, grants what credits and the daily limit allow,
// takes them, counts the day and writes the usage of the granted lookups, all in one commit; other
// processes' statements queue on the row lock and each reads the row as the one before left it.

import type pg from 'pg';
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
} from './accounts';

/** What the accounts side needs of the store: a pooled query, and one transaction on one connection. */
export interface PgRunner {
  query<R extends pg.QueryResultRow>(name: string, text: string, values: unknown[]): Promise<pg.QueryResult<R>>;
  transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T>;
}

export interface Row {
  username: string;
  credits: string | null;
  daily_limit: number | null;
  rate: number | null;
  allow: string;
  enabled: boolean;
  day: string | null;
  day_count: number;
}

export const COLUMNS = 'username, credits, daily_limit, rate, allow, enabled, day, day_count';

export function toAccount(r: Row): Account {
  return {
    username: r.username,
    // BIGINT arrives as text (it may exceed 2^53 in principle; balances never do).
    credits: r.credits === null ? null : Number(r.credits),
    dailyLimit: r.daily_limit,
    rate: r.rate,
    allow: r.allow === '' ? [] : r.allow.split(','),
    enabled: r.enabled,
  };
}

/** Column values of the fields given; an absent field is not in the result. */
function columnsOf(changes: AccountChanges): [string, unknown][] {
  const out: [string, unknown][] = [];
  if (changes.credits !== undefined) out.push(['credits', changes.credits]);
  if (changes.dailyLimit !== undefined) out.push(['daily_limit', changes.dailyLimit]);
  if (changes.rate !== undefined) out.push(['rate', changes.rate]);
  if (changes.allow !== undefined) out.push(['allow', changes.allow.join(',')]);
  if (changes.enabled !== undefined) out.push(['enabled', changes.enabled]);
  return out;
}

function insertValues(account: AccountInput): unknown[] {
  const a = { ...ACCOUNT_DEFAULTS, ...account };
  return [a.username, a.credits, a.dailyLimit, a.rate, a.allow.join(','), a.enabled];
}

const INSERT = 'INSERT INTO accounts (username, credits, daily_limit, rate, allow, enabled) VALUES ($1, $2, $3, $4, $5, $6)';

/** Most charges one statement takes (the rest wait for the next). */
const MAX_CHARGE_BATCH = 1000;

interface ChargeWaiter {
  readonly operation: string | null;
  resolve(r: ChargeResult): void;
  reject(e: unknown): void;
}

/**
 * Most charge statements of one account one instance has in flight at once. One: while it runs, the
 * charges of the following turns queue and the next statement takes them all, so batches grow with
 * the load and the database spends one commit on each. Measured with two instances (metered /
 * unmetered GET throughput, `npm run bench -- --metered`): 1 in flight 73 %, 2 in flight 62-70 %,
 * 3 in flight 63 % (more, smaller statements cost the database more than the shorter wait saves).
 */
const MAX_CHARGES_IN_FLIGHT = 1;

interface ChargeQueue {
  inFlight: number;
  /** A statement is due at the end of this event-loop turn. */
  scheduled: boolean;
  waiting: ChargeWaiter[];
}

export class PostgresAccounts implements AccountStore {
  /** Charges waiting per username and day while one statement for it is in flight. */
  private readonly charging = new Map<string, ChargeQueue>();

  constructor(private readonly db: PgRunner) {}

  async getAccount(username: string): Promise<Account | null> {
    const r = await this.db.query<Row>('account-get', `SELECT ${COLUMNS} FROM accounts WHERE username = $1`, [username]);
    return r.rows[0] ? toAccount(r.rows[0]) : null;
  }

  async addAccount(account: AccountInput): Promise<boolean> {
    const r = await this.db.query('account-add', `${INSERT} ON CONFLICT (username) DO NOTHING`, insertValues(account));
    return (r.rowCount ?? 0) > 0;
  }

  async putAccount(account: AccountInput): Promise<void> {
    const { username: _username, ...changes } = account;
    const cols = columnsOf(changes);
    // One statement: the insert, or on conflict the fields given (and only those) set on the row.
    const set = cols.length === 0 ? 'DO NOTHING' : `DO UPDATE SET ${cols.map(([c]) => `${c} = EXCLUDED.${c}`).join(', ')}`;
    await this.db.query(`account-put-${cols.map(([c]) => c).join('-')}`, `${INSERT} ON CONFLICT (username) ${set}`, insertValues(account));
  }

  async updateAccount(username: string, changes: AccountChanges, day: string): Promise<Account | null> {
    return this.db.transaction(async (client) => {
      const before = (await client.query<Row>(`SELECT ${COLUMNS} FROM accounts WHERE username = $1 FOR UPDATE`, [username])).rows[0];
      if (!before) return null;
      const cols = columnsOf(changes);
      if (cols.length > 0) {
        await client.query(`UPDATE accounts SET ${cols.map(([c], i) => `${c} = $${i + 2}`).join(', ')} WHERE username = $1`, [username, ...cols.map(([, v]) => v)]);
      }
      if (before.daily_limit === null && changes.dailyLimit != null && before.day !== day) {
        // A limit set mid-day counts the day's lookups so far, as far as usage has been flushed.
        await client.query('UPDATE accounts SET day = $2, day_count = (SELECT COALESCE(SUM(found), 0) FROM usage WHERE username = $1 AND day = $2) WHERE username = $1', [username, day]);
      }
      return toAccount((await client.query<Row>(`SELECT ${COLUMNS} FROM accounts WHERE username = $1`, [username])).rows[0]);
    });
  }

  async addCredits(username: string, delta: number): Promise<CreditResult> {
    const r = await this.db.query<{ credits: string }>(
      'account-add-credits',
      'UPDATE accounts SET credits = GREATEST(0, credits + $2) WHERE username = $1 AND credits IS NOT NULL AND credits + $2 <= $3 RETURNING credits',
      [username, delta, CREDITS_BOUND],
    );
    if (r.rows[0]) return { balance: Number(r.rows[0].credits) };
    const now = await this.getAccount(username);
    return !now ? 'unknown' : now.credits === null ? 'unlimited' : 'bound';
  }

  async setEnabled(username: string, enabled: boolean): Promise<boolean> {
    const r = await this.db.query('account-enable', 'UPDATE accounts SET enabled = $2 WHERE username = $1', [username, enabled]);
    return (r.rowCount ?? 0) > 0;
  }

  async removeAccount(username: string): Promise<boolean> {
    return this.db.transaction(async (client) => {
      await client.query('DELETE FROM usage WHERE username = $1', [username]);
      return ((await client.query('DELETE FROM accounts WHERE username = $1', [username])).rowCount ?? 0) > 0;
    });
  }

  async listAccounts(day: string): Promise<AccountSummary[]> {
    // Byte order, as SQLite sorts: the same list whatever the database's collation.
    const r = await this.db.query<Row & { used_today: string }>(
      'account-list',
      `SELECT ${COLUMNS}, GREATEST(CASE WHEN day = $1 THEN day_count ELSE 0 END,
              COALESCE((SELECT SUM(found) FROM usage u WHERE u.username = a.username AND u.day = $1), 0)) AS used_today
         FROM accounts a ORDER BY username COLLATE "C"`,
      [day],
    );
    return r.rows.map((row) => ({ ...toAccount(row), usedToday: Number(row.used_today) }));
  }

  /**
   * Group commit per account (and day): the charges asked for in one event-loop turn go to the
   * database in one statement, sent at the end of the turn; while MAX_CHARGES_IN_FLIGHT statements
   * for the account are in flight, further charges queue and the next statement takes the whole
   * queue. So an account costs one commit per batch rather than one per lookup, however many lookups
   * and instances it has, and each caller learns whether its own credit was granted (the first
   * `granted` of the batch, in the order they asked). A batch is answered when its statement has
   * committed: a charge is durable before its lookup is answered.
   */
  charge(username: string, day: string, operation?: string): Promise<ChargeResult> {
    return new Promise((resolve, reject) => {
      const key = `${username}\u0000${day}`;
      let queue = this.charging.get(key);
      if (queue === undefined) {
        queue = { inFlight: 0, scheduled: false, waiting: [] };
        this.charging.set(key, queue);
      }
      queue.waiting.push({ operation: operation ?? null, resolve, reject });
      if (!queue.scheduled && queue.inFlight < MAX_CHARGES_IN_FLIGHT) {
        queue.scheduled = true;
        const q = queue;
        setImmediate(() => {
          q.scheduled = false;
          void this.chargeNext(key, username, day, q);
        });
      }
    });
  }

  /** Sends the queue's charges in one statement (or up to MAX_CHARGE_BATCH of them), then the next batch if charges waited meanwhile. */
  private async chargeNext(key: string, username: string, day: string, queue: ChargeQueue): Promise<void> {
    while (queue.waiting.length > 0 && queue.inFlight < MAX_CHARGES_IN_FLIGHT) {
      const batch = queue.waiting.splice(0, MAX_CHARGE_BATCH);
      queue.inFlight++;
      try {
        const results = await this.chargeBatch(
          username,
          day,
          batch.map((b) => b.operation),
        );
        batch.forEach((b, i) => b.resolve(results[i]));
      } catch (e) {
        for (const b of batch) b.reject(e);
      } finally {
        queue.inFlight--;
      }
    }
    if (queue.inFlight === 0 && !queue.scheduled && queue.waiting.length === 0 && this.charging.get(key) === queue) this.charging.delete(key);
  }

  /**
   * One statement for n charges: locks the row (FOR UPDATE: under READ COMMITTED it waits for any
   * other instance's charge and then reads the row as that one left it), grants min(n, credits left,
   * day's limit left), takes them, and adds the granted lookups to usage; all or nothing.
   */
  private async chargeBatch(username: string, day: string, operations: (string | null)[]): Promise<ChargeResult[]> {
    const n = operations.length;
    const r = await this.db.query<{ enabled: boolean; credits: string | null; used: number; granted: number }>(
      'account-charge-batch',
      `WITH cur AS (
         SELECT username, enabled, credits, daily_limit, CASE WHEN day = $2 THEN day_count ELSE 0 END AS used
           FROM accounts WHERE username = $1 FOR UPDATE
       ), g AS (
         SELECT cur.*, CASE WHEN NOT enabled THEN 0
                ELSE GREATEST(0, LEAST($3::int, COALESCE(credits, $3::int), COALESCE(daily_limit - used, $3::int))) END::int AS granted
           FROM cur
       ), taken AS (
         UPDATE accounts a SET credits = a.credits - g.granted, day_count = g.used + g.granted, day = $2
           FROM g WHERE a.username = g.username AND g.granted > 0
       ), counted AS (
         INSERT INTO usage (username, day, operation, found, not_found)
         SELECT $1, $2, o.op, count(*), 0 FROM g, unnest($4::text[]) WITH ORDINALITY AS o(op, i)
          WHERE o.i <= g.granted AND o.op IS NOT NULL GROUP BY o.op ORDER BY o.op
         ON CONFLICT (username, day, operation) DO UPDATE SET found = usage.found + EXCLUDED.found
       )
       SELECT enabled, credits, used, granted FROM g`,
      [username, day, n, operations],
    );
    const row = r.rows[0];
    if (!row) return operations.map(() => ({ ok: false, reason: 'unknown' }));
    const credits = row.credits === null ? null : Number(row.credits);
    return operations.map((_, i): ChargeResult => {
      if (i < row.granted) return { ok: true, credits: credits === null ? null : credits - i - 1, usedToday: row.used + i + 1 };
      if (!row.enabled) return { ok: false, reason: 'disabled' };
      if (credits !== null && credits - row.granted <= 0) return { ok: false, reason: 'credits' };
      return { ok: false, reason: 'daily' };
    });
  }

  async addUsage(counts: readonly UsageCount[]): Promise<void> {
    if (counts.length === 0) return;
    // One statement: the counts of a key summed first (an upsert may not touch a row twice), rows
    // taken in key order (two writers never wait on each other crosswise), added to what is stored.
    await this.db.query(
      'usage-add',
      `INSERT INTO usage (username, day, operation, found, not_found)
       SELECT username, day, operation, SUM(found), SUM(not_found)
         FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[]) AS c(username, day, operation, found, not_found)
        GROUP BY username, day, operation ORDER BY username, day, operation
       ON CONFLICT (username, day, operation) DO UPDATE SET found = usage.found + EXCLUDED.found, not_found = usage.not_found + EXCLUDED.not_found`,
      [counts.map((c) => c.username), counts.map((c) => c.day), counts.map((c) => c.operation), counts.map((c) => c.found), counts.map((c) => c.notFound)],
    );
  }

  async usage(username: string, fromDay: string): Promise<UsageCount[]> {
    const r = await this.db.query<{ username: string; day: string; operation: string; found: string; not_found: string }>(
      'usage-get',
      'SELECT username, day, operation, found, not_found FROM usage WHERE username = $1 AND day >= $2 ORDER BY day COLLATE "C" DESC, operation COLLATE "C"',
      [username, fromDay],
    );
    return r.rows.map((u) => ({ username: u.username, day: u.day, operation: u.operation, found: Number(u.found), notFound: Number(u.not_found) }));
  }

  async pruneUsage(beforeDay: string): Promise<number> {
    return (await this.db.query('usage-prune', 'DELETE FROM usage WHERE day < $1', [beforeDay])).rowCount ?? 0;
  }
}
