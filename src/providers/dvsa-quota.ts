// The DVSA MOT History API's published quota, enforced before each call so that it is never
// exceeded and a caller is told at once when to come back: 15 requests a second and 500,000 a day,
// counted in Redis (REDIS_URL) so that every instance shares them, in this process's memory
// otherwise or while Redis cannot be reached (rate-limiter-flexible's insurance limiter). Its burst
// of 10 is a cap on calls in flight at once in this process.

import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

export interface DvsaQuotaLimits {
  readonly perSecond: number;
  readonly burst: number;
  readonly perDay: number;
}

export const DVSA_QUOTA: DvsaQuotaLimits = { perSecond: 15, burst: 10, perDay: 500_000 };

/** A refusal: the seconds to wait. */
interface QuotaRefusal {
  readonly retryAfterS: number;
  readonly which: 'second' | 'day';
}

export class DvsaQuota {
  private readonly second: RateLimiterAbstract;
  private readonly day: RateLimiterAbstract;
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly limits: DvsaQuotaLimits,
    redis: Redis | null,
    prefix: string,
  ) {
    const make = (points: number, duration: number, key: string): RateLimiterAbstract => {
      const memory = new RateLimiterMemory({ points, duration, keyPrefix: `${prefix}dvsa:${key}` });
      return redis
        ? new RateLimiterRedis({
            storeClient: redis,
            points,
            duration,
            keyPrefix: `${prefix}dvsa:${key}`,
            insuranceLimiter: memory,
          })
        : memory;
    };
    this.second = make(limits.perSecond, 1, 'second');
    this.day = make(limits.perDay, 86_400, 'day');
  }

  /** Takes one call from the quota, or says how long to wait. */
  async take(): Promise<QuotaRefusal | null> {
    const refused = (e: unknown, which: 'second' | 'day'): QuotaRefusal => {
      if (e instanceof RateLimiterRes) return { retryAfterS: Math.max(1, Math.ceil(e.msBeforeNext / 1000)), which };
      throw e;
    };
    try {
      await this.second.consume('quota');
    } catch (e) {
      return refused(e, 'second');
    }
    try {
      await this.day.consume('quota');
    } catch (e) {
      return refused(e, 'day');
    }
    return null;
  }

  /** Runs `call` once fewer than `burst` calls are in flight in this process. */
  async inBurst<T>(call: () => Promise<T>): Promise<T> {
    while (this.inFlight >= this.limits.burst) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.inFlight++;
    try {
      return await call();
    } finally {
      this.inFlight--;
      this.waiting.shift()?.();
    }
  }
}
