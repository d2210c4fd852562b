// The upstream chain: what a lookup the store cannot answer asks next. For an operation, each
// provider that answers it is asked in PROVIDERS order; a not-found asks the next. Every answer is
// checked as an imported record is (records.ts), kept in the store's upstream cache with its fetch
// time and provider, and served from there while fresh (UPSTREAM_TTL, UPSTREAM_MOT_TTL,
// UPSTREAM_NOT_FOUND_TTL); while the upstreams fail, a cached answer up to UPSTREAM_STALE_IF_ERROR
// past its TTL is served instead (RFC 5861's stale-if-error).
//
// Resilience is cockatiel's, per provider: a circuit breaker (consecutive failures open it; after
// UPSTREAM_BREAKER_OPEN_MS one probe call is let through), a bulkhead (UPSTREAM_CONCURRENCY calls in
// flight, as many queued), and retries with decorrelated jitter for transient failures only (a
// 429's Retry-After is honoured when it fits the budget). The whole chain runs inside one time
// budget (UPSTREAM_TIMEOUT_MS, retries included). Concurrent lookups of one uncached key share one
// fetch (coalescing): one upstream call per key per process, however many wait for it.

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
import type { Metrics } from '../ops/metrics';
import { UpstreamFailure, type Provider, type UpstreamHttp } from '../providers/provider';
import type { CachedAnswer } from '../store/cache';
import type { RecordKey, VehicleStore } from '../store/store';
import { LookupError } from './errors';
import { motProblem, vehicleProblem } from './records';

/** What the chain reads of UPSTREAM_* (config.ts). */
type ChainOptions = Pick<
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
}

type UpstreamMetrics = Pick<Metrics, 'upstreamCall' | 'upstreamCache' | 'upstreamBreaker' | 'upstreamQuotaUsed'>;

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
  /** The retry policy outermost, so that each call is told which try it is. */
  readonly policy: IPolicy<IRetryContext>;
  readonly breaker: ReturnType<typeof circuitBreaker>;
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
  ) {
    this.guarded = providers.map((p) => this.guard(p));
  }

  private guard(provider: Provider): Guarded {
    const o = this.options;
    const failure = (e: Error) => e instanceof UpstreamFailure && e.kind !== 'invalid';
    const breaker = circuitBreaker(handleWhen(failure), {
      halfOpenAfter: o.breakerOpenMs,
      breaker: new ConsecutiveBreaker(o.breakerFailures),
    });
    breaker.onStateChange((s) => this.metrics?.upstreamBreaker(provider.name, STATE_NAMES[s]));
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
    const policy = wrap(retrying, breaker, bulkhead(o.concurrency, o.concurrency));
    return { provider, policy, breaker };
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
   * LookupError.
   */
  async lookup(op: Operation, key: RecordKey): Promise<ChainAnswer> {
    const cached = await this.store.cacheGet(key);
    if (cached && this.now() - cached.fetchedAt < this.ttlMs(op, cached)) {
      this.metrics?.upstreamCache(op.name, 'hit');
      return { payload: cached.payload, source: 'cache' };
    }
    this.metrics?.upstreamCache(op.name, 'miss');
    const id = `${key.operation}\u0000${key.registration}\u0000${key.state}`;
    let shared = this.inflight.get(id);
    if (!shared) {
      shared = this.fetch(op, key, cached).finally(() => this.inflight.delete(id));
      this.inflight.set(id, shared);
    }
    return shared;
  }

  private async fetch(op: Operation, key: RecordKey, cached: CachedAnswer | null): Promise<ChainAnswer> {
    this.fetches++;
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    const failures: UpstreamFailure[] = [];
    for (const g of this.guarded) {
      if (!g.provider.answers(op.name)) continue;
      const outcome = await this.ask(g, op, key, signal);
      if (outcome instanceof UpstreamFailure) {
        if (outcome.kind === 'invalid')
          throw new LookupError('INVALID_PARAMETER', `RegistrationNumber is not valid: ${outcome.message}`);
        failures.push(outcome);
        continue;
      }
      if (outcome === null) continue;
      await this.store.cachePut({ ...key, payload: outcome, provider: g.provider.name, fetchedAt: this.now() });
      return { payload: outcome, source: g.provider.name };
    }
    if (failures.length === 0) {
      await this.store.cachePut({
        ...key,
        payload: null,
        provider: this.guarded.find((g) => g.provider.answers(op.name))?.provider.name ?? '',
        fetchedAt: this.now(),
      });
      return { payload: null, source: 'upstream' };
    }
    if (cached && this.now() - cached.fetchedAt < this.ttlMs(op, cached) + 1000 * this.options.staleIfErrorS) {
      this.metrics?.upstreamCache(op.name, 'stale');
      return { payload: cached.payload, source: 'cache' };
    }
    const wait = Math.max(UPSTREAM_RETRY_AFTER_S, ...failures.map((f) => f.retryAfterS ?? 0));
    const why = failures.map((f) => `${f.provider}: ${f.message}`).join('; ');
    throw new LookupError(
      'SERVICE_UNAVAILABLE',
      `No upstream could answer for now (${why.slice(0, 300)}); nothing was charged; retry in ${wait} s`,
      wait,
    );
  }

  /** One provider, through its policies: the checked payload, null for not found, or the failure. */
  private async ask(
    g: Guarded,
    op: Operation,
    key: RecordKey,
    signal: AbortSignal,
  ): Promise<string | null | UpstreamFailure> {
    const name = g.provider.name;
    const t = performance.now();
    const done = (outcome: string) => this.metrics?.upstreamCall(name, outcome, (performance.now() - t) / 1000);
    try {
      const answer = await g.policy.execute(
        ({ signal: s, attempt }) => this.once(g.provider, op, key, s, attempt + 1),
        signal,
      );
      if (!answer.found) {
        done('not_found');
        return null;
      }
      done('found');
      return JSON.stringify(answer.record);
    } catch (e) {
      const f = this.asFailure(name, e, signal);
      done(
        f.kind === 'invalid'
          ? 'invalid'
          : e instanceof BrokenCircuitError
            ? 'breaker_open'
            : signal.aborted
              ? 'timeout'
              : f.kind,
      );
      return f;
    }
  }

  /** One call, its answer checked: a bad answer is a failure (the breaker counts it), never cached. */
  private async once(p: Provider, op: Operation, key: RecordKey, signal: AbortSignal, attempt: number) {
    this.metrics?.upstreamQuotaUsed(p.name, 1);
    const answer = await p.fetch(op.name, key.registration, key.state, { http: this.http, signal, attempt });
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
