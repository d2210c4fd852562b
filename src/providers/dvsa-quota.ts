// The DVSA MOT History API's published quota, enforced before each call so that it is never
// exceeded: 15 requests a second and 500,000 a day. A call over the per-second quota waits for the
// next second when that comes within its lookup's deadline; otherwise (the daily quota spent) the
// caller is told at once when the quota frees. The quota is counted in Redis (REDIS_URL) so that
// every instance shares it, in this process's memory otherwise. Its burst of 10 is a cap on calls
// in flight at once in this process.
//
// Redis failing (an error, or a command that outlives the client's short time-out, as a hung Redis
// makes every command do) fails the quota over to this process's share of it, counted in memory
// (the quota divided by DVSA_QUOTA_PROCESSES), with one warn line; later calls go straight to the
// local share without asking Redis, until a PING once a second finds Redis back. A hung Redis thus
// costs one time-out to the calls that find it so, not one to every call after them (as the rate
// limiter in accounts/limiter.ts does).

import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Logger } from '../ops/logger';
import { messageOf } from '../core/errors';

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

/** How often a Redis known to be failing is asked (PING) whether it is back. */
const PROBE_EVERY_MS = 1000;

interface Counters {
  readonly second: RateLimiterAbstract;
  readonly day: RateLimiterAbstract;
}

export class DvsaQuota {
  /** In Redis (shared), or null without it. */
  private readonly shared: Counters | null;
  /** This process's memory: the whole quota without Redis, its share of it while Redis fails. */
  private readonly local: Counters;
  /** Redis is known to be failing: the local share counts. */
  private failing = false;
  private probe: NodeJS.Timeout | null = null;
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly limits: DvsaQuotaLimits,
    private readonly redis: Redis | null,
    prefix: string,
    /** Processes sharing the quota through Redis: the local share is 1/processes of it. */
    processes = 1,
    private readonly log: Pick<Logger, 'warn'> | null = null,
  ) {
    const share = redis ? processes : 1;
    const memory = (points: number, duration: number, key: string) =>
      new RateLimiterMemory({
        points: Math.max(1, Math.floor(points / share)),
        duration,
        keyPrefix: `${prefix}dvsa:${key}`,
      });
    this.local = { second: memory(limits.perSecond, 1, 'second'), day: memory(limits.perDay, 86_400, 'day') };
    const inRedis = (store: Redis, points: number, duration: number, key: string) =>
      new RateLimiterRedis({
        storeClient: store,
        points,
        duration,
        keyPrefix: `${prefix}dvsa:${key}`,
        rejectIfRedisNotReady: true,
      });
    this.shared = redis
      ? { second: inRedis(redis, limits.perSecond, 1, 'second'), day: inRedis(redis, limits.perDay, 86_400, 'day') }
      : null;
    redis?.on('ready', () => this.back());
  }

  /** Whether the quota is counted in this process's share because Redis is failing. */
  degraded(): boolean {
    return this.failing;
  }

  private failed(e: unknown): void {
    if (this.failing) return;
    this.failing = true;
    this.log?.warn(
      'the DVSA quota cannot be counted in Redis; each process counts its share of it in memory until Redis is back',
      { error: messageOf(e).slice(0, 300), share: `${this.local.second.points}/s` },
    );
    this.probe ??= setInterval(() => {
      const redis = this.redis;
      if (!redis || redis.status !== 'ready') return;
      // The client's command time-out bounds the PING: a hung Redis fails it at once.
      redis.ping().then(
        () => this.back(),
        () => undefined,
      );
    }, PROBE_EVERY_MS);
    this.probe.unref();
  }

  private back(): void {
    if (this.probe) clearInterval(this.probe);
    this.probe = null;
    if (!this.failing) return;
    this.failing = false;
    this.log?.warn('the DVSA quota is counted in Redis again', {});
  }

  /** Stops the probe. */
  close(): void {
    if (this.probe) clearInterval(this.probe);
    this.probe = null;
  }

  /**
   * Takes one call from the quota, waiting for it up to `deadline` (ms, Date.now's clock) while `signal` holds; or says
   * how long to wait.
   */
  async take(deadline = 0, signal?: AbortSignal): Promise<QuotaRefusal | null> {
    for (;;) {
      const refused = await this.takeNow();
      if (!refused || refused.which === 'day' || signal?.aborted) return refused;
      const waitMs = refused.msBeforeNext;
      if (Date.now() + waitMs >= deadline) return refused;
      await sleep(waitMs, signal);
    }
  }

  private async takeNow(): Promise<(QuotaRefusal & { readonly msBeforeNext: number }) | null> {
    const refused = (e: unknown, which: 'second' | 'day') => {
      if (e instanceof RateLimiterRes)
        return { retryAfterS: Math.max(1, Math.ceil(e.msBeforeNext / 1000)), which, msBeforeNext: e.msBeforeNext };
      throw e;
    };
    const counters = this.shared && !this.failing ? this.shared : this.local;
    try {
      await counters.second.consume('quota');
    } catch (e) {
      if (e instanceof RateLimiterRes) return refused(e, 'second');
      this.failed(e);
      return this.takeNow();
    }
    try {
      await counters.day.consume('quota');
    } catch (e) {
      if (e instanceof RateLimiterRes) return refused(e, 'day');
      // The second was taken from Redis; the day is taken from the local share.
      this.failed(e);
      try {
        await this.local.day.consume('quota');
      } catch (e2) {
        return refused(e2, 'day');
      }
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

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
