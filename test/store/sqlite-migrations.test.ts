// SQLite schema migrations: the same numbered steps as PostgreSQL, recorded in schema_version. A file
// written by an older release (which recorded no version) is recognised by what it holds and
// upgraded in place with its data intact; running them again changes nothing; a file written by a
// newer release is refused. The old schemas below are written out by hand as those releases wrote them.
// (`reglookup migrate` and `serve` on such files: test/cli/migrate.test.ts.)

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SqliteStore } from '../../src/store/sqlite';
import { MigrationError } from '../../src/store/migrations/runner';
import { migrateSqlite } from '../../src/store/migrations/sqlite';
import { openStore, isMigratable } from '../../src/store/open';
import { V1_DDL } from '../helpers/sqlite-schemas';

/** What the release before versioned SQLite migrations created on a new file (all columns, no schema_version). */
const UNVERSIONED_CURRENT_DDL = `
CREATE TABLE IF NOT EXISTS records (
  id           INTEGER PRIMARY KEY,
  operation    TEXT NOT NULL,
  registration TEXT NOT NULL,
  state        TEXT NOT NULL DEFAULT '',
  payload      TEXT NOT NULL,
  prepared     TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS records_key ON records (operation, registration, state);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS records_unprepared ON records (id) WHERE prepared IS NULL;
CREATE TRIGGER IF NOT EXISTS records_prepared_follows_payload
AFTER UPDATE OF payload ON records
WHEN NEW.payload IS NOT OLD.payload AND NEW.prepared IS OLD.prepared AND NEW.prepared IS NOT NULL
BEGIN
  UPDATE records SET prepared = NULL WHERE id = NEW.id;
END;
CREATE TABLE IF NOT EXISTS accounts (username TEXT PRIMARY KEY, credits INTEGER) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage (
  username  TEXT NOT NULL,
  day       TEXT NOT NULL,
  operation TEXT NOT NULL,
  found     INTEGER NOT NULL DEFAULT 0,
  not_found INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (username, day, operation)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS usage_day ON usage (day);
ALTER TABLE accounts ADD COLUMN enabled INTEGER NOT NULL DEFAULT 1;
ALTER TABLE accounts ADD COLUMN daily_limit INTEGER;
ALTER TABLE accounts ADD COLUMN rate REAL;
ALTER TABLE accounts ADD COLUMN allow TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN day TEXT;
ALTER TABLE accounts ADD COLUMN day_count INTEGER NOT NULL DEFAULT 0;
`;

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-sqlite-migrations-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

let n = 0;
function newFile(ddl?: string): string {
  const file = path.join(dir, `store-${++n}.db`);
  if (ddl !== undefined) {
    const db = new Database(file);
    db.exec(ddl);
    db.close();
  }
  return file;
}

function sql<T>(file: string, text: string): T[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(text).all() as T[];
  } finally {
    db.close();
  }
}

/** Every table's columns (name, type, not null, default, key) and every index and trigger, by name. */
function schemaOf(file: string): {
  objects: { type: string; name: string; tbl_name: string }[];
  tables: { table: string; columns: { name: string }[] }[];
} {
  const objects = sql<{ type: string; name: string; tbl_name: string }>(
    file,
    "SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name <> 'schema_version' ORDER BY name",
  );
  const tables = objects
    .filter((o) => o.type === 'table')
    .map((o) => ({ table: o.name, columns: sql<{ name: string }>(file, `PRAGMA table_info(${o.name})`) }));
  return { objects, tables };
}

const KEY = { operation: 'Check', registration: 'OLD1', state: '' };

describe('SQLite migrations', () => {
  test('a new file gets every step, reported once; opened again, nothing is applied', async () => {
    const file = newFile();
    const store = new SqliteStore(file);
    expect(isMigratable(store)).toBe(true);
    const first = await store.migrate();
    expect(first.applied.map((m) => m.version)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(first.version).toBe(7);
    // Step 7 made the accounts file with its first step (not reported again); its step 2 keyed the accounts,
    // step 3 added batch jobs.
    expect(first.accounts?.applied.map((m) => m.version)).toEqual([2, 3]);
    expect(first.accounts?.version).toBe(3);
    const settled = { applied: [], version: 7, accounts: { applied: [], version: 3 } };
    expect(await store.migrate()).toEqual(settled);
    await store.close();
    const again = new SqliteStore(file);
    expect(await again.migrate()).toEqual(settled);
    await again.close();
    expect(sql(file, 'SELECT version FROM schema_version ORDER BY version')).toEqual([
      { version: 1 },
      { version: 2 },
      { version: 3 },
      { version: 4 },
      { version: 5 },
      { version: 6 },
      { version: 7 },
    ]);
  });

  test('a file the unversioned release created, upgraded, has the same tables, columns, indexes and triggers as a new file', async () => {
    const migrated = newFile();
    await new SqliteStore(migrated).close();
    const upgraded = newFile(UNVERSIONED_CURRENT_DDL);
    await new SqliteStore(upgraded).close();
    expect(schemaOf(upgraded)).toEqual(schemaOf(migrated));
    // Step 4 left each record its key and payload only: no stored answers, no trigger keeping them.
    expect(
      schemaOf(migrated)
        .tables.find((t) => t.table === 'records')
        ?.columns.map((c) => c.name),
    ).toEqual(['id', 'operation', 'registration', 'state', 'payload']);
    expect(schemaOf(migrated).objects.map((o) => o.name)).not.toContain('records_prepared_follows_payload');
  });

  test('sqlite::memory: is migrated and serves', async () => {
    const store = openStore('sqlite::memory:');
    expect(isMigratable(store) && (await store.migrate()).version).toBe(7);
    expect(await store.isEmpty()).toBe(true);
    await store.close();
  });

  test('a file written with the first schema upgrades in place: records, accounts and lookups intact', async () => {
    const file = newFile(V1_DDL);
    const db = new Database(file);
    db.prepare('INSERT INTO records (operation, registration, state, payload) VALUES (?, ?, ?, ?)').run(
      'Check',
      'OLD1',
      '',
      '{"Description":"kept"}',
    );
    db.prepare('INSERT INTO accounts (username, credits) VALUES (?, ?)').run('kept', 7);
    db.close();

    const store = new SqliteStore(file);
    const report = await store.migrate();
    expect(report.applied.map((m) => m.version)).toEqual([2, 3, 4, 5, 6, 7]);
    expect(report.version).toBe(7);
    expect(await store.get(KEY)).toEqual({ payload: '{"Description":"kept"}' });
    // Known by its key since the accounts file's step 2: SHA-256 of the username (docs/security.md).
    const kept = createHash('sha256').update('kept').digest('hex');
    expect(await store.accounts.getAccount(kept)).toEqual({
      username: kept,
      name: `k-${kept.slice(0, 12)}`,
      prefix: 'k',
      keyUntil: null,
      weak: 'short',
      credits: 7,
      dailyLimit: null,
      rate: null,
      allow: [],
      enabled: true,
    });
    expect(await store.accounts.charge(kept, '2026-01-01')).toEqual({ ok: true, credits: 6, usedToday: 1 });
    await store.accounts.addUsage([{ username: kept, day: '2026-01-01', operation: 'Check', found: 1, notFound: 0 }]);
    expect(await store.accounts.usage(kept, '2026-01-01')).toEqual([
      { username: kept, day: '2026-01-01', operation: 'Check', found: 1, notFound: 0 },
    ]);
    const raw = new Database(file);
    raw.prepare('UPDATE records SET payload = \'{"Description":"changed"}\' WHERE registration = \'OLD1\'').run();
    raw.close();
    await new Promise((r) => setImmediate(r)); // past the shared read of this event-loop turn
    expect(await store.get(KEY)).toEqual({ payload: '{"Description":"changed"}' });
    expect(await store.migrate()).toMatchObject({ applied: [], version: 7 });
    await store.close();
    expect(
      sql<{ version: number }>(file, 'SELECT version FROM schema_version ORDER BY version').map((r) => r.version),
    ).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  test('a file created by the unversioned release (prepared answers, no schema_version) is recognised as version 3 and upgraded', async () => {
    const file = newFile(UNVERSIONED_CURRENT_DDL);
    const db = new Database(file);
    db.prepare(
      "INSERT INTO records (operation, registration, state, payload, prepared) VALUES ('Check', 'OLD1', '', '{}', 'ready')",
    ).run();
    db.prepare("INSERT INTO meta (key, value) VALUES ('prepared_version', 'abc')").run();
    db.close();
    const store = new SqliteStore(file);
    expect(await store.migrate()).toMatchObject({
      applied: [
        expect.objectContaining({ version: 4 }),
        expect.objectContaining({ version: 5 }),
        expect.objectContaining({ version: 6 }),
        expect.objectContaining({ version: 7 }),
      ],
      version: 7,
    });
    expect(await store.get(KEY)).toEqual({ payload: '{}' });
    await store.close();
    expect(
      sql<{ version: number }>(file, 'SELECT version FROM schema_version ORDER BY version').map((r) => r.version),
    ).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(sql(file, "SELECT key FROM meta WHERE key = 'prepared_version'")).toEqual([]);
  });

  test('a file already up to date opens while another process holds the write lock (a long import)', async () => {
    const file = newFile();
    await new SqliteStore(file).close();
    const writer = new Database(file);
    writer.exec('BEGIN IMMEDIATE');
    try {
      const store = new SqliteStore(file);
      expect(await store.isEmpty()).toBe(true);
      await store.close();
    } finally {
      writer.exec('ROLLBACK');
      writer.close();
    }
  });
});

// "Every step can be applied over a partly present schema (a release between two steps)": files as
// such in-between releases left them, written out by hand. Each one, opened, ends with the schema
// of a new file and serves accounts and usage.
const V2_OBJECTS = `
ALTER TABLE records ADD COLUMN prepared TEXT;
CREATE INDEX records_unprepared ON records (id) WHERE prepared IS NULL;
CREATE TRIGGER records_prepared_follows_payload
AFTER UPDATE OF payload ON records
WHEN NEW.payload IS NOT OLD.payload AND NEW.prepared IS OLD.prepared AND NEW.prepared IS NOT NULL
BEGIN
  UPDATE records SET prepared = NULL WHERE id = NEW.id;
END;
`;
const ACCOUNT_SETTINGS = `
ALTER TABLE accounts ADD COLUMN enabled INTEGER NOT NULL DEFAULT 1;
ALTER TABLE accounts ADD COLUMN daily_limit INTEGER;
ALTER TABLE accounts ADD COLUMN rate REAL;
ALTER TABLE accounts ADD COLUMN allow TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN day TEXT;
ALTER TABLE accounts ADD COLUMN day_count INTEGER NOT NULL DEFAULT 0;
`;
const USAGE_TABLE = `
CREATE TABLE usage (
  username  TEXT NOT NULL,
  day       TEXT NOT NULL,
  operation TEXT NOT NULL,
  found     INTEGER NOT NULL DEFAULT 0,
  not_found INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (username, day, operation)
) WITHOUT ROWID;
`;

describe('SQLite migrations: files of releases between two steps', () => {
  const BETWEEN: Record<string, string> = {
    'account settings, no usage table yet': V1_DDL + V2_OBJECTS + ACCOUNT_SETTINGS,
    'account settings and the usage table, not its day index': V1_DDL + V2_OBJECTS + ACCOUNT_SETTINGS + USAGE_TABLE,
    'the usage table and its day index, not the account settings':
      V1_DDL + V2_OBJECTS + USAGE_TABLE + 'CREATE INDEX usage_day ON usage (day);',
    'some of the account settings only':
      V1_DDL + V2_OBJECTS + 'ALTER TABLE accounts ADD COLUMN enabled INTEGER NOT NULL DEFAULT 1;',
  };
  test.each(Object.keys(BETWEEN))(
    '%s: upgraded to the schema of a new file, accounts and usage served',
    async (name) => {
      const fresh = newFile();
      await new SqliteStore(fresh).close();
      const file = newFile(BETWEEN[name]);
      const store = new SqliteStore(file);
      try {
        await store.accounts.putAccount({ username: 'kept', credits: 3, dailyLimit: 2 });
        expect(await store.accounts.charge('kept', '2026-01-01')).toEqual({ ok: true, credits: 2, usedToday: 1 });
        await store.accounts.addUsage([
          { username: 'kept', day: '2026-01-01', operation: 'Check', found: 1, notFound: 0 },
        ]);
        expect(await store.accounts.usage('kept', '2026-01-01')).toEqual([
          { username: 'kept', day: '2026-01-01', operation: 'Check', found: 1, notFound: 0 },
        ]);
      } finally {
        await store.close();
      }
      expect(schemaOf(file)).toEqual(schemaOf(fresh));
    },
  );

  test('a records table from before every release this one can upgrade (keyed WITHOUT ROWID) is refused, saying to export it, and left as it was', () => {
    const file = newFile(`
CREATE TABLE records (operation TEXT NOT NULL, registration TEXT NOT NULL, state TEXT NOT NULL DEFAULT '', payload TEXT NOT NULL, PRIMARY KEY (operation, registration, state)) WITHOUT ROWID;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE accounts (username TEXT PRIMARY KEY, credits INTEGER) WITHOUT ROWID;
INSERT INTO records VALUES ('Check', 'OLD0', '', '{}');
`);
    const before = schemaOf(file);
    expect(() => new SqliteStore(file)).toThrow(MigrationError);
    expect(() => new SqliteStore(file)).toThrow(/export/);
    expect(schemaOf(file)).toEqual(before);
    expect(sql(file, "SELECT name FROM sqlite_master WHERE name = 'schema_version'")).toEqual([]);
    expect(sql(file, 'SELECT registration FROM records')).toEqual([{ registration: 'OLD0' }]);
    // The same without an accounts table (callers came later).
    const recordsOnly = newFile(`
CREATE TABLE records (operation TEXT NOT NULL, registration TEXT NOT NULL, state TEXT NOT NULL DEFAULT '', payload TEXT NOT NULL, PRIMARY KEY (operation, registration, state)) WITHOUT ROWID;
INSERT INTO records VALUES ('Check', 'OLD0', '', '{}');
`);
    const bare = schemaOf(recordsOnly);
    expect(() => new SqliteStore(recordsOnly)).toThrow(/export/);
    expect(schemaOf(recordsOnly)).toEqual(bare);
  });
});

describe('SQLite migrations: the steps, as a list given to the runner', () => {
  const step = (version: number, name: string, text: string) => ({ version, name, sql: text });

  test('up to a version: the steps to it, each reported, and the version reached; then the rest', () => {
    const db = new Database(':memory:');
    try {
      expect(migrateSqlite(db, 0)).toEqual({ applied: [], version: 0 });
      const first = migrateSqlite(db, 2);
      expect(first.applied.map((m) => m.version)).toEqual([1, 2]);
      expect(first.version).toBe(2);
      const rest = migrateSqlite(db, 6);
      expect(rest.applied.map((m) => m.version)).toEqual([3, 4, 5, 6]);
      expect(rest.version).toBe(6);
      // Step 7 drops the account tables only after copying them to the accounts file: without that
      // copy (a caller that does not say how) it is refused, and the file keeps them.
      expect(() => migrateSqlite(db)).toThrow(/migration 7 .*needs the accounts file/);
      expect(migrateSqlite(db, 6)).toEqual({ applied: [], version: 6 });
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'accounts'").all()).toEqual([
        { name: 'accounts' },
      ]);
    } finally {
      db.close();
    }
  });

  test('a step that fails names itself and the reason, and leaves the file as it was: no step of the run is kept', () => {
    const file = newFile();
    const db = new Database(file);
    try {
      const list = [
        step(1, 'a table', 'CREATE TABLE t1 (x INTEGER);'),
        step(2, 'a broken step', 'CREATE TABLE t2 (x INTEGER); INSERT INTO nowhere VALUES (1);'),
      ];
      let error: Error | undefined;
      try {
        migrateSqlite(db, Infinity, list);
      } catch (e) {
        error = e as Error;
      }
      expect(error).toBeInstanceOf(MigrationError);
      expect(error?.message).toMatch(/\b2\b.*a broken step.*no such table: nowhere/);
      expect(db.inTransaction).toBe(false);
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name IN ('t1', 't2', 'schema_version')").all()).toEqual(
        [],
      );
      // The same list without the broken step then applies.
      expect(migrateSqlite(db, Infinity, list.slice(0, 1))).toEqual({ applied: [list[0]], version: 1 });
    } finally {
      db.close();
    }
  });

  test('a list whose versions are not 1, 2, 3, ... in order is refused before anything is applied', () => {
    const db = new Database(':memory:');
    try {
      for (const list of [
        [step(2, 'two', 'CREATE TABLE a (x)')],
        [step(1, 'one', 'CREATE TABLE a (x)'), step(1, 'one again', 'CREATE TABLE b (x)')],
        [step(1, 'one', 'CREATE TABLE a (x)'), step(3, 'three', 'CREATE TABLE b (x)')],
      ]) {
        expect(() => migrateSqlite(db, Infinity, list)).toThrow(MigrationError);
        expect(() => migrateSqlite(db, Infinity, list)).toThrow(
          new RegExp(
            `'${list[list.length - 1].name}' has version ${list[list.length - 1].version}, expected ${list.length}`,
          ),
        );
      }
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name IN ('a', 'b')").all()).toEqual([]);
    } finally {
      db.close();
    }
  });
});
