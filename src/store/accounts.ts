// The accounts part of the storage boundary: callers with their credits, daily limit, rate,
// allow-list and enabled flag; today's count of charged lookups; and usage records. SQLite
// implements it in sqlite-accounts.ts; a PostgreSQL store must keep every contract written here.
//
// A store never sees a caller's username: every `username` parameter and field here is the account's
// KEY, SHA-256 of the username in hex (core/key.ts, computed above the store), and people know an
// account by its `name` and the `prefix` of its username.
//
// Days are UTC calendar days written 'YYYY-MM-DD', and are always given by the caller (the service
// computes them from its clock): a store never derives a day from its own clock or time zone.

import type { ChargeCaller } from './store';

export interface Account {
  /** The account's key (core/key.ts): its row's, whichever of its keys it was found by. */
  readonly username: string;
  /** What people call it (users add NAME): unique. */
  readonly name: string;
  /** The first characters of its current username (at most 6), for recognition; may be empty. */
  readonly prefix: string;
  /**
   * Until when (ms since the epoch) the key it was found by is valid (the old username of a rotation,
   * users rotate); null: no end. The service refuses a key past it; the store does not look at a clock.
   */
  readonly keyUntil: number | null;
  /** Why its username is guessable, found when the store was migrated: 'short', 'invisible', or null. */
  readonly weak: string | null;
  /** Lookups left; null means unlimited. Never below 0. */
  readonly credits: number | null;
  /** Successful lookups allowed per UTC day; null means no daily limit. At least 1 when set. */
  readonly dailyLimit: number | null;
  /** Lookups per second for this username; null: the service's RATE_LIMIT; 0: no rate limit. */
  readonly rate: number | null;
  /** Addresses (CIDRs or single addresses) the username may be used from; empty: anywhere. */
  readonly allow: readonly string[];
  /** A disabled account is refused; its settings and usage are kept. */
  readonly enabled: boolean;
}

/** An account as `users list` shows it. */
export interface AccountSummary extends Account {
  /**
   * Successful lookups on `day` (the day listAccounts was given): those charged on it, or those
   * found as far as usage records have been flushed, whichever is more (an account with neither
   * credits nor a daily limit is not charged per lookup, so only its usage records count it).
   */
  readonly usedToday: number;
}

/** Settings to write; an absent field keeps its stored value (or, for a new account, its default). */
export type AccountChanges = Partial<Omit<Account, 'username' | 'name' | 'prefix' | 'keyUntil' | 'weak'>>;

/**
 * A new or changed account: the key, and the fields to set. A new account without a name is named
 * `caller-` and the first 12 characters of its key; name and prefix are kept for an existing one.
 */
export type AccountInput = {
  readonly username: string;
  readonly name?: string;
  readonly prefix?: string;
} & AccountChanges;

/** The name of a new account given none: its key's start, as logs show it (ops/fingerprint.ts). */
export const defaultName = (key: string): string => `caller-${key.slice(0, 12)}`;

/** Defaults of a new account: unlimited credits, no daily limit, the service's rate, anywhere, enabled. */
export const ACCOUNT_DEFAULTS: Omit<Account, 'username' | 'name' | 'prefix' | 'keyUntil' | 'weak'> = {
  credits: null,
  dailyLimit: null,
  rate: null,
  allow: [],
  enabled: true,
};

/**
 * What charging a successful lookup did. Granted: the credits left and the day's count after it, as
 * the charging store saw them. (A PostgreSQL instance charging on its credit shard, for an account
 * without a daily limit, sees the row and its own shard, and counts the day within its batch.)
 */
export type ChargeResult =
  | { readonly ok: true; readonly credits: number | null; readonly usedToday: number }
  /** Nothing was changed: no such account, disabled, no credit left, or the daily limit reached. */
  | { readonly ok: false; readonly reason: 'unknown' | 'disabled' | 'credits' | 'daily' };

/** The most credits an account may hold: a top-up that would pass it is refused ('bound'). */
export const CREDITS_BOUND = 1_000_000_000_000;

/** What adding credits did: the new balance, or why nothing was changed. */
export type CreditResult = { readonly balance: number } | 'unknown' | 'unlimited' | 'bound';

/** Lookups of one username on one UTC day for one operation. */
export interface UsageCount {
  /** The account's key. */
  readonly username: string;
  /** The account's name, where a store gives it (AdminStore.usageRange). */
  readonly name?: string;
  readonly day: string;
  readonly operation: string;
  /** Lookups answered with a record. */
  readonly found: number;
  /** Lookups answered VEHICLE_NOT_FOUND. */
  readonly notFound: number;
}

export interface AccountStore {
  /**
   * The account, or null. May be a read a moment old (SQLite: the snapshot of the current event-loop
   * turn); the service caches it for up to a second anyway, and never decides a charge from it.
   */
  getAccount(username: string): Promise<Account | null>;

  /** The account of that name, or null; found by its own key (keyUntil as its row says). */
  getAccountByName(name: string): Promise<Account | null>;

  /**
   * Gives the account a new key (a new username) and prefix; its current key stays valid until `until`
   * (ms since the epoch), its older ones end now at the latest. The account's row, credits, usage and
   * name are unchanged: both usernames charge the same credits. False when there is no such account
   * or the new key is taken. Atomic.
   */
  rotateKey(username: string, newKey: string, prefix: string, until: number): Promise<boolean>;

  /**
   * Creates the account with the given fields and defaults for the rest; false (and no change) when it exists. Atomic.
   */
  addAccount(account: AccountInput): Promise<boolean>;

  /**
   * Creates the account, or changes the fields given of an existing one (others are kept). Atomic:
   * two concurrent calls leave one complete result, never a mix of fields beyond what each set.
   */
  putAccount(account: AccountInput): Promise<void>;

  /**
   * Changes the fields given of an existing account, atomically, and returns it as now stored;
   * null when there is no such account. Setting a daily limit on an account that had none starts
   * today's count (`day`) from the lookups already recorded in usage for `day`, so a limit set in the
   * middle of a day counts the whole day (as far as usage has been flushed).
   */
  updateAccount(username: string, changes: AccountChanges, day: string): Promise<Account | null>;

  /**
   * Adds `delta` credits (a negative delta subtracts, and the balance stops at 0) in one atomic step
   * that concurrent charges cannot lose: balance = max(0, balance + delta). 'unlimited' (no change)
   * for an account with unlimited credits; 'unknown' for no such account; 'bound' (no change) when
   * the balance would pass CREDITS_BOUND.
   */
  addCredits(username: string, delta: number): Promise<CreditResult>;

  /** Enables or disables (a charge after this refuses with 'disabled'); false when there is no such account. */
  setEnabled(username: string, enabled: boolean): Promise<boolean>;

  /** Removes the account, its other keys and its usage records, in one transaction; false when there was none. */
  removeAccount(username: string): Promise<boolean>;

  /** Every account, ordered by username, with the lookups charged on `day`. */
  listAccounts(day: string): Promise<AccountSummary[]>;

  /**
   * Charges one successful lookup made on `day`, in ONE atomic step (a single statement or an
   * equivalent row lock): only when the account exists, is enabled, has credits left (or unlimited)
   * and has made fewer than its daily limit of lookups on `day` (or has none) does it take one
   * credit (unless unlimited) and count one lookup for `day` (the count restarts at 1 when the
   * stored count is of an earlier day). Otherwise nothing changes and the reason is returned, in
   * this order: unknown, disabled, credits, daily. Under any concurrency, from any number of
   * processes, N charges against a balance of B < N succeed exactly B times, and against a daily
   * limit L (same day) exactly L times; the balance never goes below 0.
   * With `operation`, a successful charge also counts one found lookup of that operation in the
   * usage records, in the same atomic step: a charged lookup's usage survives a crash with its charge.
   * A store may charge the concurrent calls for one username together (PostgreSQL: one statement per
   * batch, see postgres-accounts.ts); each call still learns whether its own charge was taken.
   * With `caller`: a caller that has left before its charge commits is not charged (nor its usage
   * counted); the call fails with StoreUnavailableError (callerLeft), answered to nobody.
   */
  charge(username: string, day: string, operation?: string, caller?: ChargeCaller): Promise<ChargeResult>;

  /**
   * Adds the counts to the stored ones (creating rows as needed), all in one transaction: several
   * processes adding to the same row at once lose no count (an upsert that adds, not a read then a
   * write).
   */
  addUsage(counts: readonly UsageCount[]): Promise<void>;

  /** The username's usage from `fromDay` (inclusive) on, newest day first, then by operation. */
  usage(username: string, fromDay: string): Promise<UsageCount[]>;

  /** Deletes usage of days before `beforeDay`; returns the rows deleted. */
  pruneUsage(beforeDay: string): Promise<number>;
}
