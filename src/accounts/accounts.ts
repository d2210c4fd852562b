// Admission of callers by username. The order is chosen so that a refused request costs neither a
// credit nor a daily count, and a failed lookup costs neither:
//   admit (before the lookup): the username policy, a disabled account, the allow-list, an account
//     already out of credit (as last read), then the rate limit (the only thing a refusal here
//     counts is the rate: a rate limit counts attempts);
//   the lookup itself;
//   charge (after a lookup that found its record): one atomic store step takes the credit and counts
//     the day, or refuses (OUT_OF_CREDIT, DAILY_LIMIT_REACHED) and changes nothing;
//   record: usage counts; a charged lookup's is written by the store with its charge, the others
//     (not found, accounts not metered) in memory, written in batches (usage.ts).
// Account rows are read at most once a second per username, so a lookup needs no store query for
// them; an account with neither credits nor a daily limit costs no store write per lookup either.
// The store knows an account by its key (core/key.ts), never by the username: the key is taken
// here, and everything below (store, rate limits, usage) sees the key of the account's row.

import { LookupError, quote } from '../core/errors';
import type { Account, ChargeResult } from '../store/accounts';
import type { ChargeCaller, FoundRecord, RecordKey, VehicleStore } from '../store/store';
import { addressSet, type AddressSet } from '../net/cidr';
import { secondsToMidnight, today } from './clock';
import { keyOf } from '../core/key';
import type { RateLimiter } from './limiter';
import type { UsageRecorder } from './usage';

import type { UsernamePolicy } from '../config';

export type { UsernamePolicy } from '../config';

export interface AccountsConfig {
  readonly policy: UsernamePolicy;
  /** Lookups per second per username unless its account sets its own rate; 0: none. */
  readonly rateLimit: number;
  /** Told of each credit taken (a caller with credits whose lookup found its record), for a metric. */
  readonly creditSpent?: () => void;
}

/** Who is calling, beyond the username a transport decoded: where from. */
export interface Caller {
  /** The client's IP address (transport/forwarded.ts: the socket's, or from trusted proxies). */
  readonly address: string;
  /**
   * The account key, for a caller the service knows by its key rather than by a username it was sent (a batch job's
   * owner, service/batch.ts): the username is then only the label its messages quote.
   */
  readonly key?: string;
}

/** A username as admitted, handed from admit to charge and record. */
export interface Admitted {
  /** The username as the caller sent it: only for the caller's own error messages. */
  readonly username: string;
  /** The account's key (its row's, for a username rotated since), or the username's key without one. */
  readonly key: string;
  /** The account, or null for a username without one (USERNAME_POLICY=any). */
  readonly account: Account | null;
}

interface Entry {
  readonly account: Account | null;
  readonly allow: AddressSet | null;
}

/** Account rows are read at most once a second per username. */
const ACCOUNT_TTL_MS = 1000;
const ACCOUNT_CACHE_MAX = 10_000;

/** The phrase a client looks for to tell a rejected username (README, "Errors"). */
const REJECTED = 'Your username is incorrect or not allowed here';

export class Accounts {
  private cached = new Map<string, Entry>();
  /** Keys of accounts this process saw reach their daily limit: the UTC day, and the limit then in force. */
  private readonly dailyDone = new Map<string, { readonly day: string; readonly limit: number | null }>();
  private cachedAt = 0;
  /** Keys of accounts whose charge the store refused for want of credit, and when (noteNoCredit). */
  private readonly refusedCredit = new Map<string, number>();
  /** Lookups whose usage the store counted with their charge. */
  private readonly countedWithCharge = new WeakSet<Admitted>();

  constructor(
    private readonly store: Pick<VehicleStore, 'accounts' | 'chargeFound'>,
    private readonly config: AccountsConfig,
    private readonly limiter: RateLimiter | null = null,
    private readonly usage: UsageRecorder | null = null,
  ) {}

  private async entry(key: string): Promise<Entry> {
    const now = Date.now();
    if (now - this.cachedAt >= ACCOUNT_TTL_MS || this.cached.size >= ACCOUNT_CACHE_MAX) {
      this.cached = new Map();
      this.cachedAt = now;
    }
    const hit = this.cached.get(key);
    if (hit !== undefined) return hit;
    const account = await this.store.accounts.getAccount(key);
    const entry = { account, allow: account && account.allow.length > 0 ? addressSet(account.allow) : null };
    this.cached.set(key, entry);
    return entry;
  }

  /** Before the lookup: may this caller make it now? */
  async admit(username: string, caller: Caller, notes?: { account?: string }): Promise<Admitted> {
    const found = await this.entry(caller.key ?? keyOf(username));
    // The old username of a rotation is unknown once its grace period is over (users rotate).
    const expired = found.account?.keyUntil != null && Date.now() >= found.account.keyUntil;
    const { account, allow } = expired ? { account: null, allow: null } : found;
    if (notes && account) notes.account = account.name;
    const key = account?.username ?? caller.key ?? keyOf(username);
    if (account === null) {
      if (this.config.policy === 'registered') {
        throw new LookupError(
          'UNKNOWN_USERNAME',
          `Your username is incorrect: ${quote(username)} is not registered; ask the operator to register it`,
        );
      }
    } else {
      if (!account.enabled)
        throw new LookupError('UNKNOWN_USERNAME', `${REJECTED}: username ${quote(username)} is disabled`);
      if (allow && !allow.has(caller.address)) {
        throw new LookupError(
          'UNKNOWN_USERNAME',
          `${REJECTED}: username ${quote(username)} may not be used from ${quote(caller.address, 64)}`,
        );
      }
      if (account.credits === 0) throw outOfCredit(username);
      // A caller known to have used up its day is told so (with the wait to midnight), not sent to
      // the rate limiter to be told to retry in a second.
      const done = this.dailyDone.get(key);
      if (done && done.limit === account.dailyLimit && done.day === today()) throw dailyLimitReached(username);
    }
    const rate = account?.rate ?? this.config.rateLimit;
    if (rate > 0 && this.limiter) {
      const refused = await this.limiter.consume(key, rate);
      if (refused) {
        const msg = refused.unavailable
          ? `The rate limit for username ${quote(username)} cannot be checked right now; retry in ${refused.retryAfter} s`
          : `Too many requests for username ${quote(username)}; retry in ${refused.retryAfter} s`;
        throw new LookupError('RATE_LIMITED', msg, refused.retryAfter);
      }
    }
    return { username, key, account };
  }

  /** Whether a lookup by this caller is charged: an account with credits or a daily limit. */
  private metered(who: Admitted): who is Admitted & { account: Account } {
    return who.account !== null && (who.account.credits !== null || who.account.dailyLimit !== null);
  }

  /**
   * After a lookup that found its record: take its credit and count it for today, or refuse. Given
   * the operation, the store counts the lookup in the usage records with the charge (so record()
   * then leaves it out): the usage of a charged lookup is as durable as its charge.
   */
  async charge(who: Admitted, operation?: string, caller?: ChargeCaller): Promise<void> {
    if (!this.metered(who)) return;
    this.settle(who, await this.store.accounts.charge(who.key, today(), operation, caller), operation);
  }

  /**
   * The store's record at `key`, charged for as charge() would, in one step and one round trip, on a
   * store that can (PostgreSQL's chargeFound): the record, or null when the store has none (nothing
   * charged). Undefined when this caller is not charged or the store cannot: then find, then charge.
   */
  async findCharged(who: Admitted, key: RecordKey, caller?: ChargeCaller): Promise<FoundRecord | null | undefined> {
    if (!this.metered(who) || this.store.chargeFound === undefined) return undefined;
    const r = await this.store.chargeFound(key, who.key, today(), key.operation, caller);
    if (r.charge === null) return null;
    this.settle(who, r.charge, key.operation);
    return r.found;
  }

  /** A charge's result: counted (the usage with it), or the refusal thrown. */
  private settle(who: Admitted & { account: Account }, result: ChargeResult, operation: string | undefined): void {
    const account = who.account;
    if (result.ok) {
      if (account.credits !== null) this.config.creditSpent?.();
      if (operation !== undefined) this.countedWithCharge.add(who);
      if (account.dailyLimit !== null && result.usedToday >= account.dailyLimit)
        this.usedUpDay(who.key, account.dailyLimit);
      return;
    }
    switch (result.reason) {
      case 'credits':
        this.noteNoCredit(who.key);
        throw outOfCredit(who.username);
      case 'daily':
        this.usedUpDay(who.key, account.dailyLimit);
        throw dailyLimitReached(who.username);
      case 'disabled':
        throw new LookupError('UNKNOWN_USERNAME', `${REJECTED}: username ${quote(who.username)} is disabled`);
      case 'unknown':
        // Removed since it was read: from now on it is a username without an account.
        if (this.config.policy === 'registered')
          throw new LookupError(
            'UNKNOWN_USERNAME',
            `Your username is incorrect: ${quote(who.username)} is not registered; ask the operator to register it`,
          );
    }
  }

  /**
   * The store refused a charge for want of credit: for the next ACCOUNT_TTL_MS the caller's upstream fetches are
   * held to no credit (creditsForFetch), so that a caller whose cached account still shows credits does not pay an
   * upstream for answers it cannot be charged for. Stored answers are not held back: a top-up is seen at once there.
   */
  private noteNoCredit(key: string): void {
    if (this.refusedCredit.size >= ACCOUNT_CACHE_MAX) this.refusedCredit.clear();
    this.refusedCredit.set(key, Date.now());
  }

  /** The credits an upstream fetch for this caller is held to (service/upstream.ts): null for no bound. */
  creditsForFetch(who: Admitted): number | null {
    const credits = who.account?.credits ?? null;
    if (credits === null || this.refusedCredit.size === 0) return credits;
    const at = this.refusedCredit.get(who.key);
    if (at === undefined) return credits;
    if (Date.now() - at < ACCOUNT_TTL_MS) return 0;
    this.refusedCredit.delete(who.key);
    return credits;
  }

  private usedUpDay(key: string, limit: number | null): void {
    if (this.dailyDone.size >= ACCOUNT_CACHE_MAX) this.dailyDone.clear();
    this.dailyDone.set(key, { day: today(), limit });
  }

  /** Counts a lookup in the usage records (accounts only): found, or answered VEHICLE_NOT_FOUND. */
  record(who: Admitted, operation: string, found: boolean): void {
    if (found && this.countedWithCharge.has(who)) return;
    if (who.account && this.usage) this.usage.record(who.key, today(), operation, found);
  }
}

function dailyLimitReached(username: string): LookupError {
  const wait = secondsToMidnight();
  return new LookupError(
    'DAILY_LIMIT_REACHED',
    `Daily limit reached: username ${quote(username)} has made its lookups for this UTC day; retry after midnight UTC, in ${wait} s`,
    wait,
  );
}

function outOfCredit(username: string): LookupError {
  // No Retry-After: credits never come back by themselves.
  return new LookupError(
    'OUT_OF_CREDIT',
    `Out of credit: username ${quote(username)} has no lookup credit left; ask the operator for more`,
  );
}
