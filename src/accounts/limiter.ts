// Per-username rate limits, built on rate-limiter-flexible. One limit however the service is run:
//   - REDIS_URL set: counters in Redis (ioredis), shared by every worker and every instance;
//   - WORKERS > 1 without Redis: counters in the primary process, which the workers ask over the
//     cluster's IPC channel, the lookups of one event-loop turn in one message (PrimaryLimits; the
//     primary calls hostSharedLimits before forking); for rates of LEASE_MIN_RATE and more the
//     primary also leases a worker a share of what is left of the window (Lease), which the worker
//     spends without asking;
//   - otherwise: counters in this process's memory.
// A rate R is counted in fixed windows: R lookups per second (R >= 1, rounded down), or one lookup
// per 1/R seconds (R < 1, rounded). A burst B lets a username go B lookups over its rate, from a pool
// that refills every BURST_WINDOW_S seconds (BurstyRateLimiter). When the shared counters cannot be
// reached, onError says whether lookups are admitted or refused; that is logged once per outage.
// With Redis, once it is known to fail (an error, a command timed out) lookups get onError's answer
// at once, without asking Redis, until a PING once a second (or a reconnect) finds it back: a hung
// Redis costs a time-out only to the lookups that find it so, not to every lookup after them.

import { messageOf } from '../core/errors';
import cluster from 'node:cluster';
import { Redis } from 'ioredis';
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { ReadinessProbe } from '../ops/health';
import type { Logger } from '../ops/logger';

const BURST_WINDOW_S = 60;
const CONNECT_WAIT_MS = 3000;

export interface LimiterConfig {
  readonly burst: number;
  readonly redisUrl: string | null;
  readonly redisPrefix: string;
  readonly onError: 'allow' | 'deny';
}

/** A refusal: how long to wait, and whether it is because the shared limit could not be checked. */
export interface Refusal {
  readonly retryAfter: number;
  readonly unavailable: boolean;
}

export interface RateLimiter {
  /** null when the lookup is admitted at `rate` per second (rate > 0); otherwise why not. Never rejects. */
  consume(username: string, rate: number): Promise<Refusal | null>;
  close(): Promise<void>;
}

interface Consumer {
  consume(key: string): Promise<unknown>;
}

type Backend = 'memory' | 'cluster' | 'redis';

/**
 * A rate's window: its own count (`main`, what leases are taken from) and what lookups consume (with the burst pool, if
 * any).
 */
interface Window {
  readonly main: RateLimiterMemory | RateLimiterRedis;
  readonly limiter: Consumer;
}

const RATE_ASK = 'reglookup:rate?';
const RATE_ANSWER = 'reglookup:rate!';
/** How long a worker waits for the primary's answer before the limit counts as unreachable. */
const PRIMARY_TIMEOUT_MS = 2000;

type Ask = [string, number] | [string, number, 1];

interface RateMessage {
  readonly type: typeof RATE_ASK | typeof RATE_ANSWER;
  readonly id: number;
  /**
   * RATE_ASK: [username, rate] for each lookup of the worker's turn, [username, rate, 1] when it also asks for a lease.
   */
  readonly asks?: readonly Ask[];
  /** RATE_ANSWER: consume()'s answer for each ask, in order. */
  readonly answers?: readonly (Refusal | null)[];
  /** RATE_ANSWER: leases granted with the answers, as [username, rate, lookups, until (epoch ms)]. */
  readonly leases?: readonly [string, number, number, number][];
}

/**
 * Rates of at least this many lookups a second are leased to workers: a worker admits its lease's
 * lookups itself, so a busy username costs an IPC round trip per lease rather than per turn (one a
 * turn cost two workers about a fifth more CPU a request than none). Lower rates are asked per
 * turn, each lookup counted in the primary.
 */
const LEASE_MIN_RATE = 100;
/** A lease is at most this share of what is left of the window, divided by the number of workers. */
const LEASE_SHARE = 4;

/**
 * Lookups a worker may admit without asking, until a time. They are taken from the primary's count
 * when leased, so the workers together never admit more than the rate; a lease ends with the
 * window it was taken from (the workers share the primary's clock), and what is left of it then is
 * not admitted. So a worker may refuse a lookup while another still holds leased ones: at most one
 * lease per worker, each at most 1/(LEASE_SHARE x workers) of what was left when it was taken.
 */
interface Lease {
  n: number;
  readonly until: number;
}

/** A lease's key: a username at one rate. */
const leaseKey = (username: string, rate: number): string => `${rate}\u0000${username}`;

/**
 * Called once in the primary of WORKERS > 1 without Redis: the workers' limits are kept here, in
 * one limiter in this process's memory, and each message from a worker (its turn's lookups) is
 * answered with one message.
 */
export function hostSharedLimits(config: LimiterConfig, logger: Logger): void {
  const local = new FlexibleRateLimiter({ ...config, redisUrl: null }, logger, 'memory');
  cluster.on('message', (worker, msg: RateMessage) => {
    if (msg?.type !== RATE_ASK || !Array.isArray(msg.asks)) return;
    const asks = msg.asks.map(([username, rate, lease]) => ({
      username: String(username),
      rate: Number(rate),
      lease: lease === 1,
    }));
    Promise.all(asks.map((a) => local.consume(a.username, a.rate)))
      .then(async (answers) => {
        const leases = await local.lease(
          asks.filter((a, i) => a.lease && answers[i] === null).map((a): [string, number] => [a.username, a.rate]),
          Math.max(1, Object.keys(cluster.workers ?? {}).length),
        );
        // A worker that has gone meanwhile cannot be answered; its asks time out on its side.
        if (worker.isConnected())
          worker.send({ type: RATE_ANSWER, id: msg.id, answers, leases }, undefined, undefined, () => undefined);
      })
      .catch((e: unknown) =>
        logger.error('the rate limit could not answer a worker', {
          error: messageOf(e).slice(0, 300),
        }),
      );
  });
}

interface Asked {
  readonly waiters: { resolve(r: Refusal | null): void; reject(e: Error): void }[];
  readonly timer: NodeJS.Timeout;
  /** The leases this message asked for (keys of PrimaryLimits.leases). */
  readonly leasing: string[];
}

/** Message ids of this process's asks: one sequence for every PrimaryLimits, which share one channel. */
let rateAsksSent = 0;

/**
 * In a worker: the primary's limits (hostSharedLimits). The lookups asked for in one event-loop
 * turn go in one message and come back in one: one IPC round trip a turn, not one a lookup (one a
 * lookup, with rate-limiter-flexible's cluster limiter, cost two workers more CPU per request than
 * the whole request did in one process). No answer in PRIMARY_TIMEOUT_MS: every ask of that message
 * fails, as an unreachable Redis does.
 */
class PrimaryLimits {
  private turn: { asks: Ask[]; waiters: Asked['waiters']; leasing: string[] } | null = null;
  private readonly asked = new Map<number, Asked>();
  /** This worker's leases, by rate and username. */
  private readonly leases = new Map<string, Lease>();
  /** Leases asked for and not yet answered: one at a time for a username and rate. */
  private readonly leasing = new Set<string>();
  private readonly onMessage = (msg: RateMessage) => {
    if (msg?.type !== RATE_ANSWER) return;
    const a = this.asked.get(msg.id);
    if (!a) return;
    this.asked.delete(msg.id);
    clearTimeout(a.timer);
    for (const key of a.leasing) this.leasing.delete(key);
    const answers = msg.answers;
    if (answers?.length !== a.waiters.length) {
      for (const w of a.waiters) w.reject(new Error('the primary process answered a different number of asks'));
      return;
    }
    for (const [username, rate, n, until] of msg.leases ?? []) {
      const key = leaseKey(username, rate);
      const held = this.leases.get(key);
      // Added to a lease still running (it ends first, with its window); else this one.
      if (held !== undefined && Date.now() < held.until) held.n += n;
      else this.leases.set(key, { n, until });
    }
    a.waiters.forEach((w, i) => w.resolve(answers?.[i] ?? null));
  };

  constructor() {
    process.on('message', this.onMessage);
  }

  /** Stops listening; asks still waiting fail now rather than at their time-out. */
  close(): void {
    process.off('message', this.onMessage);
    this.leases.clear();
    this.leasing.clear();
    for (const [id, a] of this.asked) {
      this.asked.delete(id);
      clearTimeout(a.timer);
      for (const w of a.waiters) w.reject(new Error('the rate limiter was closed'));
    }
  }

  consume(username: string, rate: number): Promise<Refusal | null> {
    let lease = false;
    if (rate >= LEASE_MIN_RATE) {
      const key = leaseKey(username, rate);
      const held = this.leases.get(key);
      if (held !== undefined) {
        if (held.n > 0 && Date.now() < held.until) {
          held.n--;
          return ADMITTED;
        }
        this.leases.delete(key);
      }
      lease = !this.leasing.has(key);
      if (lease) this.leasing.add(key);
    }
    return new Promise((resolve, reject) => {
      if (this.turn === null) {
        this.turn = { asks: [], waiters: [], leasing: [] };
        setImmediate(() => this.send());
      }
      this.turn.asks.push(lease ? [username, rate, 1] : [username, rate]);
      if (lease) this.turn.leasing.push(leaseKey(username, rate));
      this.turn.waiters.push({ resolve, reject });
    });
  }

  private send(): void {
    const turn = this.turn;
    this.turn = null;
    if (turn === null) return;
    const id = ++rateAsksSent;
    const fail = (e: Error) => {
      if (!this.asked.delete(id)) return;
      clearTimeout(timer);
      for (const key of turn.leasing) this.leasing.delete(key);
      for (const w of turn.waiters) w.reject(e);
    };
    const timer = setTimeout(() => fail(new Error('the primary process did not answer in time')), PRIMARY_TIMEOUT_MS);
    timer.unref();
    this.asked.set(id, { waiters: turn.waiters, timer, leasing: turn.leasing });
    if (!process.send) return fail(new Error('no IPC channel to the primary process'));
    process.send({ type: RATE_ASK, id, asks: turn.asks }, undefined, undefined, (e: Error | null) => {
      if (e) fail(e);
    });
  }
}

/** Whether the rate limit is reported down, logged on the change only (not per request). */
class Outage {
  private down = false;
  constructor(
    private readonly logger: Logger,
    private readonly what: string,
    private readonly onError: 'allow' | 'deny',
  ) {}

  failed(e: unknown): void {
    if (this.down) return;
    this.down = true;
    this.logger.warn(
      `${this.what} cannot be reached; rate limits are ${this.onError === 'allow' ? 'not applied (RATE_LIMIT_ON_REDIS_ERROR=allow)' : 'refusing every lookup (RATE_LIMIT_ON_REDIS_ERROR=deny)'} until it is back`,
      {
        error: messageOf(e).slice(0, 300),
      },
    );
  }

  ok(): void {
    if (!this.down) return;
    this.down = false;
    this.logger.info(`${this.what} is reachable again; rate limits apply`);
  }
}

/** How often a Redis known to be failing is asked (PING) whether it is back. */
const PROBE_EVERY_MS = 1000;
const DENIED: Refusal = { retryAfter: 1, unavailable: true };
const ADMITTED: Promise<Refusal | null> = Promise.resolve(null);

export class FlexibleRateLimiter implements RateLimiter {
  private readonly backend: Backend;
  private readonly redis: Redis | null = null;
  private readonly outage: Outage;
  private readonly byRate = new Map<number, Window>();
  private readonly byWindow = new Map<string, Window>();
  private burstLimiter: RateLimiterMemory | RateLimiterRedis | null = null;
  /** WORKERS > 1 without Redis: the primary's limits, asked over IPC. */
  private readonly primary: PrimaryLimits | null = null;
  private readonly connected: Promise<void>;
  /**
   * Redis is known to be failing: lookups get RATE_LIMIT_ON_REDIS_ERROR's answer at once instead of
   * each waiting for a command to time out, until a PING (every PROBE_EVERY_MS) or a reconnect
   * finds it back.
   */
  private open = false;
  private probeTimer: NodeJS.Timeout | null = null;
  private probing = false;
  private lastError = '';
  private closed = false;

  /**
   * `backend`: where the counters are, when not chosen from the configuration and the process (hostSharedLimits:
   * memory).
   */
  constructor(
    private readonly config: LimiterConfig,
    logger: Logger,
    backend?: Backend,
  ) {
    this.backend = backend ?? (config.redisUrl ? 'redis' : cluster.isWorker ? 'cluster' : 'memory');
    this.outage = new Outage(logger, this.backend === 'redis' ? 'Redis' : 'the primary process', config.onError);
    if (config.redisUrl) {
      const redis = new Redis(config.redisUrl, {
        // Fail at once while disconnected instead of queueing: a lookup must not wait for Redis.
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        commandTimeout: 1000,
        retryStrategy: (times: number) => Math.min(times * 100, 1000),
      });
      redis.on('error', (e: unknown) => this.failed(e));
      redis.on('ready', () => this.back());
      this.redis = redis;
      this.connected = new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          redis.off('ready', done);
          redis.off('error', done);
          resolve();
        };
        const timer = setTimeout(done, CONNECT_WAIT_MS);
        redis.once('ready', done);
        redis.once('error', done);
      });
    } else {
      if (this.backend === 'cluster') this.primary = new PrimaryLimits();
      this.connected = Promise.resolve();
    }
  }

  /**
   * Resolves once Redis is connected, or has failed to connect (the outage is then logged and
   * RATE_LIMIT_ON_REDIS_ERROR applies), or after CONNECT_WAIT_MS: so that the first lookups after
   * start-up are not taken for an outage while the connection is still being made.
   */
  ready(): Promise<void> {
    return this.connected;
  }

  private make(prefix: string, points: number, duration: number): RateLimiterMemory | RateLimiterRedis {
    const keyPrefix = `${this.config.redisPrefix}${prefix}`;
    if (this.redis)
      return new RateLimiterRedis({
        storeClient: this.redis,
        keyPrefix,
        points,
        duration,
        rejectIfRedisNotReady: true,
      });
    return new RateLimiterMemory({ keyPrefix, points, duration });
  }

  private windowFor(rate: number): Window {
    const known = this.byRate.get(rate);
    if (known) return known;
    const [points, duration] = rate >= 1 ? [Math.floor(rate), 1] : [1, Math.max(1, Math.round(1 / rate))];
    // Rates that round to the same window (2 and 2.5) share one limiter, as they share Redis keys.
    const key = `${points}/${duration}`;
    let window = this.byWindow.get(key);
    if (!window) {
      const main = this.make(`rate:${key}`, points, duration);
      if (this.config.burst > 0)
        this.burstLimiter ??= this.make(
          `burst:${this.config.burst}/${BURST_WINDOW_S}`,
          this.config.burst,
          BURST_WINDOW_S,
        );
      window = { main, limiter: this.burstLimiter ? new BurstyRateLimiter(main, this.burstLimiter) : main };
      this.byWindow.set(key, window);
    }
    this.byRate.set(rate, window);
    return window;
  }

  /** The shared counters failed: reported once; with Redis, the circuit opens and the probe starts. */
  private failed(e: unknown): void {
    this.outage.failed(e);
    if (!this.redis) return;
    this.lastError = messageOf(e).slice(0, 300);
    this.open = true;
    if (this.closed) return;
    this.probeTimer ??= setInterval(() => this.probe(), PROBE_EVERY_MS);
    this.probeTimer.unref();
  }

  private back(): void {
    this.open = false;
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = null;
    this.outage.ok();
  }

  private probe(): void {
    const redis = this.redis;
    if (!redis || this.probing || redis.status !== 'ready') return;
    this.probing = true;
    // The client's command timeout bounds the PING: a hung Redis fails it in a second.
    redis.ping().then(
      () => {
        this.probing = false;
        if (this.open) this.back();
      },
      () => {
        this.probing = false;
      },
    );
  }

  async consume(username: string, rate: number): Promise<Refusal | null> {
    if (this.open) return this.config.onError === 'allow' ? null : DENIED;
    if (this.primary) {
      try {
        const answer = await this.primary.consume(username, rate);
        this.outage.ok();
        return answer;
      } catch (e) {
        this.failed(e);
        return this.config.onError === 'allow' ? null : DENIED;
      }
    }
    try {
      await this.windowFor(rate).limiter.consume(username);
      this.outage.ok();
      return null;
    } catch (e) {
      if (e instanceof RateLimiterRes) {
        this.outage.ok();
        return { retryAfter: Math.max(1, Math.ceil(e.msBeforeNext / 1000)), unavailable: false };
      }
      this.failed(e);
      return this.config.onError === 'allow' ? null : DENIED;
    }
  }

  /**
   * In the primary (counters in memory): for each username and rate of `admitted` (lookups just
   * admitted) at LEASE_MIN_RATE or more, takes a lease for a worker from what is left of the
   * window: 1/(LEASE_SHARE x workers) of it, none when that is under one lookup. A worker asks for
   * one lease of a username and rate at a time, so the leases being taken at once (one per worker)
   * together take at most 1/LEASE_SHARE of what is left; should one be refused all the same, it is
   * given back and no lease is made.
   */
  async lease(admitted: readonly [string, number][], workers: number): Promise<[string, number, number, number][]> {
    const out: [string, number, number, number][] = [];
    if (this.backend !== 'memory') return out;
    const seen = new Set<string>();
    for (const [username, rate] of admitted) {
      const key = leaseKey(username, rate);
      if (rate < LEASE_MIN_RATE || seen.has(key)) continue;
      seen.add(key);
      const main = this.windowFor(rate).main as RateLimiterMemory;
      // Read before the window's remaining time is: the lease ends no later than the window.
      const asked = Date.now();
      const now = await main.get(username);
      const n = now === null ? 0 : Math.floor(now.remainingPoints / (LEASE_SHARE * workers));
      // A window that has ended and not yet been dropped has nothing to lease.
      if (now === null || n < 1 || now.msBeforeNext <= 0) continue;
      try {
        await main.consume(username, n);
        out.push([username, rate, n, asked + now.msBeforeNext]);
      } catch {
        await main.reward(username, n);
      }
    }
    return out;
  }

  /** Whether Redis answers now (false while the limiter knows it is failing); null without REDIS_URL. For a gauge. */
  redisUp(): boolean | null {
    return this.redis ? !this.open : null;
  }

  /**
   * With REDIS_URL, /readyz's check of Redis, on this client (a PING under its 1 s command
   * timeout); while Redis is known to be failing it fails at once. Under
   * RATE_LIMIT_ON_REDIS_ERROR=allow a failing Redis leaves the service ready, degraded: lookups are
   * served without a rate limit. Without Redis: none.
   */
  readinessProbe(): ReadinessProbe | null {
    const redis = this.redis;
    if (!redis) return null;
    return {
      name: 'redis',
      check: () =>
        this.open
          ? Promise.reject(new Error(`Redis is failing: ${this.lastError}`))
          : redis.ping().catch((e: unknown) => {
              // A PING that fails or times out is an outage as a lookup's command would be.
              this.failed(e);
              throw e;
            }),
      degraded:
        this.config.onError === 'allow' ? 'rate limits are not applied (RATE_LIMIT_ON_REDIS_ERROR=allow)' : undefined,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.primary?.close();
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = null;
    if (this.redis) this.redis.disconnect();
  }
}
