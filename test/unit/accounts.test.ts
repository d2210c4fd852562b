// Admission of callers as the README promises it: USERNAME_POLICY=registered; a change to the users
// seen within a second while each username's row is read at most once a second; credits. (Rate
// limits are held to the README against real servers in test/integration/callers.test.ts and
// shared-limit.test.ts.) The store is the real SQLite store, counted; only the clock is the test's.

import { createHash } from 'node:crypto';
import { Accounts } from '../../src/accounts/accounts';
import { LookupError } from '../../src/service/errors';
import { SqliteStore } from '../../src/store/sqlite';
import { claim } from '../helpers/readme';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

const CALLER = { address: '127.0.0.1' };

async function refusal(p: Promise<unknown>): Promise<{ code: string; retryAfter?: number } | null> {
  try {
    await p;
    return null;
  } catch (e) {
    if (!(e instanceof LookupError)) throw e;
    return { code: e.code, retryAfter: e.retryAfter };
  }
}

describe('usernames and credits', () => {
  class CountingStore extends SqliteStore {
    reads = 0;
    constructor(file: string) {
      super(file);
      const read = this.accounts.getAccount.bind(this.accounts);
      this.accounts.getAccount = (username) => {
        this.reads++;
        return read(username);
      };
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
    const any = new Accounts(store, { policy: 'any', rateLimit: 0 });
    expect(await refusal(any.admit('nobody', CALLER))).toBeNull();
    const registered = new Accounts(store, { policy: 'registered', rateLimit: 0 });
    expect((await refusal(registered.admit('nobody', CALLER)))?.code).toBe('UNKNOWN_USERNAME');
    await store.accounts.putAccount({ username: key('alice'), credits: null });
    now += 1000;
    expect(await refusal(registered.admit('alice', CALLER))).toBeNull();
  });

  test("a change to the users is seen within a second, and each username's row is read at most once a second", async () => {
    claim(/it reads each username's row at most once a second/);
    const accounts = new Accounts(store, { policy: 'registered', rateLimit: 0 });
    expect((await refusal(accounts.admit('alice', CALLER)))?.code).toBe('UNKNOWN_USERNAME');
    await store.accounts.putAccount({ username: key('alice'), credits: null });
    const readsBefore = store.reads;
    for (let i = 0; i < 20; i++) {
      now += 40;
      await refusal(accounts.admit('alice', CALLER));
    }
    // 800 ms later: at most the one read it made a second ago.
    expect(store.reads).toBe(readsBefore);
    now += 200;
    expect(await refusal(accounts.admit('alice', CALLER))).toBeNull();
    expect(store.reads).toBe(readsBefore + 1);
    await store.accounts.removeAccount(key('alice'));
    now += 1000;
    expect((await refusal(accounts.admit('alice', CALLER)))?.code).toBe('UNKNOWN_USERNAME');
  });

  test('a flood of distinct usernames within a second does not grow the cache without bound', async () => {
    // Memory stays bounded: past some thousands of usernames in one second the cache starts afresh,
    // which shows as a username read again within the second.
    const accounts = new Accounts(store, { policy: 'registered', rateLimit: 0 });
    await refusal(accounts.admit('alice', CALLER));
    const reads = store.reads;
    await refusal(accounts.admit('alice', CALLER));
    expect(store.reads).toBe(reads);
    for (let i = 0; i < 20_000; i++) await refusal(accounts.admit(`u${i}`, CALLER));
    const before = store.reads;
    await refusal(accounts.admit('alice', CALLER));
    expect(store.reads).toBe(before + 1);
  });

  test('credits: one per successful lookup, then OUT_OF_CREDIT with no Retry-After; unlimited accounts and unknown usernames are not charged', async () => {
    claim(/`OUT_OF_CREDIT`[^\n]*no `Retry-After`/);
    const accounts = new Accounts(store, { policy: 'any', rateLimit: 0 });
    await store.accounts.putAccount({ username: key('bob'), credits: 2 });
    await store.accounts.putAccount({ username: key('carol'), credits: null });
    const bob = await accounts.admit('bob', CALLER);
    await accounts.charge(bob);
    await accounts.charge(bob);
    expect((await store.accounts.getAccount(key('bob')))?.credits).toBe(0);
    const r = await refusal(accounts.charge(bob));
    expect(r?.code).toBe('OUT_OF_CREDIT');
    expect(r?.retryAfter).toBeUndefined();
    const carol = await accounts.admit('carol', CALLER);
    for (let i = 0; i < 3; i++) await accounts.charge(carol);
    expect((await store.accounts.getAccount(key('carol')))?.credits).toBeNull();
    await accounts.charge(await accounts.admit('dave', CALLER));
    expect(await store.accounts.getAccount(key('dave'))).toBeNull();
  });
});
