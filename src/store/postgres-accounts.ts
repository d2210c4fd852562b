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
  defaultName,
} from './accounts';
import { callerLeft, StoreUnavailableError, type ChargeCaller, type FoundCharge, type RecordKey } from './store';
import {
  BATCH_CTES,
  batchArrays,
  CreditShards,
  FOLD_SHARDS,
  LEASED,
  pastDeadline,
  SHARD_MIN_BALANCE,
} from './postgres-shards';

/** What the accounts side needs of the store: a pooled query, and one transaction on one connection. */
export interface PgRunner {
  /**
   * `calls`: how many callers the query answers (a batch), each counted as refused when the server cannot be reached.
   */
  query<R extends pg.QueryResultRow>(
    name: string,
    text: string,
    values: unknown[],
    calls?: number,
    /** When the call gives up (Date.now() ms); null: never; absent: DATABASE_QUERY_TIMEOUT_MS from now. */
    deadline?: number | null,
  ): Promise<pg.QueryResult<R>>;
  transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  /** The deadline of a call starting now (null: none). */
  deadline?(): number | null;
  /**
   * A deadline of this process's clock (Date.now() ms) on the server's clock, less a margin for the
   * answer's way back: a charge the server reaches after it grants nothing (see grantCtes).
   */
  serverDeadline?(deadline: number): number;
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
  name: string | null;
  prefix: string;
  key_until: string | null;
  weak: string | null;
}

/** An account's columns; its credits are its row's and its shards' (postgres-shards.ts). */
export const COLUMNS = `username, credits + ${LEASED} AS credits, daily_limit, rate, allow, enabled, day, day_count,
  name, prefix, key_until, weak`;

/** An account found by one of its keys ($1): COLUMNS with that key's end (accounts.ts, keyUntil). */
const BY_KEY = `SELECT ${COLUMNS} FROM accounts WHERE username = $1
  UNION ALL SELECT ${COLUMNS.replace('key_until', 'k.until AS key_until')}
    FROM account_keys k JOIN accounts ON accounts.username = k.account WHERE k.key = $1
  LIMIT 1`;

export function toAccount(r: Row): Account {
  return {
    username: r.username,
    name: r.name ?? defaultName(r.username),
    prefix: r.prefix,
    keyUntil: r.key_until === null ? null : Number(r.key_until),
    weak: r.weak,
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
  return [
    a.username,
    a.credits,
    a.dailyLimit,
    a.rate,
    a.allow.join(','),
    a.enabled,
    a.name ?? defaultName(a.username),
    a.prefix ?? '',
  ];
}

/**
 * A limit set mid-day ($1 username, $2 day) counts the day's lookups so far: those charged on the
 * row, or the usage records (lookups charged on credit shards, and others as far as flushed),
 * whichever is more.
 */
const COUNT_DAY = `UPDATE accounts SET day = $2, day_count = GREATEST(CASE WHEN day = $2 THEN day_count ELSE 0 END,
  (SELECT COALESCE(SUM(found), 0) FROM usage_all WHERE username = $1 AND day = $2)) WHERE username = $1`;

const INSERT =
  'INSERT INTO accounts (username, credits, daily_limit, rate, allow, enabled, name, prefix) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)';

/** Most charges one statement takes (the rest wait for the next). */
const MAX_CHARGE_BATCH = 1000;

interface ChargeWaiter {
  readonly operation: string | null;
  /** chargeFound's: the record to read, charged only when found. Null: a charge for a lookup already found. */
  readonly key: RecordKey | null;
  /** The caller's connection: its charge is not kept once it is destroyed. */
  readonly caller: ChargeCaller | null;
  /**
   * When the caller is answered SERVICE_UNAVAILABLE if its charge has not been answered (Date.now() ms;
   * null: never).
   */
  readonly deadline: number | null;
  resolve(r: FoundCharge): void;
  reject(e: unknown): void;
}

/** A granted charge whose caller left before it was answered: given back (PostgresAccounts.refund). */
interface Refund {
  readonly operation: string | null;
  /** Charged on this instance's credit shard (its usage in usage_shards), or on the account's row. */
  readonly onShard: boolean;
  /** Refused once the refund is done. */
  readonly waiter: ChargeWaiter;
}

/**
 * Most charge statements of one account one instance has in flight at once. One: while it runs, the
 * charges of the following turns queue and the next statement takes them all, so batches grow with
 * the load and the database spends one commit on each. More in flight make smaller statements, whose
 * commits cost the database more than the shorter wait saves (bench/SCALING-HISTORY.md).
 */
const MAX_CHARGES_IN_FLIGHT = 1;

/** The grant's columns: the row as the charge found it (locked), and how many it granted. */
interface GrantRow {
  /** The server reached the statement after the batch's deadline: it granted nothing. */
  late: boolean;
  enabled: boolean;
  credits: string | null;
  daily_limit: number | null;
  used: number;
  granted: number;
}

/**
 * The common part of both charge statements ($1 username, $2 day): `cur` locks the account's row
 * (FOR UPDATE: under READ COMMITTED it waits for any other instance's charge and then reads the row
 * as that one left it); when its credits cannot cover the n asked (`wanted` gives n), `drained`
 * takes every credit shard of the account back into it (postgres-shards.ts), so a refusal means the
 * whole balance is spent; `g` grants min(n, credits, the day's limit left), and `taken` takes them
 * and counts the day.
 */
function grantCtes(wanted: string, deadline: string): string {
  return `cur AS (
         SELECT username, enabled, credits AS own, daily_limit, CASE WHEN day = $2 THEN day_count ELSE 0 END AS used
           FROM accounts WHERE username = $1 FOR UPDATE
       ), w AS (
         SELECT CASE WHEN w0.late THEN 0 ELSE w0.n END AS n, w0.late
           FROM (SELECT ww.n, ${pastDeadline(deadline)} AS late FROM cur, (${wanted}) ww) w0
       ), drained AS (
         DELETE FROM credit_shards s USING cur, w WHERE s.username = cur.username AND cur.own < w.n RETURNING s.credits
       ), g AS (
         SELECT cur.*, w.late, cur.own + d.got AS credits, d.got AS drained, CASE WHEN NOT enabled THEN 0
                ELSE GREATEST(0, LEAST(w.n, COALESCE(cur.own + d.got, w.n), COALESCE(daily_limit - used, w.n))) END::int AS granted
           FROM cur, w, (SELECT COALESCE(SUM(credits), 0) AS got FROM drained) d
       ), taken AS (
         UPDATE accounts a SET credits = g.credits - g.granted, day_count = g.used + g.granted, day = $2
           FROM g WHERE a.username = g.username AND (g.granted > 0 OR g.drained > 0)
       )`;
}

/** A batch whose statement the server reached after its deadline: its callers have been answered already. */
function late(): StoreUnavailableError {
  return new StoreUnavailableError('PostgreSQL', 'the charge reached the server after its deadline', 'did not charge');
}

/** The charge of the batch's `rank`-th lookup to be charged (from 1), given the grant's row (none: no such account). */
function granting(row: GrantRow | undefined, rank: number): ChargeResult {
  if (!row) return { ok: false, reason: 'unknown' };
  const credits = row.credits === null ? null : Number(row.credits);
  if (rank <= row.granted)
    return { ok: true, credits: credits === null ? null : credits - rank, usedToday: row.used + rank };
  if (!row.enabled) return { ok: false, reason: 'disabled' };
  if (credits !== null && credits - row.granted <= 0) return { ok: false, reason: 'credits' };
  return { ok: false, reason: 'daily' };
}

/**
 * How long a batch short of the account's expected size waits for the rest (ms), at most once. The
 * expected size is the last batch's and those that queued while it ran: under a steady load the
 * lookups a batch answered come back for the next one, and a batch sent before they are back splits
 * the load into two, each paying a commit (bench/SCALING-HISTORY.md). A batch as large as expected
 * goes at once, and one lookup at a time never waits.
 */
const CHARGE_HOLD_MS = 1;

/** Accounts whose expected batch size is remembered after their queue emptied (then forgotten all at once). */
const EXPECTED_MAX = 10_000;

interface ChargeQueue {
  inFlight: number;
  /** A statement is due at the end of this event-loop turn. */
  scheduled: boolean;
  waiting: ChargeWaiter[];
  /** How many charges the next batch waits for: the last batch's and those that queued while it ran. */
  expected: number;
  /** The hold's timer while the waiting charges wait for more (CHARGE_HOLD_MS). */
  hold: NodeJS.Timeout | null;
  /** The waiting charges were held once already: the next statement takes them. */
  held: boolean;
}

export class PostgresAccounts implements AccountStore {
  /** Charges waiting per username and day while one statement for it is in flight. */
  private readonly charging = new Map<string, ChargeQueue>();

  /** The expected batch size of an account whose queue emptied (its next batch waits for as many). */
  private readonly expectedBatch = new Map<string, number>();

  /** This instance's credit shards (postgres-shards.ts). */
  private readonly shards: CreditShards;

  constructor(private readonly db: PgRunner) {
    this.shards = new CreditShards(db);
  }

  /** On close: this instance's leased credits back to their accounts' rows. */
  releaseShards(): Promise<void> {
    return this.shards.release();
  }

  async getAccount(username: string): Promise<Account | null> {
    const r = await this.db.query<Row>('account-get', BY_KEY, [username]);
    return r.rows[0] ? toAccount(r.rows[0]) : null;
  }

  async getAccountByName(name: string): Promise<Account | null> {
    const r = await this.db.query<Row>('account-by-name', `SELECT ${COLUMNS} FROM accounts WHERE name = $1`, [name]);
    return r.rows[0] ? toAccount(r.rows[0]) : null;
  }

  async rotateKey(username: string, newKey: string, prefix: string, until: number): Promise<boolean> {
    return this.db.transaction(async (client) => {
      const row = await client.query('SELECT 1 FROM accounts WHERE username = $1 FOR UPDATE', [username]);
      if (row.rowCount === 0) return false;
      const taken = await client.query(
        'SELECT 1 FROM accounts WHERE username = $1 UNION ALL SELECT 1 FROM account_keys WHERE key = $1',
        [newKey],
      );
      if ((taken.rowCount ?? 0) > 0) return false;
      await client.query(
        'UPDATE accounts SET key_until = LEAST(COALESCE(key_until, $2), $2), prefix = $3 WHERE username = $1',
        [username, until, prefix],
      );
      await client.query('UPDATE account_keys SET until = LEAST(COALESCE(until, $2), $2) WHERE account = $1', [
        username,
        until,
      ]);
      await client.query('INSERT INTO account_keys (key, account, until) VALUES ($1, $2, NULL)', [newKey, username]);
      return true;
    });
  }

  async addAccount(account: AccountInput): Promise<boolean> {
    // A new account starts with no credits leased (a shard left by a release before this one goes).
    const r = await this.db.query<{ n: string }>(
      'account-add',
      `WITH ins AS (${INSERT} ON CONFLICT DO NOTHING RETURNING username),
            stale AS (DELETE FROM credit_shards WHERE username IN (SELECT username FROM ins))
       SELECT count(*) AS n FROM ins`,
      insertValues(account),
    );
    return Number(r.rows[0].n) > 0;
  }

  async putAccount(account: AccountInput): Promise<void> {
    const { username: _username, ...changes } = account;
    const cols = columnsOf(changes);
    // One statement: the insert, or on conflict the fields given (and only those) set on the row.
    const set =
      cols.length === 0 ? 'DO NOTHING' : `DO UPDATE SET ${cols.map(([c]) => `${c} = EXCLUDED.${c}`).join(', ')}`;
    if (changes.credits === undefined && changes.dailyLimit == null) {
      await this.db.query(
        `account-put-${cols.map(([c]) => c).join('-')}`,
        `${INSERT} ON CONFLICT (username) ${set}`,
        insertValues(account),
      );
      return;
    }
    // A balance given is the whole balance: the credits leased to shards go. A daily limit given folds
    // them back (an account with a limit is charged on its row) and, where there was none, counts the
    // day so far as updateAccount does. The row is locked first.
    await this.db.transaction(async (client) => {
      const before = (
        await client.query<{ daily_limit: number | null }>(
          'SELECT daily_limit FROM accounts WHERE username = $1 FOR UPDATE',
          [account.username],
        )
      ).rows[0];
      await client.query(`${INSERT} ON CONFLICT (username) ${set}`, insertValues(account));
      await client.query(
        changes.credits !== undefined ? 'DELETE FROM credit_shards WHERE username = $1' : FOLD_SHARDS,
        [account.username],
      );
      if (before !== undefined && before.daily_limit === null && changes.dailyLimit != null)
        await client.query(COUNT_DAY, [account.username, new Date().toISOString().slice(0, 10)]); // today, UTC
    });
  }

  async updateAccount(username: string, changes: AccountChanges, day: string): Promise<Account | null> {
    return this.db.transaction(async (client) => {
      const before = (
        await client.query<Row>(`SELECT ${COLUMNS} FROM accounts WHERE username = $1 FOR UPDATE`, [username])
      ).rows[0];
      if (!before) return null;
      await client.query(FOLD_SHARDS, [username]);
      const cols = columnsOf(changes);
      if (cols.length > 0) {
        await client.query(
          `UPDATE accounts SET ${cols.map(([c], i) => `${c} = $${i + 2}`).join(', ')} WHERE username = $1`,
          [username, ...cols.map(([, v]) => v)],
        );
      }
      if (before.daily_limit === null && changes.dailyLimit != null) await client.query(COUNT_DAY, [username, day]);
      return toAccount(
        (await client.query<Row>(`SELECT ${COLUMNS} FROM accounts WHERE username = $1`, [username])).rows[0],
      );
    });
  }

  async addCredits(username: string, delta: number): Promise<CreditResult> {
    // The row locked, its shards folded back, then the change: one transaction.
    const r = await this.db.transaction(async (client) => {
      await client.query('SELECT 1 FROM accounts WHERE username = $1 FOR UPDATE', [username]);
      await client.query(FOLD_SHARDS, [username]);
      return client.query<{ credits: string }>(
        'UPDATE accounts SET credits = GREATEST(0, credits + $2) WHERE username = $1 AND credits IS NOT NULL AND credits + $2 <= $3 RETURNING credits',
        [username, delta, CREDITS_BOUND],
      );
    });
    if (r.rows[0]) return { balance: Number(r.rows[0].credits) };
    const now = await this.getAccount(username);
    return !now ? 'unknown' : now.credits === null ? 'unlimited' : 'bound';
  }

  async setEnabled(username: string, enabled: boolean): Promise<boolean> {
    const r = await this.db.query('account-enable', 'UPDATE accounts SET enabled = $2 WHERE username = $1', [
      username,
      enabled,
    ]);
    return (r.rowCount ?? 0) > 0;
  }

  async removeAccount(username: string): Promise<boolean> {
    // The row locked first (as every writer of a balance does), then its shards (each waits for its
    // instance's charge in flight), then the usage those charges wrote.
    return this.db.transaction(async (client) => {
      await client.query('SELECT 1 FROM accounts WHERE username = $1 FOR UPDATE', [username]);
      await client.query('DELETE FROM credit_shards WHERE username = $1', [username]);
      await client.query('DELETE FROM usage WHERE username = $1', [username]);
      await client.query('DELETE FROM usage_shards WHERE username = $1', [username]);
      await client.query('DELETE FROM account_keys WHERE account = $1', [username]);
      return ((await client.query('DELETE FROM accounts WHERE username = $1', [username])).rowCount ?? 0) > 0;
    });
  }

  async listAccounts(day: string): Promise<AccountSummary[]> {
    // Byte order, as SQLite sorts: the same list whatever the database's collation.
    const r = await this.db.query<Row & { used_today: string }>(
      'account-list',
      `SELECT ${COLUMNS}, GREATEST(CASE WHEN day = $1 THEN day_count ELSE 0 END,
              COALESCE((SELECT SUM(found) FROM usage_all u WHERE u.username = accounts.username AND u.day = $1), 0)) AS used_today
         FROM accounts ORDER BY username COLLATE "C"`,
      [day],
    );
    return r.rows.map((row) => ({ ...toAccount(row), usedToday: Number(row.used_today) }));
  }

  /**
   * Group commit per account (and day): the charges asked for in one event-loop turn go to the
   * database in one statement, sent at the end of the turn; while MAX_CHARGES_IN_FLIGHT statements
   * for the account are in flight, further charges queue and the next statement takes the whole
   * queue (waiting up to CHARGE_HOLD_MS, once, for the lookups the last batch answered to come back).
   * So an account costs one commit per batch rather than one per lookup, however many lookups
   * and instances it has, and each caller learns whether its own credit was granted (the first
   * `granted` of the batch, in the order they asked). A batch is answered when its statement has
   * committed: a charge is durable before its lookup is answered.
   */
  charge(username: string, day: string, operation?: string, caller?: ChargeCaller): Promise<ChargeResult> {
    return this.enqueue(username, day, operation ?? null, null, caller ?? null).then((r) => r.charge as ChargeResult);
  }

  /**
   * A metered lookup in one round trip: reads the record at `key` and, when it is there, charges for
   * it (counting its usage under `operation`) in the same statement as charge() would, batched with
   * the account's other charges. Not found: nothing is charged (charge null). Found but refused:
   * the record comes back with the refusal, and the caller must not answer with it.
   */
  chargeFound(
    key: RecordKey,
    username: string,
    day: string,
    operation: string,
    caller?: ChargeCaller,
  ): Promise<FoundCharge> {
    return this.enqueue(username, day, operation, key, caller ?? null);
  }

  private enqueue(
    username: string,
    day: string,
    operation: string | null,
    key: RecordKey | null,
    caller: ChargeCaller | null,
  ): Promise<FoundCharge> {
    return new Promise((resolve, reject) => {
      const id = `${username}\u0000${day}`;
      let queue = this.charging.get(id);
      if (queue === undefined) {
        queue = {
          inFlight: 0,
          scheduled: false,
          waiting: [],
          expected: this.expectedBatch.get(id) ?? 0,
          hold: null,
          held: false,
        };
        this.expectedBatch.delete(id);
        this.charging.set(id, queue);
      }
      // The deadline runs from now: a charge queued behind a batch in flight waits no longer in all.
      queue.waiting.push({ operation, key, caller, deadline: this.db.deadline?.() ?? null, resolve, reject });
      if (queue.hold !== null && queue.waiting.length >= queue.expected) {
        // As many as expected are back: the hold ends with this turn.
        clearTimeout(queue.hold);
        queue.hold = null;
      }
      if (!queue.scheduled && queue.inFlight < MAX_CHARGES_IN_FLIGHT && queue.hold === null) {
        queue.scheduled = true;
        const q = queue;
        setImmediate(() => {
          q.scheduled = false;
          void this.chargeNext(id, username, day, q);
        });
      }
    });
  }

  /**
   * Sends the queue's charges in one statement (or up to MAX_CHARGE_BATCH of them), then the next batch if charges
   * waited meanwhile.
   */
  private async chargeNext(key: string, username: string, day: string, queue: ChargeQueue): Promise<void> {
    while (
      queue.waiting.length > 0 &&
      queue.inFlight < MAX_CHARGES_IN_FLIGHT &&
      !this.holds(key, username, day, queue)
    ) {
      const taken = queue.waiting.splice(0, MAX_CHARGE_BATCH);
      queue.held = false;
      // A caller that has left, or whose deadline has passed, is not charged.
      const now = Date.now();
      const batch = taken.filter((b) => {
        if (b.caller?.destroyed === true) b.reject(callerLeft('PostgreSQL'));
        else if (b.deadline !== null && b.deadline <= now) b.reject(late());
        else return true;
        return false;
      });
      if (batch.length === 0) continue;
      queue.inFlight++;
      try {
        const left = await this.settleBatch(username, day, batch);
        // Off the answers' path, before this account's next batch: a refill that fails leaves that batch to the row.
        await this.shards.refill(username, left).catch(() => undefined);
      } catch (e) {
        // Those already answered (charged on the shard) keep their answer: a promise settles once.
        for (const b of batch) b.reject(e);
      } finally {
        queue.inFlight--;
        // The lookups this batch answered come back for the next one, after those that queued meanwhile.
        queue.expected = batch.length + queue.waiting.length;
      }
    }
    if (queue.inFlight === 0 && !queue.scheduled && queue.waiting.length === 0 && this.charging.get(key) === queue) {
      this.charging.delete(key);
      if (this.expectedBatch.size >= EXPECTED_MAX) this.expectedBatch.clear();
      if (queue.expected > 1) this.expectedBatch.set(key, queue.expected);
    }
  }

  /**
   * Whether the waiting charges wait for more before their statement (CHARGE_HOLD_MS): at most once, when fewer than
   * expected.
   */
  private holds(key: string, username: string, day: string, queue: ChargeQueue): boolean {
    if (queue.hold !== null) return true;
    if (queue.held || queue.waiting.length >= queue.expected) return false;
    queue.held = true;
    queue.hold = setTimeout(() => {
      queue.hold = null;
      void this.chargeNext(key, username, day, queue);
    }, CHARGE_HOLD_MS);
    return true;
  }

  /**
   * Charges a batch and answers its waiters: on this instance's credit shard first
   * (postgres-shards.ts), what that could not cover on the account's row; accounts known not to be
   * sharded straight on the row. The shard's statement answers at once the lookups it found no record
   * for, and the whole batch when it charged it; the row's statement then has only the rest. Returns
   * the shard's credits after the batch.
   */
  private async settleBatch(username: string, day: string, batch: readonly ChargeWaiter[]): Promise<number> {
    // The batch's statements end by its earliest caller's deadline (the callers' all come from one setting).
    let deadline: number | null = null;
    for (const b of batch)
      if (b.deadline !== null && (deadline === null || b.deadline < deadline)) deadline = b.deadline;
    const refunds: Refund[] = [];
    try {
      if (!this.shards.tries(username)) {
        const results = await this.onRow(username, day, batch, null, deadline);
        batch.forEach((b, i) => this.deliver(b, results[i], false, refunds));
        return 0;
      }
      const sharded = await this.shards.charge(username, day, batch, deadline, this.serverDeadline(deadline));
      const rest: ChargeWaiter[] = [];
      const found: FoundCharge['found'][] = [];
      batch.forEach((b, i) => {
        const r = sharded.results[i];
        if (r !== undefined) this.deliver(b, r, true, refunds);
        else {
          rest.push(b);
          found.push(sharded.found[i] ?? null);
        }
      });
      if (rest.length > 0) {
        // Already read: the row charges them as plain charges, in the order asked.
        const results = await this.onRow(username, day, rest, found, deadline);
        rest.forEach((b, i) => this.deliver(b, results[i], false, refunds));
      }
      return sharded.left;
    } finally {
      if (refunds.length > 0) {
        // A refund that fails leaves the charge taken (logged by the store's watcher when it is unreachable).
        await this.refund(username, day, refunds).catch(() => undefined);
        for (const r of refunds) r.waiter.reject(callerLeft('PostgreSQL'));
      }
    }
  }

  /**
   * Answers a waiter with its charge, unless the charge was granted and its caller has left since it
   * was asked: then the charge is to be given back (`refunds`), and the waiter refused after that.
   */
  private deliver(b: ChargeWaiter, r: FoundCharge, onShard: boolean, refunds: Refund[]): void {
    if (r.charge?.ok === true && b.caller?.destroyed === true)
      refunds.push({ operation: b.operation, onShard, waiter: b });
    else b.resolve(r);
  }

  /**
   * Gives back charges granted to callers that left before their answer (deliver): the credits to
   * the account's row (the balance is the row's and its shards'), the day's count of those charged
   * on the row, and their usage where it was counted. One statement, the row locked first.
   */
  private async refund(username: string, day: string, refunds: readonly Refund[]): Promise<void> {
    const onRow = refunds.filter((r) => !r.onShard);
    await this.db.query(
      'account-refund',
      `WITH cur AS (
         SELECT username FROM accounts WHERE username = $1 FOR UPDATE
       ), back AS (
         UPDATE accounts a SET credits = CASE WHEN a.credits IS NULL THEN NULL ELSE a.credits + $3 END,
                day_count = CASE WHEN a.day = $2 THEN GREATEST(0, a.day_count - $4) ELSE a.day_count END
           FROM cur WHERE a.username = cur.username
       ), row_usage AS (
         UPDATE usage u SET found = GREATEST(0, u.found - c.n)
           FROM (SELECT op, count(*) AS n FROM unnest($5::text[]) AS op WHERE op IS NOT NULL GROUP BY op) c
          WHERE u.username = $1 AND u.day = $2 AND u.operation = c.op
       ), shard_usage AS (
         UPDATE usage_shards u SET found = GREATEST(0, u.found - c.n)
           FROM (SELECT op, count(*) AS n FROM unnest($6::text[]) AS op WHERE op IS NOT NULL GROUP BY op) c
          WHERE u.username = $1 AND u.day = $2 AND u.operation = c.op AND u.shard = $7
       )
       SELECT 1`,
      [
        username,
        day,
        refunds.length,
        onRow.length,
        onRow.map((r) => r.operation),
        refunds.filter((r) => r.onShard).map((r) => r.operation),
        this.shards.id,
      ],
    );
  }

  /** A batch deadline on the server's clock, for the statements' own check (pastDeadline); null: none. */
  private serverDeadline(deadline: number | null): number | null {
    return deadline === null || this.db.serverDeadline === undefined ? null : this.db.serverDeadline(deadline);
  }

  /**
   * A batch on the account's row: read and charged (chargeFoundBatch), or, with `found` (the
   * records already read), charged only. A lookup refused for credits is asked once more, in a
   * statement of its own: the row's drain of the shards sees those that existed when its statement
   * began, and a shard a refill created while it waited for the row's lock is seen by the next one.
   */
  private async onRow(
    username: string,
    day: string,
    batch: readonly ChargeWaiter[],
    found: readonly FoundCharge['found'][] | null,
    deadline: number | null,
  ): Promise<FoundCharge[]> {
    const results =
      found !== null
        ? (await this.chargeBatch(username, day, batch, deadline)).map((r, i) => ({
            found: found[i],
            charge: r.charge,
          }))
        : batch.some((b) => b.key !== null)
          ? await this.chargeFoundBatch(username, day, batch, deadline)
          : await this.chargeBatch(username, day, batch, deadline);
    const refused = results.flatMap((r, i) =>
      r.charge !== null && !r.charge.ok && r.charge.reason === 'credits' ? [i] : [],
    );
    if (refused.length === 0) return results;
    const again = await this.chargeBatch(
      username,
      day,
      refused.map((i) => batch[i]),
      deadline,
    );
    refused.forEach((i, j) => (results[i] = { found: results[i].found, charge: again[j].charge }));
    return results;
  }

  /** What a row statement's grant says of the account: whether its next batches may go to a shard. */
  private learn(username: string, row: GrantRow | undefined): void {
    if (!row) return;
    const after = row.credits === null ? null : Number(row.credits) - row.granted;
    this.shards.learn(
      username,
      row.enabled && row.daily_limit === null && after !== null && after >= SHARD_MIN_BALANCE,
    );
  }

  /**
   * One statement for n charges: grants what it can (grantCtes) and adds the granted lookups to usage; all or nothing.
   */
  private async chargeBatch(
    username: string,
    day: string,
    batch: readonly ChargeWaiter[],
    deadline: number | null,
  ): Promise<FoundCharge[]> {
    const operations = batch.map((b) => b.operation);
    const r = await this.db.query<GrantRow>(
      'account-charge-batch',
      `WITH ${grantCtes('SELECT $3::int AS n', '$5')}, counted AS (
         INSERT INTO usage (username, day, operation, found, not_found)
         SELECT $1, $2, o.op, count(*), 0 FROM g, unnest($4::text[]) WITH ORDINALITY AS o(op, i)
          WHERE o.i <= g.granted AND o.op IS NOT NULL GROUP BY o.op ORDER BY o.op
         ON CONFLICT (username, day, operation) DO UPDATE SET found = usage.found + EXCLUDED.found
       )
       SELECT late, enabled, credits, daily_limit, used, granted FROM g`,
      [username, day, operations.length, operations, this.serverDeadline(deadline)],
      batch.length,
      deadline,
    );
    if (r.rows[0]?.late === true) throw late();
    this.learn(username, r.rows[0]);
    return operations.map((_, i) => ({ found: null, charge: granting(r.rows[0], i + 1) }));
  }

  /**
   * The same statement with chargeFound's lookups in the batch: it also reads their records (one
   * index probe each) and charges only those found, with the batch's plain charges, in the order
   * asked. A found record comes back with its charge, granted or refused.
   */
  private async chargeFoundBatch(
    username: string,
    day: string,
    batch: readonly ChargeWaiter[],
    deadline: number | null,
  ): Promise<FoundCharge[]> {
    const r = await this.db.query<GrantRow & { i: string; payload: string | null; rank: string | null }>(
      'account-charge-found-batch',
      `WITH ${BATCH_CTES}, ${grantCtes('SELECT count(*) FILTER (WHERE hit)::int AS n FROM k', '$7')}, counted AS (
         INSERT INTO usage (username, day, operation, found, not_found)
         SELECT $1, $2, r.op, count(*), 0 FROM g, ranked r
          WHERE r.rank <= g.granted AND r.op IS NOT NULL GROUP BY r.op ORDER BY r.op
         ON CONFLICT (username, day, operation) DO UPDATE SET found = usage.found + EXCLUDED.found
       )
       SELECT r.i, r.payload, r.rank, g.late, g.enabled, g.credits, g.daily_limit, g.used, g.granted FROM ranked r LEFT JOIN g ON true ORDER BY r.i`,
      [username, day, ...batchArrays(batch), this.serverDeadline(deadline)],
      batch.length,
      deadline,
    );
    if (r.rows[0]?.late === true) throw late();
    this.learn(username, r.rows[0]?.enabled === null ? undefined : r.rows[0]);
    return batch.map((b, i): FoundCharge => {
      const row = r.rows[i];
      if (row.rank === null) return { found: null, charge: null };
      return {
        found: b.key === null || row.payload === null ? null : { payload: row.payload },
        charge: granting(row.enabled === null ? undefined : row, Number(row.rank)),
      };
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
      [
        counts.map((c) => c.username),
        counts.map((c) => c.day),
        counts.map((c) => c.operation),
        counts.map((c) => c.found),
        counts.map((c) => c.notFound),
      ],
    );
  }

  async usage(username: string, fromDay: string): Promise<UsageCount[]> {
    const r = await this.db.query<{
      username: string;
      day: string;
      operation: string;
      found: string;
      not_found: string;
    }>(
      'usage-get',
      'SELECT username, day, operation, found, not_found FROM usage_all WHERE username = $1 AND day >= $2 ORDER BY day COLLATE "C" DESC, operation COLLATE "C"',
      [username, fromDay],
    );
    return r.rows.map((u) => ({
      username: u.username,
      day: u.day,
      operation: u.operation,
      found: Number(u.found),
      notFound: Number(u.not_found),
    }));
  }

  async pruneUsage(beforeDay: string): Promise<number> {
    const pruned = await this.db.query('usage-prune', 'DELETE FROM usage WHERE day < $1', [beforeDay]);
    const shards = await this.db.query('usage-prune-shards', 'DELETE FROM usage_shards WHERE day < $1', [beforeDay]);
    return (pruned.rowCount ?? 0) + (shards.rowCount ?? 0);
  }
}
