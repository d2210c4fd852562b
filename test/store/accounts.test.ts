// The AccountStore contract (src/store/accounts.ts), as behaviour: one suite that any store must
// pass. SQLite runs it here on a file, with a second handle on the same file standing in for a second
// process; PostgreSQL in a schema of its own on the machine's server, with two stores (two pools)
// standing in for two processes.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AccountStore } from '../../src/store/accounts';
import { PostgresStore } from '../../src/store/postgres';
import { SqliteStore } from '../../src/store/sqlite';
import { testSchema, type StoreName } from '../helpers/postgres';
import { describeStores } from '../helpers/stores';

interface Opened {
  /** Two handles on one database: as two processes would hold it. */
  readonly a: AccountStore;
  readonly b: AccountStore;
  close(): Promise<void>;
}

const STORES: Record<StoreName, () => Promise<Opened>> = {
  postgres: async () => {
    const schema = testSchema();
    const a = new PostgresStore(schema.url);
    await a.migrate();
    const b = new PostgresStore(schema.url);
    return {
      a: a.accounts,
      b: b.accounts,
      close: async () => {
        await a.close();
        await b.close();
        await schema.drop();
      },
    };
  },
  sqlite: async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-accounts-'));
    const file = path.join(dir, 'a.db');
    const a = new SqliteStore(file);
    const b = new SqliteStore(file);
    return {
      a: a.accounts,
      b: b.accounts,
      close: async () => {
        await a.close();
        await b.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

describeStores('AccountStore: %s', (kind) => {
  let s: Opened;
  beforeEach(async () => {
    s = await STORES[kind.name]();
  });
  afterEach(() => s.close());

  test('a new account takes the defaults; add refuses an existing name; put changes only the fields given', async () => {
    expect(await s.a.addAccount({ username: 'ann' })).toBe(true);
    expect(await s.a.getAccount('ann')).toEqual({
      username: 'ann',
      // docs/callers.md: an account added without a name is named caller- and the key's first 12 characters.
      name: 'caller-ann',
      prefix: '',
      keyUntil: null,
      weak: null,
      credits: null,
      dailyLimit: null,
      rate: null,
      allow: [],
      enabled: true,
    });
    expect(await s.a.addAccount({ username: 'ann', credits: 5 })).toBe(false);
    expect((await s.a.getAccount('ann'))?.credits).toBeNull();
    await s.a.putAccount({ username: 'ann', credits: 5, allow: ['10.0.0.0/8', '::1'] });
    await s.a.putAccount({ username: 'ann', rate: 2.5 });
    expect(await s.b.getAccount('ann')).toEqual({
      username: 'ann',
      name: 'caller-ann',
      prefix: '',
      keyUntil: null,
      weak: null,
      credits: 5,
      dailyLimit: null,
      rate: 2.5,
      allow: ['10.0.0.0/8', '::1'],
      enabled: true,
    });
    expect(await s.a.getAccount('nobody')).toBeNull();
  });

  test("an account is found by its name; a name is one account's only", async () => {
    expect(await s.a.addAccount({ username: 'k1', name: 'acme', prefix: 'ab' })).toBe(true);
    expect(await s.a.addAccount({ username: 'k2', name: 'acme' })).toBe(false);
    expect(await s.b.getAccountByName('acme')).toMatchObject({ username: 'k1', name: 'acme', prefix: 'ab' });
    expect(await s.b.getAccountByName('k1')).toBeNull();
    expect(await s.b.getAccount('k2')).toBeNull();
  });

  test('rotateKey: both keys find the one account until the old one ends; its credits are shared; remove takes both', async () => {
    await s.a.addAccount({ username: 'old', name: 'rot', prefix: 'ol', credits: 3 });
    expect(await s.a.rotateKey('old', 'new', 'ne', 5_000)).toBe(true);
    expect(await s.b.getAccount('new')).toMatchObject({ username: 'old', name: 'rot', prefix: 'ne', keyUntil: null });
    expect(await s.b.getAccount('old')).toMatchObject({ username: 'old', keyUntil: 5_000 });
    // A second rotation: the first new key ends then too, never later than it was given.
    expect(await s.a.rotateKey('old', 'newer', 'nr', 9_000)).toBe(true);
    expect(await s.b.getAccount('new')).toMatchObject({ username: 'old', keyUntil: 9_000 });
    expect(await s.b.getAccount('old')).toMatchObject({ keyUntil: 5_000 });
    expect(await s.b.getAccount('newer')).toMatchObject({ keyUntil: null, prefix: 'nr' });
    // A key already taken, or an unknown account: nothing changes.
    expect(await s.a.rotateKey('old', 'new', 'x', 1)).toBe(false);
    expect(await s.a.rotateKey('nobody', 'fresh', 'x', 1)).toBe(false);
    expect(await s.a.charge('old', '2026-03-01')).toMatchObject({ ok: true, credits: 2 });
    expect(await s.b.getAccount('newer')).toMatchObject({ credits: 2 });
    expect(await s.a.removeAccount('old')).toBe(true);
    expect(await s.b.getAccount('newer')).toBeNull();
    expect(await s.b.getAccount('new')).toBeNull();
  });

  test('update returns the account as stored, or null for an unknown name', async () => {
    await s.a.addAccount({ username: 'ben', credits: 3 });
    expect(await s.a.updateAccount('ben', { rate: 0, allow: [] }, '2026-03-01')).toMatchObject({
      credits: 3,
      rate: 0,
      allow: [],
    });
    expect(await s.a.updateAccount('nobody', { credits: 1 }, '2026-03-01')).toBeNull();
  });

  test('credits: added, taken away never below 0, refused for unlimited and unknown accounts', async () => {
    await s.a.addAccount({ username: 'cal', credits: 10 });
    await s.a.addAccount({ username: 'free' });
    expect(await s.a.addCredits('cal', 5)).toEqual({ balance: 15 });
    expect(await s.b.addCredits('cal', -20)).toEqual({ balance: 0 });
    expect(await s.a.addCredits('free', 5)).toBe('unlimited');
    expect(await s.a.addCredits('nobody', 5)).toBe('unknown');
  });

  test('charge: exactly the balance succeeds under concurrency from two handles, and never below 0', async () => {
    await s.a.addAccount({ username: 'dee', credits: 30 });
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => (i % 2 ? s.a : s.b).charge('dee', '2026-03-01')),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(30);
    expect(results.filter((r) => !r.ok && r.reason === 'credits')).toHaveLength(70);
    expect((await s.a.getAccount('dee'))?.credits).toBe(0);
  });

  test('charges asked at once for several accounts: each caller gets its own answer, in the order asked, and the usage of each granted one', async () => {
    await s.a.addAccount({ username: 'fay', credits: 2 });
    await s.a.addAccount({ username: 'gus', dailyLimit: 1 });
    await s.a.addAccount({ username: 'hal', credits: 5, enabled: false });
    const asked: [string, string][] = [
      ['fay', 'Check'],
      ['gus', 'CheckUSA'],
      ['fay', 'Check'],
      ['hal', 'Check'],
      ['gus', 'CheckUSA'],
      ['ivy', 'Check'],
      ['fay', 'UKMOT'],
    ];
    const results = await Promise.all(asked.map(([u, op]) => s.a.charge(u, '2026-03-01', op)));
    expect(results).toEqual([
      { ok: true, credits: 1, usedToday: 1 },
      { ok: true, credits: null, usedToday: 1 },
      { ok: true, credits: 0, usedToday: 2 },
      { ok: false, reason: 'disabled' },
      { ok: false, reason: 'daily' },
      { ok: false, reason: 'unknown' },
      { ok: false, reason: 'credits' },
    ]);
    expect(await s.b.usage('fay', '2026-03-01')).toEqual([
      { username: 'fay', day: '2026-03-01', operation: 'Check', found: 2, notFound: 0 },
    ]);
    expect(await s.b.usage('gus', '2026-03-01')).toEqual([
      { username: 'gus', day: '2026-03-01', operation: 'CheckUSA', found: 1, notFound: 0 },
    ]);
    expect(await s.b.usage('hal', '2026-03-01')).toEqual([]);
  });

  test('charge: the daily limit per day, counted from 1 on a new day, and the reasons in order', async () => {
    await s.a.addAccount({ username: 'eve', dailyLimit: 2, credits: 10 });
    expect(await s.a.charge('eve', '2026-03-01')).toEqual({ ok: true, credits: 9, usedToday: 1 });
    expect(await s.b.charge('eve', '2026-03-01')).toEqual({ ok: true, credits: 8, usedToday: 2 });
    expect(await s.a.charge('eve', '2026-03-01')).toEqual({ ok: false, reason: 'daily' });
    expect(await s.a.charge('eve', '2026-03-02')).toEqual({ ok: true, credits: 7, usedToday: 1 });
    expect(await s.a.setEnabled('eve', false)).toBe(true);
    expect(await s.a.charge('eve', '2026-03-03')).toEqual({ ok: false, reason: 'disabled' });
    expect(await s.a.charge('nobody', '2026-03-03')).toEqual({ ok: false, reason: 'unknown' });
    expect((await s.a.getAccount('eve'))?.credits).toBe(7);
  });

  test('a daily limit set during a day counts the usage already recorded that day', async () => {
    await s.a.addAccount({ username: 'fay' });
    await s.a.addUsage([{ username: 'fay', day: '2026-03-01', operation: 'Check', found: 4, notFound: 9 }]);
    await s.a.updateAccount('fay', { dailyLimit: 5 }, '2026-03-01');
    expect(await s.a.charge('fay', '2026-03-01')).toMatchObject({ ok: true, usedToday: 5 });
    expect(await s.a.charge('fay', '2026-03-01')).toEqual({ ok: false, reason: 'daily' });
  });

  test('usage: counts add up across handles, newest day first, pruned by day, removed with the account', async () => {
    await s.a.addAccount({ username: 'gus' });
    await s.a.addUsage([
      { username: 'gus', day: '2026-03-01', operation: 'Check', found: 1, notFound: 2 },
      { username: 'gus', day: '2026-03-02', operation: 'UKMOT', found: 3, notFound: 0 },
    ]);
    await s.b.addUsage([{ username: 'gus', day: '2026-03-01', operation: 'Check', found: 10, notFound: 20 }]);
    expect(await s.a.usage('gus', '2026-03-01')).toEqual([
      { username: 'gus', day: '2026-03-02', operation: 'UKMOT', found: 3, notFound: 0 },
      { username: 'gus', day: '2026-03-01', operation: 'Check', found: 11, notFound: 22 },
    ]);
    expect(await s.a.usage('gus', '2026-03-02')).toHaveLength(1);
    expect((await s.a.listAccounts('2026-03-02')).find((x) => x.username === 'gus')?.usedToday).toBe(3);
    expect(await s.a.pruneUsage('2026-03-02')).toBe(1);
    expect(await s.a.usage('gus', '2000-01-01')).toHaveLength(1);
    expect(await s.a.removeAccount('gus')).toBe(true);
    expect(await s.a.removeAccount('gus')).toBe(false);
    await s.a.addAccount({ username: 'gus' });
    expect(await s.a.usage('gus', '2000-01-01')).toEqual([]);
  });

  test('enabled and the allow-list read back as written: by add, put, update and enable/disable; an unknown name is false', async () => {
    expect(await s.a.addAccount({ username: 'ida', enabled: false, allow: ['10.0.0.0/8', '192.0.2.1'] })).toBe(true);
    expect(await s.b.getAccount('ida')).toEqual({
      username: 'ida',
      name: 'caller-ida',
      prefix: '',
      keyUntil: null,
      weak: null,
      credits: null,
      dailyLimit: null,
      rate: null,
      allow: ['10.0.0.0/8', '192.0.2.1'],
      enabled: false,
    });
    await s.a.putAccount({ username: 'ida', enabled: true });
    expect((await s.b.getAccount('ida'))?.enabled).toBe(true);
    expect(await s.a.updateAccount('ida', { enabled: false }, '2026-03-01')).toMatchObject({
      enabled: false,
      allow: ['10.0.0.0/8', '192.0.2.1'],
    });
    expect((await s.b.getAccount('ida'))?.enabled).toBe(false);
    expect(await s.a.setEnabled('ida', true)).toBe(true);
    expect((await s.b.getAccount('ida'))?.enabled).toBe(true);
    expect(await s.a.setEnabled('ida', false)).toBe(true);
    expect((await s.b.getAccount('ida'))?.enabled).toBe(false);
    expect(await s.a.setEnabled('nobody', true)).toBe(false);
    expect(await s.a.getAccount('nobody')).toBeNull();
    // No fields to change: the account as it was.
    const before = await s.a.getAccount('ida');
    await s.a.putAccount({ username: 'ida' });
    expect(await s.a.updateAccount('ida', {}, '2026-03-01')).toEqual(before);
    expect(await s.b.getAccount('ida')).toEqual(before);
  });

  test("a daily limit set after the day's first charges counts them (usage not yet written)", async () => {
    await s.a.addAccount({ username: 'joe', credits: 10 });
    expect(await s.a.charge('joe', '2026-03-01')).toMatchObject({ ok: true, usedToday: 1 });
    expect(await s.a.charge('joe', '2026-03-01')).toMatchObject({ ok: true, usedToday: 2 });
    await s.a.updateAccount('joe', { dailyLimit: 3 }, '2026-03-01');
    expect(await s.a.charge('joe', '2026-03-01')).toEqual({ ok: true, credits: 7, usedToday: 3 });
    expect(await s.a.charge('joe', '2026-03-01')).toEqual({ ok: false, reason: 'daily' });
  });

  test('used today: those charged on the day or those found as far as usage is written, whichever is more', async () => {
    // Unlimited and without a daily limit: not charged per lookup, counted by its usage only.
    await s.a.addAccount({ username: 'kim' });
    await s.a.addUsage([{ username: 'kim', day: '2026-03-01', operation: 'Check', found: 4, notFound: 1 }]);
    // Given credits during the day: charged from then on (one charge, not yet in usage).
    await s.a.updateAccount('kim', { credits: 10, rate: 1 }, '2026-03-01');
    expect(await s.a.charge('kim', '2026-03-01')).toMatchObject({ ok: true, credits: 9 });
    expect((await s.b.listAccounts('2026-03-01')).find((x) => x.username === 'kim')?.usedToday).toBe(4);
    await s.a.addUsage([{ username: 'kim', day: '2026-03-01', operation: 'Check', found: 1, notFound: 0 }]);
    expect((await s.b.listAccounts('2026-03-01')).find((x) => x.username === 'kim')?.usedToday).toBe(5);
  });

  test('usage of one day comes by operation, in code-point order', async () => {
    await s.a.addAccount({ username: 'lou' });
    await s.a.addUsage([
      { username: 'lou', day: '2026-03-01', operation: 'UKMOT', found: 1, notFound: 0 },
      { username: 'lou', day: '2026-03-01', operation: 'CheckUSA', found: 2, notFound: 0 },
      { username: 'lou', day: '2026-03-01', operation: 'Check', found: 3, notFound: 0 },
    ]);
    expect((await s.a.usage('lou', '2026-03-01')).map((u) => u.operation)).toEqual(['Check', 'CheckUSA', 'UKMOT']);
  });

  test('put and update change only the fields given, on an account with every field set', async () => {
    const all = {
      username: 'max',
      name: 'Max Ltd',
      prefix: 'max-li',
      keyUntil: null,
      weak: null,
      credits: 9,
      dailyLimit: 5,
      rate: 2,
      allow: ['203.0.113.0/24', '2001:db8::/32'],
      enabled: false,
    };
    await s.a.addAccount(all);
    expect(await s.b.getAccount('max')).toEqual(all);
    await s.a.putAccount({ username: 'max', rate: 3 });
    expect(await s.b.getAccount('max')).toEqual({ ...all, rate: 3 });
    expect(await s.a.updateAccount('max', { credits: 4 }, '2026-03-01')).toEqual({ ...all, rate: 3, credits: 4 });
    expect(await s.a.updateAccount('max', { allow: ['192.0.2.1', '::1'] }, '2026-03-01')).toEqual({
      ...all,
      rate: 3,
      credits: 4,
      allow: ['192.0.2.1', '::1'],
    });
    expect(await s.b.getAccount('max')).toEqual({ ...all, rate: 3, credits: 4, allow: ['192.0.2.1', '::1'] });
  });

  test('an account with unlimited credits and a daily limit is charged against the limit only, its credits staying unlimited', async () => {
    await s.a.addAccount({ username: 'ned', dailyLimit: 1 });
    expect(await s.a.charge('ned', '2026-03-01')).toEqual({ ok: true, credits: null, usedToday: 1 });
    expect(await s.a.charge('ned', '2026-03-01')).toEqual({ ok: false, reason: 'daily' });
    expect((await s.b.getAccount('ned'))?.credits).toBeNull();
  });

  test('list: every account by name, with what it used on the day asked', async () => {
    await s.a.addAccount({ username: 'zed', credits: 2 });
    await s.a.addAccount({ username: 'amy', dailyLimit: 3 });
    await s.a.charge('amy', '2026-03-01');
    const list = await s.b.listAccounts('2026-03-01');
    expect(list.map((x) => [x.username, x.usedToday])).toEqual([
      ['amy', 1],
      ['zed', 0],
    ]);
    expect((await s.b.listAccounts('2026-03-02')).map((x) => x.usedToday)).toEqual([0, 0]);
  });
});
