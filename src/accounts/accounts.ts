// Admission of callers by username: the username policy, per-username rate limit, and credits.
// The rate limiter is in memory here (one process); a shared limiter can implement RateLimiter.

import { LookupError, quote } from '../service/errors';
import type { Account, VehicleStore } from '../store/store';

export type UsernamePolicy = 'any' | 'registered';

export interface AccountsConfig {
  readonly policy: UsernamePolicy;
  /** Lookups per username per minute; 0 turns the limit off. */
  readonly ratePerMinute: number;
}

export interface RateLimiter {
  /** Seconds to wait when over the limit, or 0 when the call is admitted. */
  hit(username: string): number;
}

/** Fixed one-minute windows per username; old windows are dropped as they pass. */
export class MemoryRateLimiter implements RateLimiter {
  private window = 0;
  private counts = new Map<string, number>();

  constructor(private readonly perMinute: number, private readonly now: () => number = Date.now) {}

  hit(username: string): number {
    const t = this.now();
    const window = Math.floor(t / 60000);
    if (window !== this.window) {
      this.window = window;
      this.counts = new Map();
    }
    const n = (this.counts.get(username) ?? 0) + 1;
    this.counts.set(username, n);
    if (n <= this.perMinute) return 0;
    return Math.max(1, Math.ceil(((window + 1) * 60000 - t) / 1000));
  }
}

/** Account rows are read at most once a second per username: a lookup needs no store query for them. */
const ACCOUNT_TTL_MS = 1000;
const ACCOUNT_CACHE_MAX = 10_000;

export class Accounts {
  private readonly limiter: RateLimiter | null;
  private cached = new Map<string, Account | null>();
  private cachedAt = 0;

  constructor(private readonly store: VehicleStore, private readonly config: AccountsConfig, limiter?: RateLimiter) {
    this.limiter = limiter ?? (config.ratePerMinute > 0 ? new MemoryRateLimiter(config.ratePerMinute) : null);
  }

  private async account(username: string): Promise<Account | null> {
    const now = Date.now();
    if (now - this.cachedAt >= ACCOUNT_TTL_MS || this.cached.size >= ACCOUNT_CACHE_MAX) {
      this.cached = new Map();
      this.cachedAt = now;
    }
    const hit = this.cached.get(username);
    if (hit !== undefined) return hit;
    const account = await this.store.getAccount(username);
    this.cached.set(username, account);
    return account;
  }

  /** Before the lookup: is this caller known (when that is required) and within its rate? */
  async admit(username: string): Promise<void> {
    if (this.config.policy === 'registered' && !(await this.account(username))) {
      throw new LookupError('UNKNOWN_USERNAME', `Your username is incorrect: ${quote(username)} is not registered; ask the operator to register it`);
    }
    if (this.limiter) {
      const wait = this.limiter.hit(username);
      if (wait > 0) {
        throw new LookupError('RATE_LIMITED', `Too many requests for username ${quote(username)}; retry in ${wait} s`, wait);
      }
    }
  }

  /** After a successful lookup: take one credit from a limited account. */
  async charge(username: string): Promise<void> {
    const account = await this.account(username);
    if (!account || account.credits === null) return;
    if (!(await this.store.takeCredit(username))) {
      throw new LookupError('OUT_OF_CREDIT', `Out of credit: username ${quote(username)} has no lookup credit left`, 3600);
    }
  }
}
