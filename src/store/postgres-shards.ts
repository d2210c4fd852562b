// Credit shards (PostgreSQL): the part of an account's balance leased to one instance, so that its
// metered lookups are charged on a row no other instance writes. Without them every charge of an
// account, from every instance, locks and commits the account's one row, and the instances take
// turns on it (each waits for the other's commit, then re-reads the row), so more instances serve a
// busy account no faster (bench/SCALING-HISTORY.md).
//
// The balance of an account is its row's credits plus the credits of its shards (LEASED); every
// reader sums them, every writer of a balance folds the shards back first.
// Money moves only inside one transaction, so a killed instance strands nothing: its shard's credits
// still count in the balance and are drained by whoever needs them.
//   charge (one statement, this instance's shard row only): charges the whole batch and writes its
//     usage to usage_shards when the shard's credits cover it; when they do not, the batch goes to
//     the account's row.
//   the row (postgres-accounts.ts, grantCtes): when the row's credits cannot cover a batch, it
//     drains every shard of the account into the row first, all under the row's lock, so a lookup
//     is refused only when the whole balance is spent: N credits give exactly N answers.
//   refill (after a batch, off the answer's path): moves a block from the row to this shard, at most
//     half of what the row holds, never from a row below SHARD_MIN_BALANCE (small balances stay on
//     the row, where the last credits are shared exactly).
// Locks are always taken account row first, then shard rows (the charge takes only its shard), so
// no two statements wait on each other crosswise. Daily limits stay on the row: an account with a
// daily limit is charged there, exact as before.

import { randomInt } from 'node:crypto';
import type { FoundCharge, RecordKey } from './store';
import type { PgRunner } from './postgres-accounts';

/** An account's row below this many credits leases none (its lookups are charged on the row). */
export const SHARD_MIN_BALANCE = 64;
/** A block's bounds: it doubles while refills come within a second of each other, halves after ten idle seconds. */
const BLOCK_MIN = 16;
const BLOCK_MAX = 65_536;
/**
 * Accounts remembered per instance (whether they are sharded, their block); beyond this, forgotten and learned again.
 */
const REMEMBERED = 10_000;

/**
 * Whether the server runs the statement after the deadline in parameter `param` (ms since the epoch
 * on the server's clock; null: none). Read after the row lock is taken (cur comes first), so a
 * statement that waited for another's lock past its deadline also grants nothing.
 */
export function pastDeadline(param: string): string {
  return `(${param}::float8 IS NOT NULL AND extract(epoch FROM clock_timestamp()) * 1000 >= ${param}::float8)`;
}

/** A charge waiting in a batch: chargeFound's record key, or null for a plain charge. */
interface ShardWaiter {
  readonly operation: string | null;
  readonly key: RecordKey | null;
}

/**
 * What the shard statement did with a batch: each lookup's result, or undefined for those the row
 * must charge (every lookup to be charged, when the shard could not cover them all).
 */
interface ShardBatch {
  readonly results: (FoundCharge | undefined)[];
  /** The record found for each lookup, whether or not the shard charged it. */
  readonly found: FoundCharge['found'][];
  /** The shard's credits after the batch (0 when it charged nothing). */
  readonly left: number;
}

interface Known {
  shardable: boolean;
  block: number;
  /** When the last refill was asked (ms). */
  refilledAt: number;
  /** The last refill found nothing to take: none is tried again until the row has charged a batch. */
  dry: boolean;
}

interface ShardRow {
  payload: string | null;
  /** The shard's credits after the batch, and the balance (row and this shard) after it; null: not charged here. */
  left: string | null;
  total: string | null;
  /** The account's lookups charged on the day before the batch (as listAccounts counts them). */
  used: string | null;
}

/**
 * The batch's lookups ($3 usage operation, $4-$6 the record key, null for a plain charge: the
 * arrays of batchArrays) as `k`, each with whether it is to be charged (`hit`: plain, or its record
 * found, with the payload).
 */
const BATCH_K = `k AS (
         SELECT k.i, k.op, r.payload, (k.operation IS NULL OR r.payload IS NOT NULL) AS hit
           FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS k(op, operation, registration, state, i)
           LEFT JOIN records r ON r.operation = k.operation AND r.registration = k.registration AND r.state = k.state
       )`;

/** BATCH_K, and the lookups as `ranked`, each to be charged with its place among those (`rank`, from 1). */
export const BATCH_CTES = `${BATCH_K}, ranked AS (
         SELECT k.*, CASE WHEN hit THEN count(*) FILTER (WHERE hit) OVER (ORDER BY i) END AS rank FROM k
       )`;

/** BATCH_CTES's $3-$6 for a batch. */
export function batchArrays(batch: readonly ShardWaiter[]): (string | null)[][] {
  return [
    batch.map((b) => b.operation),
    batch.map((b) => b.key?.operation ?? null),
    batch.map((b) => b.key?.registration ?? null),
    batch.map((b) => b.key?.state ?? null),
  ];
}

export class CreditShards {
  /** This instance's shard number: drawn at start; two instances drawing the same one only share a row. */
  readonly id = randomInt(1, 2 ** 31 - 1);
  private readonly known = new Map<string, Known>();
  /** Whether this instance ever leased credits (only then has it shards to release). */
  private leased = false;
  /** Set by release(): no refill starts after it. */
  private closing = false;

  constructor(private readonly db: PgRunner) {}

  /** Whether a batch of this account's charges goes to the shard first (unknown accounts do). */
  tries(username: string): boolean {
    return this.known.get(username)?.shardable !== false;
  }

  /** What the account's row said of it after charging a batch: whether it may be sharded now. */
  learn(username: string, shardable: boolean): void {
    let k = this.known.get(username);
    if (k === undefined) {
      if (this.known.size >= REMEMBERED) this.known.clear();
      k = { shardable, block: BLOCK_MIN, refilledAt: 0, dry: false };
      this.known.set(username, k);
    }
    k.shardable = shardable;
    k.dry = false;
  }

  /**
   * One statement: reads the batch's records (as the row's chargeFound statement does), and charges
   * the found ones and the plain ones on this instance's shard of the account, with their usage,
   * when the shard covers them all; otherwise it charges none of them, and the row charges the
   * batch. All or nothing keeps the statement to one row update without ranking the batch (a shard
   * runs short only between a refill's ask and its block).
   */
  async charge(
    username: string,
    day: string,
    batch: readonly ShardWaiter[],
    /** When the call gives up (Date.now() ms), and the same on the server's clock (pastDeadline); null: none. */
    deadline: number | null = null,
    serverDeadline: number | null = null,
  ): Promise<ShardBatch> {
    const r = await this.db.query<ShardRow>(
      'shard-charge-all',
      `WITH ${BATCH_K}, w AS (
         SELECT count(*) FILTER (WHERE hit)::int AS n FROM k
       ), taken AS (
         UPDATE credit_shards s SET credits = s.credits - w.n FROM w, accounts a
          WHERE s.username = $1 AND s.shard = $7 AND s.credits >= w.n AND w.n > 0
            AND a.username = $1 AND a.enabled AND a.daily_limit IS NULL AND a.credits IS NOT NULL
            AND NOT ${pastDeadline('$8')}
          RETURNING s.credits AS left, a.credits + s.credits AS total,
                    GREATEST(CASE WHEN a.day = $2 THEN a.day_count ELSE 0 END,
                             (SELECT COALESCE(SUM(u.found), 0) FROM usage_all u WHERE u.username = $1 AND u.day = $2)) AS used
       ), counted AS (
         INSERT INTO usage_shards (username, day, operation, shard, found)
         SELECT $1, $2, k.op, $7, count(*) FROM k
          WHERE k.hit AND k.op IS NOT NULL AND EXISTS (SELECT 1 FROM taken) GROUP BY k.op ORDER BY k.op
         ON CONFLICT (username, day, operation, shard) DO UPDATE SET found = usage_shards.found + EXCLUDED.found
       )
       SELECT k.payload, t.left, t.total, t.used FROM k LEFT JOIN taken t ON true ORDER BY k.i`,
      [username, day, ...batchArrays(batch), this.id, serverDeadline],
      batch.length,
      deadline,
    );
    const found = batch.map((b, i) =>
      b.key === null ? null : r.rows[i].payload === null ? null : { payload: r.rows[i].payload },
    );
    const hits = batch.reduce((n, b, i) => (b.key === null || found[i] !== null ? n + 1 : n), 0);
    const { left, total, used } = r.rows[0] ?? { left: null, total: null, used: null };
    // The day's lookups before the batch (the statement reads them as they were when it began).
    const usedBefore = Number(used ?? 0);
    // The balance before the batch, for each charge's reported balance (approximate: see ChargeResult).
    const before = total === null ? 0 : Number(total) + hits;
    let rank = 0;
    const results = batch.map((b, i): FoundCharge | undefined => {
      if (b.key !== null && found[i] === null) return { found: null, charge: null };
      if (left === null) return undefined;
      rank++;
      return { found: found[i], charge: { ok: true, credits: before - rank, usedToday: usedBefore + rank } };
    });
    return { results, found, left: left === null ? 0 : Number(left) };
  }

  /**
   * After a batch: when the shard holds less than half a block, moves a block from the account's row
   * to it (at most half the row's credits; none from a row under SHARD_MIN_BALANCE). Errors are the
   * caller's to ignore: a refill that did not happen leaves the next batch to the row.
   */
  async refill(username: string, left: number): Promise<void> {
    const k = this.known.get(username);
    if (this.closing || k === undefined || !k.shardable || k.dry || left >= k.block / 2) return;
    const now = Date.now();
    if (now - k.refilledAt < 1000) k.block = Math.min(BLOCK_MAX, k.block * 2);
    else if (now - k.refilledAt > 10_000) k.block = Math.max(BLOCK_MIN, k.block / 2);
    k.refilledAt = now;
    const r = await this.db.query<{ credits: string }>(
      'shard-refill',
      `WITH cur AS (
         SELECT credits FROM accounts WHERE username = $1 AND enabled AND daily_limit IS NULL AND credits >= $3 FOR UPDATE
       ), mv AS (
         SELECT LEAST($2::bigint, credits / 2) AS b FROM cur
       ), took AS (
         UPDATE accounts a SET credits = a.credits - mv.b FROM mv WHERE a.username = $1 AND mv.b > 0
       )
       INSERT INTO credit_shards (username, shard, credits) SELECT $1, $4, b FROM mv WHERE b > 0
       ON CONFLICT (username, shard) DO UPDATE SET credits = credit_shards.credits + EXCLUDED.credits
       RETURNING credits`,
      [username, k.block, SHARD_MIN_BALANCE, this.id],
    );
    k.dry = r.rows.length === 0;
    if (!k.dry) this.leased = true;
  }

  /** On close: this instance's shards back into their accounts' rows (each row locked first). */
  async release(): Promise<void> {
    this.closing = true;
    if (!this.leased) return;
    await this.db.query(
      'shard-release',
      `WITH a AS (
         SELECT username FROM accounts WHERE username IN (SELECT username FROM credit_shards WHERE shard = $1) ORDER BY username FOR UPDATE
       ), d AS (
         DELETE FROM credit_shards s USING a WHERE s.username = a.username AND s.shard = $1 RETURNING s.username, s.credits
       )
       UPDATE accounts x SET credits = x.credits + d.credits FROM d WHERE x.username = d.username`,
      [this.id],
    );
    this.known.clear();
  }
}

/** The credits leased from the `accounts` row in scope to its shards: row plus this is the balance. */
export const LEASED = '(SELECT COALESCE(SUM(s.credits), 0) FROM credit_shards s WHERE s.username = accounts.username)';

/** Inside a transaction holding the account's row lock: every shard of the account back into the row. */
export const FOLD_SHARDS = `WITH d AS (DELETE FROM credit_shards WHERE username = $1 RETURNING credits)
  UPDATE accounts SET credits = credits + (SELECT COALESCE(SUM(credits), 0) FROM d) WHERE username = $1 AND EXISTS (SELECT 1 FROM d)`;
