// The embedded store answers a lookup by index, whatever its size: no table scan.

import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteStore } from '../../src/store/sqlite';

test('a lookup is an index search on the whole key, not a scan, as the store runs it', async () => {
  // The plan of the store's own lookup statement (lookupPlan), not of a copy of its SQL.
  const store = new SqliteStore(':memory:');
  try {
    const plan = store.lookupPlan();
    expect(plan).toMatch(
      /\bSEARCH records USING (?:COVERING )?INDEX \w+ \(operation=\? AND registration=\? AND state=\?\)/,
    );
    expect(plan).not.toMatch(/\bSCAN\b/);
  } finally {
    await store.close();
  }
});

describe('lookups in one turn of the event loop share one read transaction', () => {
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
  let dir: string;
  let file: string;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-share-'));
    file = path.join(dir, 'share.db');
    const store = new SqliteStore(file);
    const batch = await store.beginImport();
    await batch.put({ operation: 'Check', registration: 'S1', state: '', payload: '{"v":1}' });
    await batch.commit();
    await store.close();
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test("another process's write is seen from the next turn on, and nothing is held open after it", async () => {
    const store = new SqliteStore(file);
    expect((await store.get({ operation: 'Check', registration: 'S1', state: '' }))?.payload).toBe('{"v":1}');
    const other = new Database(file);
    other.pragma('busy_timeout = 2000');
    other.prepare("UPDATE records SET payload = '{\"v\":2}' WHERE registration = 'S1'").run();
    await nextTurn();
    expect((await store.get({ operation: 'Check', registration: 'S1', state: '' }))?.payload).toBe('{"v":2}');
    await nextTurn();
    // With no read left open, a checkpoint can take the whole log back into the file.
    const ckpt = other.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    expect(ckpt[0].busy).toBe(0);
    other.close();
    await store.close();
  });

  test('a write in the same turn as a lookup (a credit, an import) goes through', async () => {
    const store = new SqliteStore(file);
    await store.accounts.putAccount({ username: 'c', credits: 2 });
    await nextTurn();
    expect(await store.get({ operation: 'Check', registration: 'S1', state: '' })).not.toBeNull();
    expect(await store.accounts.charge('c', '2026-01-01')).toMatchObject({ ok: true, credits: 1 });
    expect(await store.get({ operation: 'Check', registration: 'S1', state: '' })).not.toBeNull();
    const batch = await store.beginImport();
    await batch.put({ operation: 'Check', registration: 'S2', state: '', payload: '{"v":3}' });
    await batch.commit();
    expect((await store.get({ operation: 'Check', registration: 'S2', state: '' }))?.payload).toBe('{"v":3}');
    expect((await store.accounts.getAccount('c'))?.credits).toBe(1);
    await store.close();
  });
});

describe('backup: a consistent copy of the whole store (records, accounts, usage) while it serves', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-sqlite-backup-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('the copy opens as a store holding the same records, accounts and usage; progress counts pages done out of all', async () => {
    const store = new SqliteStore(path.join(dir, 'live.db'));
    const dest = path.join(dir, 'copy.db');
    try {
      const batch = await store.beginImport();
      for (let i = 0; i < 300; i++)
        await batch.put({
          operation: 'Check',
          registration: `B${i}`,
          state: '',
          payload: JSON.stringify({ Description: `car ${i}`, pad: 'x'.repeat(500) }),
        });
      await batch.commit();
      await store.accounts.putAccount({ username: 'bob', credits: 7, dailyLimit: 3 });
      await store.accounts.addUsage([
        { username: 'bob', day: '2026-11-23', operation: 'Check', found: 2, notFound: 1 },
      ]);
      // A lookup in the same turn: the backup is taken while the store serves.
      expect(await store.get({ operation: 'Check', registration: 'B1', state: '' })).not.toBeNull();
      const calls: [number, number][] = [];
      await store.backup(store.backupFiles(dest), (done, total) => calls.push([done, total]));
      // Reported between steps (better-sqlite3 reports before its first step too: nothing done yet).
      expect(calls.length).toBeGreaterThan(0);
      expect(calls[0][0]).toBe(0);
      for (const [done, total] of calls) {
        expect(total).toBeGreaterThan(1);
        expect(done).toBeGreaterThanOrEqual(0);
        expect(done).toBeLessThanOrEqual(total);
      }
    } finally {
      await store.close();
    }
    const copy = new SqliteStore(dest);
    try {
      expect(await copy.count()).toBe(300);
      expect(
        JSON.parse((await copy.get({ operation: 'Check', registration: 'B299', state: '' }))?.payload ?? '{}')
          .Description,
      ).toBe('car 299');
      expect(await copy.accounts.getAccount('bob')).toMatchObject({ credits: 7, dailyLimit: 3 });
      expect(await copy.accounts.usage('bob', '2026-11-01')).toEqual([
        { username: 'bob', day: '2026-11-23', operation: 'Check', found: 2, notFound: 1 },
      ]);
    } finally {
      await copy.close();
    }
  });

  test('without a progress callback too', async () => {
    const store = new SqliteStore(path.join(dir, 'live.db'));
    const dest = path.join(dir, 'copy.db');
    try {
      await store.accounts.putAccount({ username: 'ann', credits: 1 });
      await store.backup(store.backupFiles(dest));
    } finally {
      await store.close();
    }
    const copy = new SqliteStore(dest);
    try {
      expect((await copy.accounts.getAccount('ann'))?.credits).toBe(1);
    } finally {
      await copy.close();
    }
  });
});

describe('the one import batch of a store', () => {
  const key = { operation: 'Check', registration: 'ONE1', state: '' };

  test('a second import while one is open is refused, saying why, and so is migrate(); after the commit both go', async () => {
    const store = new SqliteStore(':memory:');
    try {
      const first = await store.beginImport();
      await expect(store.beginImport()).rejects.toThrow(/import/);
      await expect(store.migrate()).rejects.toThrow(/import/);
      await first.put({ ...key, payload: '{"v":1}' });
      await first.commit();
      const second = await store.beginImport();
      await second.put({ ...key, payload: '{"v":2}' });
      await second.commit();
      expect(await store.get(key)).toEqual({ payload: '{"v":2}' });
      await expect(store.migrate()).resolves.toMatchObject({ version: 7 });
    } finally {
      await store.close();
    }
  });

  test('an ended batch stays ended: rollback after commit, a second rollback, and commit after rollback change nothing', async () => {
    const store = new SqliteStore(':memory:');
    try {
      const sample = await store.beginImport({ sample: true });
      await sample.put({ ...key, payload: '{"v":1}' });
      await sample.commit();
      await expect(sample.rollback()).resolves.toBeUndefined();
      expect(await store.get(key)).toEqual({ payload: '{"v":1}' });
      expect(await store.holdsOnlySample()).toBe(true);

      const dropped = await store.beginImport();
      await dropped.put({ operation: 'Check', registration: 'TWO2', state: '', payload: '{"v":2}' });
      await dropped.rollback();
      await expect(dropped.rollback()).resolves.toBeUndefined();
      await expect(dropped.commit()).resolves.toBeUndefined();
      expect(await store.get({ operation: 'Check', registration: 'TWO2', state: '' })).toBeNull();
      expect(await store.count()).toBe(1);
      // The store still holds only the sample: nothing since has committed.
      expect(await store.holdsOnlySample()).toBe(true);
      const next = await store.beginImport();
      await next.commit();
      expect(await store.holdsOnlySample()).toBe(false);
    } finally {
      await store.close();
    }
  });

  test('a lookup on the store while its own import is open answers from the records the import has not touched', async () => {
    const store = new SqliteStore(':memory:');
    try {
      const load = await store.beginImport();
      await load.put({ ...key, payload: '{"v":1}' });
      await load.commit();
      const batch = await store.beginImport();
      await batch.put({ operation: 'Check', registration: 'OTHER', state: '', payload: '{"v":9}' });
      expect(await store.get(key)).toEqual({ payload: '{"v":1}' });
      await batch.commit();
      expect(await store.count()).toBe(2);
    } finally {
      await store.close();
    }
  });
});

describe('records(): every record in key order', () => {
  const put = async (store: SqliteStore, regs: string[]) => {
    const batch = await store.beginImport();
    for (const r of regs) await batch.put({ operation: 'Check', registration: r, state: '', payload: `{"r":"${r}"}` });
    await batch.commit();
  };
  const all = async (store: SqliteStore) => {
    const out: string[] = [];
    for await (const r of store.records()) out.push(r.registration);
    return out;
  };

  test.each([':memory:', ''])(
    'a store without a file of its own (%j) is read through its one connection, which goes on serving and writing',
    async (file) => {
      const store = new SqliteStore(file);
      try {
        await put(store, ['b', 'A', 'a', 'B']);
        expect(await all(store)).toEqual(['A', 'B', 'a', 'b']);
        await put(store, ['C']);
        expect(await store.get({ operation: 'Check', registration: 'C', state: '' })).toEqual({ payload: '{"r":"C"}' });
        expect(await all(store)).toEqual(['A', 'B', 'C', 'a', 'b']);
      } finally {
        await store.close();
      }
    },
  );

  test('a file store: after a whole pass, or one stopped early, nothing is held open (the log can be checkpointed whole)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-records-'));
    const file = path.join(dir, 'r.db');
    const store = new SqliteStore(file);
    const other = new Database(file);
    try {
      await put(store, ['X1', 'X2', 'X3']);
      expect(await all(store)).toEqual(['X1', 'X2', 'X3']);
      await new Promise((resolve) => setImmediate(resolve));
      other.prepare("UPDATE records SET payload = '{}' WHERE registration = 'X1'").run();
      expect((other.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[])[0].busy).toBe(0);
      for await (const r of store.records()) {
        expect(r.registration).toBe('X1');
        break;
      }
      await new Promise((resolve) => setImmediate(resolve));
      other.prepare("UPDATE records SET payload = '{}' WHERE registration = 'X2'").run();
      expect((other.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[])[0].busy).toBe(0);
    } finally {
      other.close();
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
