// One behavioural suite for every store: what the service relies on a store for, run against
// SQLite and PostgreSQL alike.

import { Readable } from 'node:stream';
import { importStream } from '../../src/data/import';
import type { VehicleStore } from '../../src/store/store';
import { SAMPLE } from '../helpers/sample';
import { describeStores, open } from '../helpers/stores';

describeStores('%s store', (kind) => {
  let url: string;
  let store: VehicleStore;
  beforeEach(() => {
    url = kind.url();
    store = open(url);
  });
  afterEach(() => store.close());

  test('records with the same key replace each other; keys differ by operation and state', async () => {
    expect(await store.isEmpty()).toBe(true);
    const batch = await store.beginImport();
    await batch.put({ operation: 'CheckUSA', registration: 'A1', state: 'CA', payload: '{"n":1}' });
    await batch.put({ operation: 'CheckUSA', registration: 'A1', state: 'NY', payload: '{"n":2}' });
    await batch.put({ operation: 'Check', registration: 'A1', state: '', payload: '{"n":3}' });
    await batch.put({ operation: 'CheckUSA', registration: 'A1', state: 'CA', payload: '{"n":4}' });
    await batch.commit();
    expect(await store.count()).toBe(3);
    expect(await store.isEmpty()).toBe(false);
    expect(await store.get({ operation: 'CheckUSA', registration: 'A1', state: 'CA' })).toEqual({ payload: '{"n":4}' });
    expect(await store.get({ operation: 'CheckUSA', registration: 'A1', state: 'TX' })).toBeNull();
    expect(await store.get({ operation: 'CheckCanada', registration: 'A1', state: 'CA' })).toBeNull();
  });

  test("the latest import's result is kept for every instance, and a later one replaces it", async () => {
    expect(await store.lastImport()).toBeNull();
    await store.noteImport({ at: 1_800_000_000_000, committed: false });
    // Another connection (another instance, or the serving process after a `reglookup import`) reads it.
    const other = open(url);
    try {
      expect(await other.lastImport()).toEqual({ at: 1_800_000_000_000, committed: false });
      await store.noteImport({ at: 1_800_000_060_000, committed: true });
      expect(await other.lastImport()).toEqual({ at: 1_800_000_060_000, committed: true });
    } finally {
      await other.close();
    }
  });

  test('many lookups at once, found, missing and repeated, each get their own answer', async () => {
    const batch = await store.beginImport();
    for (let i = 0; i < 50; i++)
      await batch.put({ operation: 'Check', registration: `M${i}`, state: '', payload: `{"i":${i}}` });
    await batch.commit();
    const keys = Array.from({ length: 120 }, (_, j) => ({
      operation: 'Check',
      registration: `M${(j * 7) % 60}`,
      state: '',
    }));
    const found = await Promise.all(keys.map((k) => store.get(k)));
    found.forEach((f, j) => {
      const i = (j * 7) % 60;
      expect(f?.payload ?? null).toBe(i < 50 ? `{"i":${i}}` : null);
    });
  });

  test('text comes back byte for byte: tabs, newlines, backslashes, quotes, CJK, emoji', async () => {
    const payload = JSON.stringify({ Description: 'tab\there\nline\\back "q" \u4eac A12345 \u{1F697}' }) + '\t\\N\r\n';
    const batch = await store.beginImport();
    await batch.put({ operation: 'CheckChina', registration: '\u4eacA12345', state: '', payload });
    await batch.commit();
    expect(await store.get({ operation: 'CheckChina', registration: '\u4eacA12345', state: '' })).toEqual({ payload });
  });

  test('another instance on the same store sees none of an import until it commits, then all of it', async () => {
    const other = open(url);
    try {
      const before = await store.beginImport();
      await before.put({ operation: 'Check', registration: 'OLD', state: '', payload: '{"v":0}' });
      await before.commit();
      const batch = await store.beginImport();
      await batch.put({ operation: 'Check', registration: 'OLD', state: '', payload: '{"v":1}' });
      await batch.put({ operation: 'Check', registration: 'NEW', state: '', payload: '{"v":1}' });
      expect(await other.get({ operation: 'Check', registration: 'NEW', state: '' })).toBeNull();
      expect((await other.get({ operation: 'Check', registration: 'OLD', state: '' }))?.payload).toBe('{"v":0}');
      await batch.commit();
      await new Promise((r) => setImmediate(r)); // SQLite: another connection's commit is seen from the next turn
      expect((await other.get({ operation: 'Check', registration: 'NEW', state: '' }))?.payload).toBe('{"v":1}');
      expect((await other.get({ operation: 'Check', registration: 'OLD', state: '' }))?.payload).toBe('{"v":1}');
    } finally {
      await other.close();
    }
  });

  test('a rolled-back import leaves nothing; a later one goes through', async () => {
    const batch = await store.beginImport();
    await batch.put({ operation: 'Check', registration: 'R1', state: '', payload: '{}' });
    await batch.rollback();
    expect(await store.isEmpty()).toBe(true);
    const again = await store.beginImport();
    await again.put({ operation: 'Check', registration: 'R2', state: '', payload: '{}' });
    await again.commit();
    expect(await store.count()).toBe(1);
  });

  test('a batch that has ended refuses puts, deletes and replaceOperation; commit and rollback again do nothing', async () => {
    const key = { operation: 'Check', registration: 'END1', state: '' };
    const committed = await store.beginImport();
    await committed.put({ ...key, payload: '{"v":1}' }, true);
    await committed.commit();
    const rolledBack = await store.beginImport();
    await rolledBack.put({ ...key, payload: '{"v":2}' });
    await rolledBack.rollback();
    for (const batch of [committed, rolledBack]) {
      await expect(batch.put({ ...key, payload: '{"v":3}' }, true)).rejects.toThrow('this import has ended');
      await expect(
        batch.put({ operation: 'Check', registration: 'END2', state: '', payload: '{"v":3}' }),
      ).rejects.toThrow('this import has ended');
      await expect(batch.delete(key)).rejects.toThrow('this import has ended');
      await expect(batch.replaceOperation('Check')).rejects.toThrow('this import has ended');
      await batch.commit();
      await batch.rollback();
    }
    expect(await store.get(key)).toEqual({ payload: '{"v":1}' });
    expect(await store.count()).toBe(1);
    // The store is free for the next import.
    const next = await store.beginImport();
    await next.put({ ...key, payload: '{"v":4}' });
    await next.commit();
    expect(await store.get(key)).toEqual({ payload: '{"v":4}' });
  });

  test('one import at a time on a store object: a second while one is open is refused, and can begin once it ends', async () => {
    const first = await store.beginImport();
    await expect(store.beginImport()).rejects.toThrow('an import is already running on this store');
    await first.put({ operation: 'Check', registration: 'ONE1', state: '', payload: '{}' });
    await first.commit();
    const second = await store.beginImport();
    await second.put({ operation: 'Check', registration: 'TWO1', state: '', payload: '{}' });
    await second.commit();
    expect(await store.count()).toBe(2);
  });

  test('the bundled sample file imports whole, and a file with one bad line imports nothing', async () => {
    const text = SAMPLE.map((r) => JSON.stringify(r)).join('\n') + '\n';
    const report = await importStream(store, Readable.from([text]));
    expect(report.committed).toBe(true);
    expect(report.imported).toBe(SAMPLE.length);
    expect(await store.count()).toBe(SAMPLE.length);
    const bad = await importStream(
      store,
      Readable.from([
        '{"operation":"Check","registration":"NEW1","vehicle":{"Description":"x"}}\n{"operation":"Nope"}\n',
      ]),
    );
    expect(bad.committed).toBe(false);
    expect(await store.get({ operation: 'Check', registration: 'NEW1', state: '' })).toBeNull();
  });

  test('a record changed by another writer is read in its new form at once', async () => {
    const key = { operation: 'Check', registration: 'P1', state: '' };
    const text = '{"operation":"Check","registration":"P1","vehicle":{"Description":"one"}}\n';
    await importStream(store, Readable.from([text]));
    expect(await store.get(key)).toEqual({ payload: '{"Description":"one"}' });
    await kind.rawSetPayload(url, key, '{"Description":"two"}');
    await new Promise((r) => setImmediate(r)); // SQLite: another connection's commit is seen from the next turn
    expect(await store.get(key)).toEqual({ payload: '{"Description":"two"}' });
  });

  test('accounts: saved, listed in code-point order of their names, changed, removed', async () => {
    await store.accounts.putAccount({ username: 'bob', credits: 3 });
    await store.accounts.putAccount({ username: 'Alice', credits: null });
    await store.accounts.putAccount({ username: 'alice', credits: 0 });
    expect((await store.accounts.listAccounts('2026-01-01')).map((a) => [a.username, a.credits])).toEqual([
      ['Alice', null],
      ['alice', 0],
      ['bob', 3],
    ]);
    await store.accounts.putAccount({ username: 'bob', credits: 5_000_000_000 });
    expect((await store.accounts.getAccount('bob'))?.credits).toBe(5_000_000_000);
    expect(await store.accounts.removeAccount('bob')).toBe(true);
    expect(await store.accounts.removeAccount('bob')).toBe(false);
    expect(await store.accounts.getAccount('bob')).toBeNull();
  });

  test('credits: charged one at a time down to zero, never below; 200 charges at once for 50 credits get exactly 50', async () => {
    const day = '2026-01-01';
    await store.accounts.putAccount({ username: 'c', credits: 2 });
    expect(await store.accounts.charge('c', day)).toEqual({ ok: true, credits: 1, usedToday: 1 });
    expect(await store.accounts.charge('c', day)).toEqual({ ok: true, credits: 0, usedToday: 2 });
    expect(await store.accounts.charge('c', day)).toEqual({ ok: false, reason: 'credits' });
    expect((await store.accounts.getAccount('c'))?.credits).toBe(0);
    expect(await store.accounts.charge('nobody', day)).toEqual({ ok: false, reason: 'unknown' });

    await store.accounts.putAccount({ username: 'many', credits: 50 });
    const taken = await Promise.all(Array.from({ length: 200 }, () => store.accounts.charge('many', day)));
    expect(taken.filter((t) => t.ok)).toHaveLength(50);
    expect((await store.accounts.getAccount('many'))?.credits).toBe(0);
  });

  test('issue 30: 2,000 charges at once from two store objects (two instances) against 500 credits and a daily limit of 450: exactly 450, each counted in usage with its charge', async () => {
    const day = '2026-01-02';
    const other = open(url);
    try {
      await store.accounts.putAccount({ username: 'busy', credits: 500, dailyLimit: 450 });
      const ops = ['Check', 'CheckUSA'];
      const taken = await Promise.all(
        Array.from({ length: 2000 }, (_, i) =>
          (i % 2 ? store : other).accounts.charge('busy', day, ops[i % 3 === 0 ? 1 : 0]),
        ),
      );
      const granted = taken.filter((t) => t.ok);
      expect(granted).toHaveLength(450);
      expect(taken.filter((t) => !t.ok && t.reason === 'daily')).toHaveLength(1550);
      // Each granted charge reports its own place in the day: 1..450, each once.
      expect(granted.map((t) => (t.ok ? t.usedToday : 0)).sort((x, y) => x - y)).toEqual(
        Array.from({ length: 450 }, (_, i) => i + 1),
      );
      expect((await store.accounts.getAccount('busy'))?.credits).toBe(50);
      const usage = await store.accounts.usage('busy', day);
      expect(usage.reduce((n, u) => n + u.found, 0)).toBe(450);
      expect(usage.reduce((n, u) => n + u.notFound, 0)).toBe(0);
      // The next day the limit starts again; the 50 credits left are the cap now.
      const next = await Promise.all(
        Array.from({ length: 100 }, (_, i) => (i % 2 ? store : other).accounts.charge('busy', '2026-01-03')),
      );
      expect(next.filter((t) => t.ok)).toHaveLength(50);
      expect(next.filter((t) => !t.ok && t.reason === 'credits')).toHaveLength(50);
      await store.accounts.setEnabled('busy', false);
      expect(await other.accounts.charge('busy', '2026-01-03')).toEqual({ ok: false, reason: 'disabled' });
    } finally {
      await other.close();
    }
  });
});
