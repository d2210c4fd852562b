// The upstream chain: what a lookup the store cannot answer asks next. For an operation, each
// provider that answers it is asked in PROVIDERS order; a not-found asks the next. Every answer is
// checked as an imported record is (records.ts), kept in the store's upstream cache with its fetch
// time and provider, and served from there while fresh (UPSTREAM_TTL, UPSTREAM_MOT_TTL,
// UPSTREAM_NOT_FOUND_TTL); while the upstreams fail, a cached answer up to UPSTREAM_STALE_IF_ERROR
// past its TTL is served instead (RFC 5861's stale-if-error).
//
// Resilience is cockatiel's, per provider: a circuit breaker (UPSTREAM_BREAKER_FAILURES failed
// lookups in a row open it, a lookup's retries counting once; after UPSTREAM_BREAKER_OPEN_MS one
// probe lookup is let through), a bulkhead (UPSTREAM_CONCURRENCY calls in flight, as many queued),
// and retries with decorrelated jitter for transient failures only (a 429's Retry-After is honoured
// when it fits the budget). Why a provider fails (its host, status, the limit reached) goes to the
// log, once when it starts failing and when its breaker opens and closes; the caller is told only
// that the provider is not answering or busy. The whole chain runs inside one time
// budget (UPSTREAM_TIMEOUT_MS, retries included). Concurrent lookups of one uncached key share one
// fetch (coalescing): one upstream call per key per process, however many wait for it. One caller
// (username) has at most its credits, and at most half of UPSTREAM_CONCURRENCY, in fetches it
// started and has not had charged yet (UpstreamCaller): a burst of distinct plates can neither pay
// the upstream for answers it cannot be charged for, nor take the whole cap from other callers.

import {
  BrokenCircuitError,
  BulkheadRejectedError,
  CircuitState,
  ConsecutiveBreaker,
  DelegateBackoff,
  ExponentialBackoff,
  bulkhead,
  circuitBreaker,
  handleWhen,
  retry,
  wrap,
  type IPolicy,
  type IRetryContext,
} from 'cockatiel';
import type { Operation } from '../contract/operations';
import type { UpstreamConfig } from '../config';
import type { Logger } from '../ops/logger';
import type { Metrics } from '../ops/metrics';
import type { CacheWriteWatch } from '../ops/storewatch';
import { UpstreamFailure, type Provider, type UpstreamHttp } from '../providers/provider';
import type { CacheEntry, CachedAnswer } from '../store/cache';
import type { RecordKey, VehicleStore } from '../store/store';
import { LookupError, quote } from './errors';
import { motProblem, vehicleProblem } from './records';

/** What the chain reads of UPSTREAM_* (config.ts). */
export type ChainOptions = Pick<
  UpstreamConfig,
  | 'ttlS'
  | 'motTtlS'
  | 'notFoundTtlS'
  | 'staleIfErrorS'
  | 'timeoutMs'
  | 'concurrency'
  | 'breakerFailures'
  | 'breakerOpenMs'
>;

/** What the chain found: a payload (or nothing) and where it came from, for the access log. */
interface ChainAnswer {
  readonly payload: string | null;
  /** `cache`, or the provider that answered just now. */
  readonly source: string;
  /** When the answer was fetched from its provider (ms since the epoch): now, or the cached entry's time. */
  readonly fetchedAt: number;
}

type UpstreamMetrics = Pick<Metrics, 'upstreamCall' | 'upstreamCache' | 'upstreamBreaker' | 'upstreamQuotaUsed'>;

/** Who hears of what goes wrong in the chain beside its caller. */
interface ChainWatch {
  /**
   * A provider starting to fail, its breaker opening and closing, and each permanent failure (a malformed,
   * oversized or too deeply nested answer, refused credentials).
   */
  readonly log?: ChainLog;
  /** The cache's writes failing (the answer is served all the same) and succeeding again. */
  readonly cache?: CacheWriteWatch;
}

/**
 * Who a lookup is for, as the chain bounds what one caller may have fetched at once: a username's fetches in flight
 * (those it started; joining another's costs nothing) are at most its credits, and at most its share of
 * UPSTREAM_CONCURRENCY.
 */
export interface UpstreamCaller {
  readonly username: string;
  /** Credits left as admitted; null when the caller has no credit bound. */
  readonly credits: number | null;
  /** Set when the chain reserved a fetch for this caller: called once the answer is charged (or refused). */
  release?: () => void;
}

/** Seconds a caller over its share of fetches in flight is asked to wait. */
const SHARE_RETRY_AFTER_S = 1;

/** Largest payload a provider's answer may make (the JSON text kept and answered). */
const MAX_PAYLOAD_CHARS = 262_144;
// Characters XML 1.0 cannot carry, even escaped (as records.ts refuses them in an import).
const NOT_XML_RE =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** Seconds a caller is asked to wait when no upstream could answer and the upstreams gave no time. */
const UPSTREAM_RETRY_AFTER_S = 30;

/** Why a provider's record cannot be answered, or null: the import's checks, then the payload's size and characters. */
export function answerProblem(op: Operation, record: unknown): string | null {
  const p = op.result === 'UKMOTData' ? motProblem(record) : vehicleProblem(record);
  if (p) return p;
  const text = JSON.stringify(record);
  if (text.length > MAX_PAYLOAD_CHARS) return `the answer is ${text.length} characters, over ${MAX_PAYLOAD_CHARS}`;
  // JSON.stringify escapes control characters and lone surrogates; U+FFFE and U+FFFF it leaves raw.
  if (NOT_XML_RE.test(text)) return 'the answer holds a character XML cannot carry';
  return null;
}

interface Guarded {
  readonly provider: Provider;
  /** The breaker outermost, so that a lookup's retries count once; each call is told which try it is. */
  readonly policy: IPolicy<IRetryContext>;
  readonly breaker: ReturnType<typeof circuitBreaker>;
  /** Its last lookup failed: the next failure is not logged again. */
  failing: boolean;
}

/** The chain's log: a provider starting to fail, and its breaker opening and closing. */
type ChainLog = Pick<Logger, 'warn'>;

/** A provider's failure: the reason for the log, and what the caller is told (no host, port or setting). */
class Failed {
  constructor(
    readonly failure: UpstreamFailure,
    readonly told: string,
  ) {}
}

const STATE_NAMES: Record<CircuitState, string> = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.Open]: 'open',
  [CircuitState.HalfOpen]: 'half_open',
  [CircuitState.Isolated]: 'isolated',
};

export class UpstreamChain {
  private readonly guarded: Guarded[];
  private readonly inflight = new Map<string, Promise<ChainAnswer>>();
  /** Fetches in flight per username, each reserved until its answer is charged. */
  private readonly reserved = new Map<string, number>();
  /** The most fetches one username may have in flight: half of UPSTREAM_CONCURRENCY, at least one. */
  readonly share: number;
  /**
   * Whole-chain fetches begun (each one upstream call at most per provider, retries aside): for tests and the bench.
   */
  fetches = 0;

  constructor(
    private readonly store: VehicleStore,
    providers: readonly Provider[],
    private readonly http: UpstreamHttp,
    private readonly options: ChainOptions,
    private readonly metrics: UpstreamMetrics | null = null,
    private readonly now: () => number = Date.now,
    private readonly watch: ChainWatch = {},
  ) {
    this.guarded = providers.map((p) => this.guard(p));
    this.share = Math.max(1, Math.floor(options.concurrency / 2));
  }

  private guard(provider: Provider): Guarded {
    const o = this.options;
    const failure = (e: Error) => e instanceof UpstreamFailure && e.kind !== 'invalid';
    const breaker = circuitBreaker(handleWhen(failure), {
      halfOpenAfter: o.breakerOpenMs,
      breaker: new ConsecutiveBreaker(o.breakerFailures),
    });
    breaker.onStateChange((s) => this.metrics?.upstreamBreaker(provider.name, STATE_NAMES[s]));
    // A half-open probe that fails opens the breaker again: logged once, not at every probe.
    let open = false;
    breaker.onBreak((why) => {
      if (open) return;
      open = true;
      const e = 'error' in why ? why.error : undefined;
      const reason = e instanceof Error ? e.message.slice(0, 300) : 'isolated';
      // The failure that opened it is the first: it is logged as such before the breaker's line.
      if (!g.failing) {
        g.failing = true;
        this.watch.log?.warn(`upstream ${provider.name} is failing`, { provider: provider.name, reason });
      }
      this.watch.log?.warn(`upstream ${provider.name}: circuit breaker open; lookups that need it are refused`, {
        provider: provider.name,
        reason,
        failedLookups: o.breakerFailures,
        probeAfterMs: o.breakerOpenMs,
      });
    });
    breaker.onReset(() => {
      open = false;
      g.failing = false;
      this.watch.log?.warn(`upstream ${provider.name}: circuit breaker closed; it answers again`, {
        provider: provider.name,
      });
    });
    this.metrics?.upstreamBreaker(provider.name, 'closed');
    const jitter = new ExponentialBackoff({ initialDelay: 100, maxDelay: 2000 });
    // A 429's Retry-After is waited out when it says; otherwise decorrelated jitter.
    const backoff = new DelegateBackoff<
      { result: { error?: unknown } },
      { next: ReturnType<ExponentialBackoff<unknown>['next']> | null }
    >((ctx, st) => {
      const e = ctx.result.error;
      const nextJitter = (st?.next ?? null) === null ? jitter.next() : st!.next!.next(undefined);
      if (e instanceof UpstreamFailure && e.retryAfterS !== undefined)
        return { delay: e.retryAfterS * 1000, state: { next: nextJitter } };
      return { delay: nextJitter.duration, state: { next: nextJitter } };
    });
    const retrying = retry(
      handleWhen(
        (e) => e instanceof UpstreamFailure && e.kind === 'transient' && (e.retryAfterS ?? 0) * 1000 < o.timeoutMs / 2,
      ),
      { maxAttempts: 2, backoff: backoff as never },
    );
    const policy = wrap(breaker, retrying, bulkhead(o.concurrency, o.concurrency));
    const g: Guarded = { provider, policy, breaker, failing: false };
    return g;
  }

  /** Whether some provider answers the operation. */
  answers(operation: string): boolean {
    return this.guarded.some((g) => g.provider.answers(operation));
  }

  /** Each provider's breaker state, for /readyz. */
  states(): { name: string; state: string }[] {
    return this.guarded.map((g) => ({ name: g.provider.name, state: STATE_NAMES[g.breaker.state] }));
  }

  private ttlMs(op: Operation, c: CachedAnswer): number {
    const o = this.options;
    return 1000 * (c.payload === null ? o.notFoundTtlS : op.result === 'UKMOTData' ? o.motTtlS : o.ttlS);
  }

  /**
   * The answer for a key the store does not hold: from the cache while fresh, else from the providers. Throws
   * LookupError. `caller`, when given, is held to its bound before a fetch it would start (see UpstreamCaller), and
   * its `release` set when a fetch was reserved for it.
   */
  async lookup(op: Operation, key: RecordKey, caller?: UpstreamCaller): Promise<ChainAnswer> {
    const cached = await this.store.cacheGet(key);
    if (cached && this.now() - cached.fetchedAt < this.ttlMs(op, cached)) {
      this.metrics?.upstreamCache(op.name, 'hit');
      return { payload: cached.payload, source: 'cache', fetchedAt: cached.fetchedAt };
    }
    this.metrics?.upstreamCache(op.name, 'miss');
    const id = `${key.operation}\u0000${key.registration}\u0000${key.state}`;
    let shared = this.inflight.get(id);
    if (!shared) {
      if (caller) this.reserve(caller);
      shared = this.fetch(op, key, cached).finally(() => this.inflight.delete(id));
      this.inflight.set(id, shared);
    }
    return shared;
  }

  /**
   * Takes one of the caller's fetches in flight, or refuses: OUT_OF_CREDIT with no credit, RATE_LIMITED (retry in a
   * second) when its credits are all held by fetches in flight, or it has its share of UPSTREAM_CONCURRENCY.
   */
  private reserve(caller: UpstreamCaller): void {
    const name = caller.username;
    const held = this.reserved.get(name) ?? 0;
    const credits = caller.credits;
    if (credits === 0)
      throw new LookupError(
        'OUT_OF_CREDIT',
        `Out of credit: username ${quote(name)} has no lookup credit left; ask the operator for more`,
      );
    if (credits !== null && held >= credits)
      throw new LookupError(
        'RATE_LIMITED',
        `Too many lookups at once: username ${quote(name)} has ${credits} credit${credits === 1 ? '' : 's'}, each held by an upstream lookup in flight; retry in ${SHARE_RETRY_AFTER_S} s`,
        SHARE_RETRY_AFTER_S,
      );
    if (held >= this.share)
      throw new LookupError(
        'RATE_LIMITED',
        `Too many lookups at once: username ${quote(name)} has ${held} upstream lookups in flight, its share of UPSTREAM_CONCURRENCY; retry in ${SHARE_RETRY_AFTER_S} s`,
        SHARE_RETRY_AFTER_S,
      );
    this.reserved.set(name, held + 1);
    let released = false;
    caller.release = () => {
      if (released) return;
      released = true;
      const left = (this.reserved.get(name) ?? 1) - 1;
      if (left === 0) this.reserved.delete(name);
      else this.reserved.set(name, left);
    };
  }

  private async fetch(op: Operation, key: RecordKey, cached: CachedAnswer | null): Promise<ChainAnswer> {
    this.fetches++;
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    const deadline = Date.now() + this.options.timeoutMs;
    const failures: Failed[] = [];
    for (const g of this.guarded) {
      if (!g.provider.answers(op.name)) continue;
      const outcome = await this.ask(g, op, key, signal, deadline);
      if (outcome instanceof Failed) {
        if (outcome.failure.kind === 'invalid')
          throw new LookupError('INVALID_PARAMETER', `RegistrationNumber is not valid: ${outcome.failure.message}`);
        failures.push(outcome);
        continue;
      }
      if (outcome === null) continue;
      const fetchedAt = this.now();
      await this.keep({ ...key, payload: outcome, provider: g.provider.name, fetchedAt });
      return { payload: outcome, source: g.provider.name, fetchedAt };
    }
    if (failures.length === 0) {
      const fetchedAt = this.now();
      await this.keep({
        ...key,
        payload: null,
        provider: this.guarded.find((g) => g.provider.answers(op.name))?.provider.name ?? '',
        fetchedAt,
      });
      return { payload: null, source: 'upstream', fetchedAt };
    }
    if (cached && this.now() - cached.fetchedAt < this.ttlMs(op, cached) + 1000 * this.options.staleIfErrorS) {
      this.metrics?.upstreamCache(op.name, 'stale');
      return { payload: cached.payload, source: 'cache', fetchedAt: cached.fetchedAt };
    }
    // When every provider said when it frees (a quota, a 429), that is when to come back.
    const times = failures.map((f) => f.failure.retryAfterS);
    const wait = times.every((t) => t !== undefined)
      ? Math.max(1, ...times)
      : Math.max(UPSTREAM_RETRY_AFTER_S, ...times.map((t) => t ?? 0));
    const why = failures.map((f) => f.told).join('; ');
    throw new LookupError(
      'SERVICE_UNAVAILABLE',
      `No upstream could answer for now: ${why}; nothing was charged; retry in ${wait} s`,
      wait,
    );
  }

  /**
   * Caches a fetched answer. A write that fails (a full disk, the store unreachable) costs the cache, not the answer:
   * it was paid for, so it is served all the same, and the watch is told.
   */
  private async keep(entry: CacheEntry): Promise<void> {
    try {
      await this.store.cachePut(entry);
    } catch (e) {
      this.watch.cache?.cacheWriteFailed(e);
      return;
    }
    this.watch.cache?.cacheWritten();
  }

  /** One provider, through its policies: the checked payload, null for not found, or the failure. */
  private async ask(
    g: Guarded,
    op: Operation,
    key: RecordKey,
    signal: AbortSignal,
    deadline: number,
  ): Promise<string | null | Failed> {
    const name = g.provider.name;
    const t = performance.now();
    const done = (outcome: string) => this.metrics?.upstreamCall(name, outcome, (performance.now() - t) / 1000);
    try {
      const answer = await g.policy.execute(
        ({ signal: s, attempt }) => this.once(g.provider, op, key, s, attempt + 1, deadline),
        signal,
      );
      this.answered(g);
      if (!answer.found) {
        done('not_found');
        return null;
      }
      done('found');
      return JSON.stringify(answer.record);
    } catch (e) {
      const f = this.asFailure(name, e, signal);
      // A permanent failure is the upstream or its configuration at fault, not the network: the operator is told
      // why (the breaker bounds how often, since it counts these too).
      if (f.kind === 'permanent' && !(e instanceof BrokenCircuitError))
        this.watch.log?.warn('upstream failed', { provider: name, operation: op.name, reason: f.message });
      const outcome =
        f.kind === 'invalid'
          ? 'invalid'
          : e instanceof BrokenCircuitError
            ? 'breaker_open'
            : e instanceof BulkheadRejectedError
              ? 'busy'
              : signal.aborted
                ? 'timeout'
                : f.kind;
      done(outcome);
      if (f.kind === 'invalid') {
        this.answered(g);
        return new Failed(f, '');
      }
      if (outcome !== 'breaker_open' && !g.failing) {
        g.failing = true;
        this.watch.log?.warn(`upstream ${name} is failing`, {
          provider: name,
          reason: f.message.slice(0, 300),
          outcome,
        });
      }
      const told =
        outcome === 'busy' || (f.kind === 'transient' && f.retryAfterS !== undefined)
          ? `the ${name} upstream is busy`
          : f.kind === 'permanent'
            ? `the ${name} upstream could not give a usable answer`
            : `the ${name} upstream is not answering`;
      return new Failed(f, told);
    }
  }

  /** A provider answered: a failing one that answers again (its breaker never opened) says so. */
  private answered(g: Guarded): void {
    if (!g.failing) return;
    g.failing = false;
    this.watch.log?.warn(`upstream ${g.provider.name} answers again`, { provider: g.provider.name });
  }

  /** One call, its answer checked: a bad answer is a failure (the breaker counts it), never cached. */
  private async once(
    p: Provider,
    op: Operation,
    key: RecordKey,
    signal: AbortSignal,
    attempt: number,
    deadline: number,
  ) {
    this.metrics?.upstreamQuotaUsed(p.name, 1);
    const answer = await p.fetch(op.name, key.registration, key.state, {
      http: this.http,
      signal,
      attempt,
      deadline,
    });
    if (answer.found) {
      const problem = answerProblem(op, answer.record);
      if (problem) throw new UpstreamFailure(p.name, 'permanent', `its answer was refused: ${problem.slice(0, 200)}`);
    }
    return answer;
  }

  private asFailure(name: string, e: unknown, signal: AbortSignal): UpstreamFailure {
    if (signal.aborted && !(e instanceof UpstreamFailure && e.kind === 'invalid')) {
      return new UpstreamFailure(
        name,
        'transient',
        `no answer within ${this.options.timeoutMs} ms (UPSTREAM_TIMEOUT_MS)`,
      );
    }
    if (e instanceof UpstreamFailure)
      return e.provider === name ? e : new UpstreamFailure(name, e.kind, e.message, e.retryAfterS);
    if (e instanceof BrokenCircuitError)
      return new UpstreamFailure(
        name,
        'transient',
        `its circuit breaker is open after repeated failures; a probe call is let through every ${this.options.breakerOpenMs} ms`,
      );
    if (e instanceof BulkheadRejectedError)
      return new UpstreamFailure(
        name,
        'transient',
        `over ${this.options.concurrency} calls in flight and as many waiting (UPSTREAM_CONCURRENCY)`,
      );
    return new UpstreamFailure(name, 'permanent', 'it failed unexpectedly');
  }
}
