// The SQLite store's two files (docs/data.md, "Two files"): the records in DATABASE_URL's file, the
// callers and everything written while serving in the accounts file beside it, so that an import's
// open transaction never holds up a charge. A store of the earlier layout (one file, schema version
// 6, as 0.3 leaves it) has its accounts moved out once, on first open, only when no other process
// has it open, and safely against a kill at any moment of the move.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SqliteStore } from '../../src/store/sqlite';
import { migrateSqlite, SQLITE_MIGRATIONS } from '../../src/store/migrations/sqlite';
import {
  ACCOUNT_TABLES,
  accountRows,
  accountsOf,
  oldLayoutStore as oldLayoutAt,
  query,
  tablesIn,
  versionOf,
  keyed,
} from '../helpers/sqlite-layout';
// What needs a process of its own (a server of 0.3 holding the file, a kill during the move, the docs'
// shell examples) is in test/cli/sqlite-layout.test.ts.

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-layout-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

let n = 0;
const newPath = () => path.join(dir, `store-${++n}.db`);
const oldLayoutStore = (usageRows = 0) => oldLayoutAt(newPath(), usageRows);

const sha256 = (u: string) => createHash('sha256').update(u, 'utf8').digest('hex');

describe('the SQLite store in two files', () => {
  test('a new store is two files: records in the one DATABASE_URL names, the callers beside it', async () => {
    const file = newPath();
    const store = new SqliteStore(file);
    await store.accounts.putAccount({ username: 'ann', credits: 2 });
    await store.close();
    expect(tablesIn(file)).toEqual(['meta', 'records', 'schema_version']);
    expect(tablesIn(accountsOf(file))).toEqual(expect.arrayContaining(ACCOUNT_TABLES));
    expect(query(accountsOf(file), 'SELECT username, credits FROM accounts')).toEqual([
      { username: 'ann', credits: 2 },
    ]);
  });

  test('while an import holds the records file open in a transaction, charges, top-ups, audit entries and cached answers are written at once', async () => {
    const file = newPath();
    const server = new SqliteStore(file);
    const importer = new SqliteStore(file); // `reglookup import`, its own connection
    try {
      await server.accounts.putAccount({ username: 'payer', credits: 3 });
      const batch = await importer.beginImport({ replace: 'all' });
      await batch.put({ operation: 'Check', registration: 'NEW1', state: '', payload: '{"v":1}' });
      // Without the second file each of these waited for the import's lock, 5 s, and then failed.
      const t0 = Date.now();
      expect(await server.accounts.charge('payer', '2026-11-23', 'Check')).toEqual({
        ok: true,
        credits: 2,
        usedToday: 1,
      });
      expect(
        await server.admin.creditOnce({
          username: 'payer',
          delta: 5,
          key: 'top-up-1',
          fingerprint: 'f',
          actor: 'ops',
          at: '2026-11-23T10:00:00Z',
        }),
      ).toEqual({ result: { balance: 7 }, replayed: false });
      await server.cachePut({
        operation: 'Check',
        registration: 'UP2',
        state: '',
        provider: 'dvla',
        fetchedAt: 1,
        payload: '{}',
      });
      expect(Date.now() - t0).toBeLessThan(4000);
      // The import is not seen until it commits, and then whole.
      expect(await server.get({ operation: 'Check', registration: 'NEW1', state: '' })).toBeNull();
      await batch.commit();
      await new Promise((r) => setImmediate(r));
      expect(await server.get({ operation: 'Check', registration: 'NEW1', state: '' })).toEqual({ payload: '{"v":1}' });
      expect(await server.accounts.getAccount('payer')).toMatchObject({ credits: 7 });
    } finally {
      await importer.close();
      await server.close();
    }
  });

  test('a store of the one-file layout (0.3) has its accounts moved out on first open, every row and counter kept', async () => {
    const file = oldLayoutStore();
    const before = accountRows(file);
    const store = new SqliteStore(file);
    try {
      expect((await store.migrate()).applied.map((m) => m.version)).toEqual([7]);
      // Every row kept, the usernames as their keys (SHA-256, docs/security.md) and the audit naming the account.
      const alice = sha256('alice');
      expect(accountRows(accountsOf(file))).toBe(keyed(before));
      expect(await store.get({ operation: 'Check', registration: 'OLD1', state: '' })).toEqual({
        payload: '{"Description":"kept"}',
      });
      expect(await store.accounts.getAccount(alice)).toMatchObject({
        username: alice,
        credits: 40,
        dailyLimit: 5,
        rate: null,
        allow: ['10.0.0.0/8'],
        enabled: true,
      });
      expect(await store.accounts.usage(alice, '2026-11-01')).toEqual([
        { username: alice, day: '2026-11-20', operation: 'Check', found: 3, notFound: 1 },
      ]);
      // The same Idempotency-Key is still a replay, not a second top-up.
      expect(
        await store.admin.creditOnce({
          username: alice,
          delta: 10,
          key: 'k-1',
          fingerprint: 'fp-1',
          actor: 'ops',
          at: '2026-11-23T00:00:00Z',
        }),
      ).toEqual({ result: { balance: 50 }, replayed: true });
      expect(await store.cacheGet({ operation: 'Check', registration: 'UP1', state: '' })).toMatchObject({
        provider: 'dvla',
        payload: '{"Description":"fetched"}',
      });
      // Audit ids keep growing past the pruned entry's (id 1): a new entry is 4, not 3.
      await store.admin.addAudit({
        at: '2026-11-23T00:00:00Z',
        actor: 'ops',
        action: 'disable',
        target: 'bob',
        before: null,
        after: null,
      });
      expect((await store.admin.audit(0, 10)).map((e) => e.id)).toEqual([4, 3, 2]);
    } finally {
      await store.close();
    }
    expect(tablesIn(file)).toEqual(['meta', 'records', 'schema_version']);
    expect(versionOf(file)).toBe(7);
    expect(versionOf(accountsOf(file))).toBe(3);
    // The moved file has the schema of a new store's accounts file.
    const fresh = newPath();
    await new SqliteStore(fresh).close();
    const schema = (f: string) =>
      query(f, "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name");
    expect(schema(accountsOf(file))).toEqual(schema(accountsOf(fresh)));
  });

  test('a process of the earlier release started after the move refuses the file instead of serving it without callers', async () => {
    const file = oldLayoutStore();
    await new SqliteStore(file).close();
    // 0.3 opens a file by bringing it to its six steps, and refuses a newer one.
    const db = new Database(file);
    try {
      expect(() => migrateSqlite(db, Infinity, SQLITE_MIGRATIONS.slice(0, 6))).toThrow(
        /schema version 7, newer than this release knows \(6\)/,
      );
    } finally {
      db.close();
    }
  });

  test("copies left by a move that was stopped (a partial file, an accounts file beside an old-layout store) are replaced by the records file's tables", async () => {
    const file = oldLayoutStore();
    const before = accountRows(file);
    // An accounts file holding something else (older accounts) and a partial copy of a stopped move.
    const otherFile = newPath();
    const other = new SqliteStore(otherFile);
    await other.accounts.putAccount({ username: 'stale', credits: 1 });
    await other.close();
    fs.copyFileSync(accountsOf(otherFile), accountsOf(file));
    fs.writeFileSync(`${accountsOf(file)}.partial-999999`, 'not a database');
    const store = new SqliteStore(file);
    try {
      expect(await store.accounts.getAccount(sha256('stale'))).toBeNull();
      expect(await store.accounts.getAccount(sha256('alice'))).toMatchObject({ credits: 40 });
    } finally {
      await store.close();
    }
    expect(accountRows(accountsOf(file))).toBe(keyed(before));
  });

  test('a new records file beside an accounts file keeps the callers (the records were removed to start again)', async () => {
    const file = newPath();
    const first = new SqliteStore(file);
    await first.accounts.putAccount({ username: 'stays', credits: 9 });
    await first.close();
    for (const s of ['', '-wal', '-shm']) fs.rmSync(`${file}${s}`, { force: true });
    const store = new SqliteStore(file);
    try {
      expect(await store.isEmpty()).toBe(true);
      expect(await store.accounts.getAccount('stays')).toMatchObject({ credits: 9 });
    } finally {
      await store.close();
    }
  });

  test('a records file without its accounts file is refused, saying which file is missing and what to do', async () => {
    const file = newPath();
    await new SqliteStore(file).close();
    fs.rmSync(accountsOf(file));
    expect(() => new SqliteStore(file)).toThrow(
      new RegExp(
        `the accounts file ${accountsOf(file).replace(/[.]/g, '\\.')} is missing .*put back the one from your backup`,
      ),
    );
    expect(fs.existsSync(accountsOf(file))).toBe(false);
  });
});
