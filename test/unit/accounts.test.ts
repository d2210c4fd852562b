// Admission of callers as the README promises it: RATE_LIMIT_PER_MINUTE lookups per username per
// minute, a Retry-After after which a retry is admitted; USERNAME_POLICY=registered; a change to the
// users seen within a second while each username's row is read at most once a second; credits.
// The store is the real SQLite store, counted; only the clock is the test's.

import { Accounts, MemoryRateLimiter } from '../../src/accounts/accounts';
import { LookupError } from '../../src/service/errors';
import { SqliteStore } from '../../src/store/sqlite';
import { claim } from '../helpers/readme';

async function refusal(p: Promise<unknown>): Promise<{ code: string; retryAfter?: number } | null> {
  try {
    await p;
    return null;
  } catch (e) {
    if (!(e instanceof LookupError)) throw e;
    return { code: e.code, retryAfter: e.retryAfter };
  }
}

describe('the rate limit', () => {
  test.each([1, 3])('%i lookups per username per minute; the Retry-After given is when a retry is admitted', (perMinute) => {
    let now = Date.UTC(2026, 0, 1, 12, 0, 17, 250);
    const limiter = new MemoryRateLimiter(perMinute, () => now);
    for (let i = 0; i < perMinute; i++) expect(limiter.hit('alice')).toBe(0);
    const wait = limiter.hit('alice');
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    // Another username has its own count.
    expect(limiter.hit('bob')).toBe(0);
    now += wait * 1000;
    expect(limiter.hit('alice')).toBe(0);
  });

  test('a refused caller keeps being refused until its Retry-After, which counts down', () => {
    let now = Date.UTC(2026, 0, 1, 12, 0, 30, 0);
    const limiter = new MemoryRateLimiter(1, () => now);
    expect(limiter.hit('alice')).toBe(0);
    const first = limiter.hit('alice');
    now += 10_000;
    const later = limiter.hit('alice');
    expect(later).toBeGreaterThanOrEqual(1);
    expect(later).toBe(first - 10);
  });

  test('a wait under a second is given as 1 (Retry-After is whole seconds)', () => {
    let now = Date.UTC(2026, 0, 1, 12, 0, 59, 900);
    const limiter = new MemoryRateLimiter(1, () => now);
    expect(limiter.hit('alice')).toBe(0);
    expect(limiter.hit('alice')).toBe(1);
    now += 1000;
    expect(limiter.hit('alice')).toBe(0);
  });

  test('RATE_LIMIT_PER_MINUTE=0 is no limit; over the limit is RATE_LIMITED with its Retry-After', async () => {
    claim(/`RATE_LIMIT_PER_MINUTE` \| `0` \|[^\n]*`0` is no limit/);
    const store = new SqliteStore(':memory:');
    const open = new Accounts(store, { policy: 'any', ratePerMinute: 0 });
    for (let i = 0; i < 100; i++) expect(await refusal(open.admit('alice'))).toBeNull();
    const limited = new Accounts(store, { policy: 'any', ratePerMinute: 2 });
    expect(await refusal(limited.admit('alice'))).toBeNull();
    expect(await refusal(limited.admit('alice'))).toBeNull();
    const r = await refusal(limited.admit('alice'));
    expect(r?.code).toBe('RATE_LIMITED');
    expect(r?.retryAfter).toBeGreaterThanOrEqual(1);
    await store.close();
  });
});

describe('usernames and credits', () => {
  class CountingStore extends SqliteStore {
    reads = 0;
    override async getAccount(username: string) {
      this.reads++;
      return super.getAccount(username);
    }
  }
  let store: CountingStore;
  let now: number;
  beforeEach(() => {
    store = new CountingStore(':memory:');
    now = Date.UTC(2026, 0, 1, 12, 0, 0, 0);
    jest.spyOn(Date, 'now').mockImplementation(() => now);
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await store.close();
  });

  test('USERNAME_POLICY=any takes any username without reading it; registered refuses one not added', async () => {
    const any = new Accounts(store, { policy: 'any', ratePerMinute: 0 });
    expect(await refusal(any.admit('nobody'))).toBeNull();
    const registered = new Accounts(store, { policy: 'registered', ratePerMinute: 0 });
    expect((await refusal(registered.admit('nobody')))?.code).toBe('UNKNOWN_USERNAME');
    await store.putAccount({ username: 'alice', credits: null });
    now += 1000;
    expect(await refusal(registered.admit('alice'))).toBeNull();
  });

  test("a change to the users is seen within a second, and each username's row is read at most once a second", async () => {
    claim(/it reads each username's row at most once a second/);
    const accounts = new Accounts(store, { policy: 'registered', ratePerMinute: 0 });
    expect((await refusal(accounts.admit('alice')))?.code).toBe('UNKNOWN_USERNAME');
    await store.putAccount({ username: 'alice', credits: null });
    const readsBefore = store.reads;
    for (let i = 0; i < 20; i++) {
      now += 40;
      await refusal(accounts.admit('alice'));
    }
    // 800 ms later: at most the one read it made a second ago.
    expect(store.reads).toBe(readsBefore);
    now += 200;
    expect(await refusal(accounts.admit('alice'))).toBeNull();
    expect(store.reads).toBe(readsBefore + 1);
    await store.removeAccount('alice');
    now += 1000;
    expect((await refusal(accounts.admit('alice')))?.code).toBe('UNKNOWN_USERNAME');
  });

  test('a flood of distinct usernames within a second does not grow the cache without bound', async () => {
    // Memory stays bounded: past some thousands of usernames in one second the cache starts afresh,
    // which shows as a username read again within the second.
    const accounts = new Accounts(store, { policy: 'registered', ratePerMinute: 0 });
    await refusal(accounts.admit('alice'));
    const reads = store.reads;
    await refusal(accounts.admit('alice'));
    expect(store.reads).toBe(reads);
    for (let i = 0; i < 20_000; i++) await refusal(accounts.admit(`u${i}`));
    const before = store.reads;
    await refusal(accounts.admit('alice'));
    expect(store.reads).toBe(before + 1);
  });

  test('credits: one per successful lookup, then OUT_OF_CREDIT; unlimited accounts and unknown usernames are not charged', async () => {
    const accounts = new Accounts(store, { policy: 'any', ratePerMinute: 0 });
    await store.putAccount({ username: 'bob', credits: 2 });
    await store.putAccount({ username: 'carol', credits: null });
    await accounts.charge('bob');
    await accounts.charge('bob');
    expect((await store.getAccount('bob'))?.credits).toBe(0);
    const r = await refusal(accounts.charge('bob'));
    expect(r?.code).toBe('OUT_OF_CREDIT');
    expect(r?.retryAfter).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 3; i++) await accounts.charge('carol');
    expect((await store.getAccount('carol'))?.credits).toBeNull();
    await accounts.charge('dave');
    expect(await store.getAccount('dave')).toBeNull();
  });
});
