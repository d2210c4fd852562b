// The rate limit in one process's memory, held to the README's "Managing callers" table and the
// configuration table: R lookups per second in one-second windows (R >= 1, rounded down), one window
// of 1/R seconds for rates below 1 (rounded), a burst pool of RATE_LIMIT_BURST extra lookups
// refilled every 60 s, RATE_LIMITED with a Retry-After of whole seconds; and, when the shared
// counters cannot be reached, RATE_LIMIT_ON_REDIS_ERROR: `allow` serves, `deny` refuses with
// Retry-After: 1, and one warning is logged per outage. The clock is Jest's.

import { FlexibleRateLimiter, type LimiterConfig } from '../../src/accounts/limiter';
import { fakeLogger } from '../helpers/logger';

function limiter(config: Partial<LimiterConfig> = {}) {
  const { logger, lines } = fakeLogger();
  const l = new FlexibleRateLimiter(
    { burst: 0, redisUrl: null, redisPrefix: 'test:', onError: 'allow', ...config },
    logger,
  );
  return { l, lines };
}

/** How many of `n` lookups in a row are admitted, and the last refusal. */
async function burstOf(l: FlexibleRateLimiter, username: string, rate: number, n: number) {
  let admitted = 0;
  let refusal = null;
  for (let i = 0; i < n; i++) {
    const r = await l.consume(username, rate);
    if (r === null) admitted++;
    else refusal = r;
  }
  return { admitted, refusal };
}

describe('in memory', () => {
  beforeEach(() => {
    jest.useFakeTimers({ now: Date.UTC(2026, 10, 23, 12, 0, 0, 0) });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  test('RATE_LIMIT=3: three lookups a second, the fourth RATE_LIMITED with Retry-After 1; the next second three again', async () => {
    const { l } = limiter();
    expect(await burstOf(l, 'alice', 3, 5)).toEqual({ admitted: 3, refusal: { retryAfter: 1, unavailable: false } });
    jest.advanceTimersByTime(1000);
    expect((await burstOf(l, 'alice', 3, 5)).admitted).toBe(3);
    await l.close();
  });

  test('each username has its own count', async () => {
    const { l } = limiter();
    expect((await burstOf(l, 'alice', 2, 4)).admitted).toBe(2);
    expect((await burstOf(l, 'bob', 2, 4)).admitted).toBe(2);
  });

  test('a rate of 1 is one lookup a second', async () => {
    const { l } = limiter();
    expect(await burstOf(l, 'alice', 1, 3)).toEqual({ admitted: 1, refusal: { retryAfter: 1, unavailable: false } });
  });

  test('a fractional rate of 1 or more is rounded down: 2.9 is 2 a second, and 2.5 shares the count of 2', async () => {
    const { l } = limiter();
    expect((await burstOf(l, 'alice', 2.9, 5)).admitted).toBe(2);
    expect((await burstOf(l, 'bob', 2, 1)).admitted).toBe(1);
    // bob's second lookup of this second, asked at 2.5 (the same window as 2): admitted; a third is not.
    expect((await burstOf(l, 'bob', 2.5, 1)).admitted).toBe(1);
    expect((await burstOf(l, 'bob', 2.5, 1)).admitted).toBe(0);
    // And the other way round: the count at 2.5 is the one 2 sees.
    expect((await burstOf(l, 'bob', 2, 1)).admitted).toBe(0);
  });

  test('RATE_LIMIT=0.5 is one lookup per 2 s: the second waits 2 s, and is admitted after them', async () => {
    const { l } = limiter();
    expect(await burstOf(l, 'alice', 0.5, 2)).toEqual({ admitted: 1, refusal: { retryAfter: 2, unavailable: false } });
    jest.advanceTimersByTime(1000);
    expect(await burstOf(l, 'alice', 0.5, 1)).toEqual({ admitted: 0, refusal: { retryAfter: 1, unavailable: false } });
    jest.advanceTimersByTime(1000);
    expect((await burstOf(l, 'alice', 0.5, 2)).admitted).toBe(1);
  });

  test('rates below 1 round their window to whole seconds: 0.3 is one per 3 s, 0.4 one per 3 s (2.5 rounded), 0.001 one per 1000 s', async () => {
    const { l } = limiter();
    expect((await burstOf(l, 'a', 0.3, 2)).refusal).toEqual({ retryAfter: 3, unavailable: false });
    expect((await burstOf(l, 'b', 0.4, 2)).refusal).toEqual({ retryAfter: 3, unavailable: false });
    expect((await burstOf(l, 'c', 0.001, 2)).refusal).toEqual({ retryAfter: 1000, unavailable: false });
    expect((await burstOf(l, 'd', 0.9, 2)).refusal).toEqual({ retryAfter: 1, unavailable: false });
  });

  test('Retry-After is whole seconds rounded up, never 0', async () => {
    const { l } = limiter();
    expect((await burstOf(l, 'alice', 0.25, 1)).admitted).toBe(1);
    jest.advanceTimersByTime(2500);
    // 1.5 s of the 4 s window are left: 2.
    expect((await burstOf(l, 'alice', 0.25, 1)).refusal).toEqual({ retryAfter: 2, unavailable: false });
    jest.advanceTimersByTime(1499);
    // 1 ms left: still 1, not 0.
    expect((await burstOf(l, 'alice', 0.25, 1)).refusal).toEqual({ retryAfter: 1, unavailable: false });
  });

  test('RATE_LIMIT_BURST=3 at 1 a second: 1 + 3 in the first second; the pool does not refill within 60 s, the rate does', async () => {
    const { l } = limiter({ burst: 3 });
    expect((await burstOf(l, 'alice', 1, 6)).admitted).toBe(4);
    jest.advanceTimersByTime(1000);
    expect((await burstOf(l, 'alice', 1, 3)).admitted).toBe(1);
    jest.advanceTimersByTime(30_000);
    expect((await burstOf(l, 'alice', 1, 3)).admitted).toBe(1);
    jest.advanceTimersByTime(30_000);
    // 61 s after the pool was first drawn on: refilled.
    expect((await burstOf(l, 'alice', 1, 6)).admitted).toBe(4);
  });

  test('the burst pool is one per username, whatever its rate', async () => {
    const { l } = limiter({ burst: 2 });
    expect((await burstOf(l, 'alice', 1, 5)).admitted).toBe(3);
    // Another rate for the same username draws on the same pool, already empty.
    expect((await burstOf(l, 'alice', 5, 10)).admitted).toBe(5);
    expect((await burstOf(l, 'bob', 1, 5)).admitted).toBe(3);
  });

  test('nothing is logged while the limit works', async () => {
    const { l, lines } = limiter();
    await burstOf(l, 'alice', 1, 3);
    expect(lines).toEqual([]);
    await expect(l.ready()).resolves.toBeUndefined();
  });
});

describe('shared counters that cannot be reached (RATE_LIMIT_ON_REDIS_ERROR)', () => {
  // A Redis URL on a port nothing listens on: every command fails at once (no offline queue).
  const DOWN = 'redis://127.0.0.1:1';

  test('allow: lookups are served without a limit; one warning naming Redis and allow for the whole outage', async () => {
    const { l, lines } = limiter({ redisUrl: DOWN, onError: 'allow' });
    const t = Date.now();
    await l.ready();
    // A refused connection ends the wait for it at once (not after the 3 s allowed for a slow one).
    expect(Date.now() - t).toBeLessThan(1500);
    expect((await burstOf(l, 'alice', 1, 5)).admitted).toBe(5);
    await l.close();
    const warnings = lines.filter((x) => x.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0].message).toMatch(
      /^Redis cannot be reached; rate limits are not applied \(RATE_LIMIT_ON_REDIS_ERROR=allow\)/,
    );
    // The error's own message (not "Error: ..."), for the operator to read.
    const error = (warnings[0].meta as { error?: unknown } | undefined)?.error;
    expect(typeof error).toBe('string');
    expect(error).toMatch(/ECONNREFUSED|not ready|writeable|closed/i);
    expect(error).not.toMatch(/^Error/);
    expect(lines.filter((x) => x.level === 'info')).toEqual([]);
  });

  test('deny: every lookup RATE_LIMITED, Retry-After 1, marked as not checkable; one warning naming deny', async () => {
    const { l, lines } = limiter({ redisUrl: DOWN, onError: 'deny' });
    await l.ready();
    for (let i = 0; i < 3; i++) expect(await l.consume('alice', 100)).toEqual({ retryAfter: 1, unavailable: true });
    await l.close();
    const warnings = lines.filter((x) => x.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0].message).toMatch(/refusing every lookup \(RATE_LIMIT_ON_REDIS_ERROR=deny\)/);
  });
});
