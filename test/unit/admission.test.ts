// Admission and charging as the README's "Managing callers" and "Errors" sections state them, one
// rule at a time, in one process: disabled usernames and allow-lists (UNKNOWN_USERNAME, "Your
// username is incorrect or not allowed here"), credits (OUT_OF_CREDIT, no Retry-After), the daily
// limit (DAILY_LIMIT_REACHED, Retry-After to the next midnight UTC), the rate (RATE_LIMITED with the
// limiter's Retry-After), the order of the checks ("the username, disabled, allow-list and an
// exhausted balance before anything else; then the rate"), and usage records for registered
// usernames only. The store is the real SQLite store; the limiter and the usage recorder are
// recording fakes; the clock is the test's.

import { createHash } from 'node:crypto';
import { Accounts, type AccountsConfig } from '../../src/accounts/accounts';
import type { Refusal, RateLimiter } from '../../src/accounts/limiter';
import type { UsageRecorder } from '../../src/accounts/usage';
import { LookupError } from '../../src/service/errors';
import { SqliteStore } from '../../src/store/sqlite';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

const HOME = { address: '203.0.113.7' };
const AWAY = { address: '198.51.100.1' };

class FakeLimiter implements RateLimiter {
  calls: Array<[string, number]> = [];
  answer: Refusal | null = null;
  async consume(username: string, rate: number): Promise<Refusal | null> {
    this.calls.push([username, rate]);
    return this.answer;
  }
  async close(): Promise<void> {}
}

class FakeUsage {
  records: Array<[string, string, string, boolean]> = [];
  record(username: string, day: string, operation: string, found: boolean): void {
    this.records.push([username, day, operation, found]);
  }
}

class CountingStore extends SqliteStore {
  charges = 0;
  constructor(file: string) {
    super(file);
    const charge = this.accounts.charge.bind(this.accounts);
    this.accounts.charge = (username, day) => {
      this.charges++;
      return charge(username, day);
    };
  }
}

async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string; retryAfter?: number } | null> {
  try {
    await p;
    return null;
  } catch (e) {
    if (!(e instanceof LookupError)) throw e;
    return { code: e.code, message: e.message, retryAfter: e.retryAfter };
  }
}

let store: CountingStore;
let limiter: FakeLimiter;
let usage: FakeUsage;
let now: number;

function accounts(config: Partial<AccountsConfig> = {}, withLimiter = true): Accounts {
  return new Accounts(
    store,
    { policy: 'any', rateLimit: 0, ...config },
    withLimiter ? limiter : null,
    usage as unknown as UsageRecorder,
  );
}

/** Moves the clock past the account cache's second, so that changes to the users are seen. */
function later(ms = 1000): void {
  now += ms;
}

beforeEach(() => {
  store = new CountingStore(':memory:');
  limiter = new FakeLimiter();
  usage = new FakeUsage();
  // 2026-11-23 12:00:00 UTC: 12 hours (43200 s) to midnight.
  now = Date.UTC(2026, 10, 23, 12, 0, 0, 0);
  jest.spyOn(Date, 'now').mockImplementation(() => now);
});
afterEach(async () => {
  jest.restoreAllMocks();
  await store.close();
});

describe('disabled usernames', () => {
  test.each(['any', 'registered'] as const)(
    'USERNAME_POLICY=%s: UNKNOWN_USERNAME, "not allowed here ... is disabled"; enabled again, admitted',
    async (policy) => {
      await store.accounts.putAccount({ username: key('dora'), enabled: false });
      const a = accounts({ policy });
      const r = await refusal(a.admit('dora', HOME));
      expect(r?.code).toBe('UNKNOWN_USERNAME');
      expect(r?.message).toMatch(/^Your username is incorrect or not allowed here: .*dora.* is disabled$/);
      await store.accounts.setEnabled(key('dora'), true);
      later();
      expect(await refusal(a.admit('dora', HOME))).toBeNull();
    },
  );

  test('disabled between admission and charge: the charge refuses, UNKNOWN_USERNAME "is disabled", and takes nothing', async () => {
    await store.accounts.putAccount({ username: key('dora'), credits: 5 });
    const a = accounts();
    const who = await a.admit('dora', HOME);
    await store.accounts.setEnabled(key('dora'), false);
    const r = await refusal(a.charge(who));
    expect(r?.code).toBe('UNKNOWN_USERNAME');
    expect(r?.message).toMatch(/^Your username is incorrect or not allowed here: .*dora.* is disabled$/);
    expect((await store.accounts.getAccount(key('dora')))?.credits).toBe(5);
  });
});

describe('allow-lists', () => {
  test('an address inside a listed CIDR is admitted; one outside is UNKNOWN_USERNAME naming the address', async () => {
    await store.accounts.putAccount({ username: key('bob'), allow: ['203.0.113.0/24', '2001:db8::/32'] });
    const a = accounts({ policy: 'registered' });
    expect(await refusal(a.admit('bob', HOME))).toBeNull();
    expect(await refusal(a.admit('bob', { address: '2001:db8::1' }))).toBeNull();
    const r = await refusal(a.admit('bob', AWAY));
    expect(r?.code).toBe('UNKNOWN_USERNAME');
    expect(r?.message).toMatch(
      /^Your username is incorrect or not allowed here: .*bob.* may not be used from .*198\.51\.100\.1/,
    );
  });

  test('no allow-list: anywhere', async () => {
    await store.accounts.putAccount({ username: key('alice') });
    const a = accounts({ policy: 'registered' });
    expect(await refusal(a.admit('alice', AWAY))).toBeNull();
    expect(await refusal(a.admit('alice', HOME))).toBeNull();
  });
});

describe('unknown usernames', () => {
  test('USERNAME_POLICY=registered: "Your username is incorrect", naming the username; any: admitted without an account', async () => {
    const r = await refusal(accounts({ policy: 'registered' }).admit('nobody', HOME));
    expect(r?.code).toBe('UNKNOWN_USERNAME');
    expect(r?.message).toMatch(/^Your username is incorrect: .*nobody.* is not registered/);
    expect(await accounts({ policy: 'any' }).admit('nobody', HOME)).toEqual({
      username: 'nobody',
      key: key('nobody'),
      account: null,
    });
  });

  test('removed between admission and charge: registered refuses with UNKNOWN_USERNAME, any serves it unmetered', async () => {
    await store.accounts.putAccount({ username: key('gone'), credits: 5 });
    const reg = accounts({ policy: 'registered' });
    const any = accounts({ policy: 'any' });
    const w1 = await reg.admit('gone', HOME);
    const w2 = await any.admit('gone', HOME);
    await store.accounts.removeAccount(key('gone'));
    const r = await refusal(reg.charge(w1));
    expect(r?.code).toBe('UNKNOWN_USERNAME');
    expect(r?.message).toMatch(/^Your username is incorrect: .*gone.* is not registered/);
    expect(await refusal(any.charge(w2))).toBeNull();
  });
});

describe('credits', () => {
  test('an exhausted balance is OUT_OF_CREDIT ("Out of credit", no Retry-After) before the rate limit is asked', async () => {
    await store.accounts.putAccount({ username: key('broke'), credits: 0 });
    const a = accounts({ rateLimit: 10 });
    const r = await refusal(a.admit('broke', HOME));
    expect(r).toMatchObject({ code: 'OUT_OF_CREDIT', retryAfter: undefined });
    expect(r?.message).toMatch(/^Out of credit: .*broke/);
    expect(limiter.calls).toEqual([]);
  });

  test('the store refusing the charge for credits is OUT_OF_CREDIT too', async () => {
    await store.accounts.putAccount({ username: key('one'), credits: 1 });
    const a = accounts();
    const w = await a.admit('one', HOME);
    await a.charge(w);
    const r = await refusal(a.charge(w));
    expect(r).toMatchObject({ code: 'OUT_OF_CREDIT', retryAfter: undefined });
    expect(r?.message).toMatch(/^Out of credit/);
  });

  test('an account with neither credits nor a daily limit is not charged in the store', async () => {
    await store.accounts.putAccount({ username: key('free') });
    const a = accounts();
    for (let i = 0; i < 3; i++) await a.charge(await a.admit('free', HOME));
    expect(store.charges).toBe(0);
    await a.charge(await a.admit('nobody', HOME));
    expect(store.charges).toBe(0);
  });
});

describe('daily limit', () => {
  test('after N successful lookups, DAILY_LIMIT_REACHED with Retry-After to midnight UTC, before the rate limit is asked', async () => {
    await store.accounts.putAccount({ username: key('daily'), dailyLimit: 2 });
    const a = accounts({ rateLimit: 10 });
    for (let i = 0; i < 2; i++) await a.charge(await a.admit('daily', HOME));
    expect(limiter.calls).toHaveLength(2);
    const r = await refusal(a.admit('daily', HOME));
    expect(r).toMatchObject({ code: 'DAILY_LIMIT_REACHED', retryAfter: 43_200 });
    expect(r?.message).toMatch(/^Daily limit reached: .*daily.* in 43200 s$/);
    expect(limiter.calls).toHaveLength(2);
  });

  test('a limit counts the whole UTC day: the next day the username is admitted again', async () => {
    await store.accounts.putAccount({ username: key('daily'), dailyLimit: 1 });
    const a = accounts();
    await a.charge(await a.admit('daily', HOME));
    expect((await refusal(a.admit('daily', HOME)))?.code).toBe('DAILY_LIMIT_REACHED');
    // 23:59:59.500: still the same day, 1 s to midnight.
    now = Date.UTC(2026, 10, 23, 23, 59, 59, 500);
    expect(await refusal(a.admit('daily', HOME))).toMatchObject({ code: 'DAILY_LIMIT_REACHED', retryAfter: 1 });
    now = Date.UTC(2026, 10, 24, 0, 0, 0, 0);
    expect(await refusal(a.admit('daily', HOME))).toBeNull();
  });

  test('the store refusing the charge for the day is DAILY_LIMIT_REACHED, and the next admission is refused too', async () => {
    await store.accounts.putAccount({ username: key('daily'), dailyLimit: 1 });
    const a = accounts();
    const w1 = await a.admit('daily', HOME);
    const w2 = await a.admit('daily', HOME);
    await a.charge(w1);
    // w2 was admitted before the day was used up (two lookups in flight): the store refuses it.
    const r = await refusal(a.charge(w2));
    expect(r).toMatchObject({ code: 'DAILY_LIMIT_REACHED', retryAfter: 43_200 });
    expect((await refusal(a.admit('daily', HOME)))?.code).toBe('DAILY_LIMIT_REACHED');
  });

  test('a changed limit is seen: raised, the username is admitted again the same day', async () => {
    await store.accounts.putAccount({ username: key('daily'), dailyLimit: 1 });
    const a = accounts();
    await a.charge(await a.admit('daily', HOME));
    expect((await refusal(a.admit('daily', HOME)))?.code).toBe('DAILY_LIMIT_REACHED');
    await store.accounts.putAccount({ username: key('daily'), dailyLimit: 2 });
    later();
    expect(await refusal(a.admit('daily', HOME))).toBeNull();
  });

  test('several usernames that used up their day are each refused before the rate limit is asked', async () => {
    await store.accounts.putAccount({ username: key('d1'), dailyLimit: 1 });
    await store.accounts.putAccount({ username: key('d2'), dailyLimit: 1 });
    const a = accounts({ rateLimit: 10 });
    await a.charge(await a.admit('d1', HOME));
    await a.charge(await a.admit('d2', HOME));
    const asked = limiter.calls.length;
    expect((await refusal(a.admit('d1', HOME)))?.code).toBe('DAILY_LIMIT_REACHED');
    expect((await refusal(a.admit('d2', HOME)))?.code).toBe('DAILY_LIMIT_REACHED');
    expect(limiter.calls.length).toBe(asked);
  });

  test('a lookup short of the limit does not refuse the next one', async () => {
    await store.accounts.putAccount({ username: key('daily'), dailyLimit: 3 });
    const a = accounts();
    await a.charge(await a.admit('daily', HOME));
    await a.charge(await a.admit('daily', HOME));
    expect(await refusal(a.admit('daily', HOME))).toBeNull();
  });
});

describe('the rate', () => {
  test("RATE_LIMIT applies to a username without an account and to an account without its own rate; an account's --rate replaces it", async () => {
    await store.accounts.putAccount({ username: key('plain') });
    await store.accounts.putAccount({ username: key('fast'), rate: 50 });
    await store.accounts.putAccount({ username: key('free'), rate: 0 });
    const a = accounts({ rateLimit: 10 });
    await a.admit('nobody', HOME);
    await a.admit('plain', HOME);
    await a.admit('fast', HOME);
    await a.admit('free', HOME);
    expect(limiter.calls).toEqual([
      [key('nobody'), 10],
      [key('plain'), 10],
      [key('fast'), 50],
    ]);
  });

  test('RATE_LIMIT=0: only accounts with their own rate are limited', async () => {
    await store.accounts.putAccount({ username: key('slow'), rate: 0.5 });
    const a = accounts({ rateLimit: 0 });
    await a.admit('nobody', HOME);
    await a.admit('slow', HOME);
    expect(limiter.calls).toEqual([[key('slow'), 0.5]]);
  });

  test('without a limiter nothing is limited', async () => {
    const a = accounts({ rateLimit: 10 }, false);
    expect(await refusal(a.admit('nobody', HOME))).toBeNull();
  });

  test("over the rate: RATE_LIMITED with the limiter's Retry-After, the message saying when to retry", async () => {
    limiter.answer = { retryAfter: 3, unavailable: false };
    const r = await refusal(accounts({ rateLimit: 1 }).admit('alice', HOME));
    expect(r).toMatchObject({ code: 'RATE_LIMITED', retryAfter: 3 });
    expect(r?.message).toMatch(/^Too many requests for username .*alice.*; retry in 3 s$/);
  });

  test('the shared limit unreachable under deny: RATE_LIMITED, Retry-After 1, the message saying it cannot be checked', async () => {
    limiter.answer = { retryAfter: 1, unavailable: true };
    const r = await refusal(accounts({ rateLimit: 1 }).admit('alice', HOME));
    expect(r).toMatchObject({ code: 'RATE_LIMITED', retryAfter: 1 });
    expect(r?.message).toMatch(/^The rate limit for username .*alice.* cannot be checked right now; retry in 1 s$/);
  });
});

describe('usage records', () => {
  test('registered usernames only, with the UTC day, the operation and whether it was found', async () => {
    await store.accounts.putAccount({ username: key('alice') });
    const a = accounts();
    a.record(await a.admit('alice', HOME), 'Check', true);
    a.record(await a.admit('alice', HOME), 'UKMOT', false);
    a.record(await a.admit('nobody', HOME), 'Check', true);
    expect(usage.records).toEqual([
      [key('alice'), '2026-11-23', 'Check', true],
      [key('alice'), '2026-11-23', 'UKMOT', false],
    ]);
  });

  test('without a recorder nothing fails', async () => {
    await store.accounts.putAccount({ username: key('alice') });
    const a = new Accounts(store, { policy: 'any', rateLimit: 0 });
    const who = await a.admit('alice', HOME);
    expect(who.account?.username).toBe(key('alice'));
    expect(() => a.record(who, 'Check', true)).not.toThrow();
  });
});
