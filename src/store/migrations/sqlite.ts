// The SQLite schema, as the steps that built it release by release (the PostgreSQL steps in
// postgres.ts follow the same history). Each step is released once and never edited; a change to
// the schema is a new step at the end.
//
// Releases before these steps existed created their schema with CREATE ... IF NOT EXISTS and added
// columns when they found them missing, and recorded no version. Such a file is recognised by what
// it holds (inferVersion), its version recorded, and the remaining steps applied. Every step can be
// applied over a partly present schema (a release between two steps): tables, indexes and triggers
// are created IF NOT EXISTS, and columns (SQLite has no ADD COLUMN IF NOT EXISTS) are listed in
// `columns` and added only where absent.

import { accountKey, prefixOf } from '../../core/key';
import type Database from 'better-sqlite3';
import { MigrationError, migrateSync, type Migration, type MigrationReport, type SyncMigrationTarget } from './runner';

export interface SqliteMigration extends Migration {
  /** Columns the step adds, [table, column, definition], each added only if the table lacks it; before `sql`. */
  readonly columns?: readonly (readonly [string, string, string])[];
  /** Columns the step drops, [table, column], each only where the table has it; after `sql`. */
  readonly dropColumns?: readonly (readonly [string, string])[];
  /** Tables the step drops (in `sql`): a file holding any of them has not had the step. */
  readonly dropTables?: readonly string[];
  /**
   * The step moves the account tables to the accounts file before its `sql` drops them: applied only
   * by a caller that says how (MigrateHooks.moveAccounts, sqlite-layout.ts), never by dropping alone.
   */
  readonly movesAccounts?: boolean;
}

/** What a step needs from outside the file it changes. */
interface MigrateHooks {
  /** Copies the account tables to the accounts file, inside the migration's transaction (step 7). */
  moveAccounts?(db: Database.Database): void;
}

export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    name: 'records, meta and accounts',
    // A rowid table with a unique key index: vehicle JSON is larger than a WITHOUT ROWID leaf keeps.
    sql: `
CREATE TABLE IF NOT EXISTS records (
  id           INTEGER PRIMARY KEY,
  operation    TEXT NOT NULL,
  registration TEXT NOT NULL,
  state        TEXT NOT NULL DEFAULT '',
  payload      TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS records_key ON records (operation, registration, state);
CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS accounts (
  username TEXT PRIMARY KEY,
  credits  INTEGER
) WITHOUT ROWID;
`,
  },
  {
    version: 2,
    name: 'prepared answers beside each record',
    columns: [['records', 'prepared', 'TEXT']],
    sql: `
-- Prepared answers never outlive the payload they were made from, whoever writes the row (an older
-- release's import knows nothing of them): a payload changed without new answers drops the old ones,
-- and the record is answered by building until it is prepared again (prepareMissing, which start-up
-- and every import run, finds such records through the partial index).
CREATE INDEX IF NOT EXISTS records_unprepared ON records (id) WHERE prepared IS NULL;
CREATE TRIGGER IF NOT EXISTS records_prepared_follows_payload
AFTER UPDATE OF payload ON records
WHEN NEW.payload IS NOT OLD.payload AND NEW.prepared IS OLD.prepared AND NEW.prepared IS NOT NULL
BEGIN
  UPDATE records SET prepared = NULL WHERE id = NEW.id;
END;
`,
  },
  {
    version: 3,
    name: 'account settings, daily counts, usage',
    // Today's charged lookups live in the account row (day, day_count) so that a charge is one
    // UPDATE. Old rows take the defaults: enabled, no limits, no allow-list.
    columns: [
      ['accounts', 'enabled', 'INTEGER NOT NULL DEFAULT 1'],
      ['accounts', 'daily_limit', 'INTEGER'],
      ['accounts', 'rate', 'REAL'],
      ['accounts', 'allow', "TEXT NOT NULL DEFAULT ''"],
      ['accounts', 'day', 'TEXT'],
      ['accounts', 'day_count', 'INTEGER NOT NULL DEFAULT 0'],
    ],
    sql: `
CREATE TABLE IF NOT EXISTS usage (
  username  TEXT NOT NULL,
  day       TEXT NOT NULL,
  operation TEXT NOT NULL,
  found     INTEGER NOT NULL DEFAULT 0,
  not_found INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (username, day, operation)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS usage_day ON usage (day);
`,
  },
  {
    version: 4,
    name: 'answers written at lookup: stored answers dropped',
    // A record is its key and its payload: answers are written from the payload at lookup. The
    // index and trigger name the column, so they go first. Dropping the column rewrites every row;
    // the pages it frees are reused by later imports (VACUUM returns them to the file system).
    sql: `
DROP TRIGGER IF EXISTS records_prepared_follows_payload;
DROP INDEX IF EXISTS records_unprepared;
DELETE FROM meta WHERE key = 'prepared_version';
`,
    dropColumns: [['records', 'prepared']],
  },
  {
    version: 5,
    name: 'audit log and idempotency keys of credit top-ups',
    sql: `
-- Every change an operator makes to a caller (admin API, reglookup users): who, when, what, before
-- and after (JSON). Pruned with usage, after USAGE_DAYS.
CREATE TABLE IF NOT EXISTS audit (
  id     INTEGER PRIMARY KEY AUTOINCREMENT,
  at     TEXT NOT NULL,
  actor  TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  before TEXT,
  after  TEXT
);
CREATE INDEX IF NOT EXISTS audit_at ON audit (at);
-- A credit top-up's Idempotency-Key: the request it was used for (fingerprint) and its result.
CREATE TABLE IF NOT EXISTS idempotency (
  key         TEXT PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  result      TEXT NOT NULL,
  created_at  TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idempotency_created ON idempotency (created_at);
`,
  },
  {
    version: 6,
    name: 'upstream cache',
    // Answers fetched from upstream providers, apart from the imported records (which always win).
    // payload NULL: the upstream said not found. fetched_at: ms since the epoch.
    sql: `
CREATE TABLE IF NOT EXISTS upstream_cache (
  operation    TEXT NOT NULL,
  registration TEXT NOT NULL,
  state        TEXT NOT NULL DEFAULT '',
  provider     TEXT NOT NULL,
  fetched_at   INTEGER NOT NULL,
  payload      TEXT,
  PRIMARY KEY (operation, registration, state)
);
`,
  },
  {
    version: 7,
    name: 'accounts, usage, audit, idempotency keys and upstream cache moved to the accounts file',
    // An import holds this file's write lock until it commits; a charge, a top-up or a cached
    // upstream answer now writes the accounts file (migrations/sqlite-accounts.ts), a lock of its
    // own. The tables' rows are copied there first (movesAccounts), then dropped here.
    movesAccounts: true,
    dropTables: ['accounts', 'usage', 'audit', 'idempotency', 'upstream_cache'],
    sql: `
DROP TABLE IF EXISTS accounts;
DROP TABLE IF EXISTS usage;
DROP TABLE IF EXISTS audit;
DROP TABLE IF EXISTS idempotency;
DROP TABLE IF EXISTS upstream_cache;
`,
  },
];

function columnsOf(db: Database.Database, table: string): Set<string> {
  return new Set((db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name));
}

function objectsOf(db: Database.Database): Set<string> {
  return new Set((db.prepare('SELECT name FROM sqlite_master').all() as { name: string }[]).map((r) => r.name));
}

/**
 * The version a file written before schema_version existed is at: the last step all of whose
 * tables, columns, indexes and triggers it holds (with every step before it). 0: nothing of ours.
 */
export function inferVersion(db: Database.Database): number {
  const objects = objectsOf(db);
  if (!objects.has('records') && !objects.has('accounts')) return 0;
  if (objects.has('records') && !columnsOf(db, 'records').has('id')) {
    // The very first release keyed records WITHOUT ROWID; no later release could open such a file.
    throw new MigrationError(
      'the records table predates every release this one can upgrade (no id column); export it with that release and import it into a new file',
    );
  }
  const present = (m: SqliteMigration): boolean => {
    const named = [...m.sql.matchAll(/CREATE (?:UNIQUE )?(?:TABLE|INDEX|TRIGGER) IF NOT EXISTS (\w+)/g)].map(
      (x) => x[1],
    );
    return (
      named.every((n) => objects.has(n)) &&
      (m.columns ?? []).every(([t, c]) => objects.has(t) && columnsOf(db, t).has(c)) &&
      (m.dropColumns ?? []).every(([t, c]) => objects.has(t) && !columnsOf(db, t).has(c)) &&
      (m.dropTables ?? []).every((t) => !objects.has(t))
    );
  };
  let version = 0;
  for (const m of SQLITE_MIGRATIONS) {
    if (!present(m)) break;
    version = m.version;
  }
  return version;
}

export function recordedVersion(db: Database.Database): number | null {
  if (!objectsOf(db).has('schema_version')) return null;
  return (db.prepare('SELECT MAX(version) AS v FROM schema_version').get() as { v: number | null }).v ?? 0;
}

/**
 * Brings the file's schema up to `upTo` (all of this release's steps by default). The lock is
 * SQLite's write lock: one BEGIN IMMEDIATE transaction holds the reading of schema_version, every
 * step and each step's schema_version row, so that processes opening the file together take turns
 * and a step that fails leaves the file as it was. A file already up to date is only read: no write
 * lock is taken, so opening one never waits behind a long import in another process.
 */
export function migrateSqlite(
  db: Database.Database,
  upTo = Infinity,
  list: readonly SqliteMigration[] = SQLITE_MIGRATIONS,
  hooks: MigrateHooks = {},
): MigrationReport {
  const recorded = recordedVersion(db);
  if (recorded !== null && recorded >= Math.min(upTo, list.length) && recorded <= list.length)
    return { applied: [], version: recorded };
  defineFunctions(db);
  const target: SyncMigrationTarget<SqliteMigration> = {
    withLock: (fn) => {
      db.exec('BEGIN IMMEDIATE');
      try {
        const out = fn();
        db.exec('COMMIT');
        return out;
      } catch (e) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw e;
      }
    },
    appliedVersions: () => {
      if (!objectsOf(db).has('schema_version')) {
        // Inferred before the table exists (it is one of the objects looked at).
        const found = inferVersion(db);
        db.exec(
          "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))",
        );
        const insert = db.prepare('INSERT INTO schema_version (version, name) VALUES (?, ?)');
        for (const m of list) if (m.version <= found) insert.run(m.version, `${m.name} (found in place)`);
      }
      return (db.prepare('SELECT version FROM schema_version ORDER BY version').all() as { version: number }[]).map(
        (r) => r.version,
      );
    },
    apply: (m) => {
      if (m.movesAccounts && !hooks.moveAccounts)
        throw new MigrationError(
          `migration ${m.version} (${m.name}) needs the accounts file: open the store to apply it`,
        );
      db.exec('SAVEPOINT migration');
      try {
        if (m.movesAccounts) hooks.moveAccounts?.(db);
        for (const [table, column, definition] of m.columns ?? []) {
          if (!columnsOf(db, table).has(column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
        }
        db.exec(m.sql);
        for (const [table, column] of m.dropColumns ?? []) {
          if (columnsOf(db, table).has(column)) db.exec(`ALTER TABLE ${table} DROP COLUMN ${column}`);
        }
        db.prepare('INSERT INTO schema_version (version, name) VALUES (?, ?)').run(m.version, m.name);
        db.exec('RELEASE migration');
      } catch (e) {
        db.exec('ROLLBACK TO migration');
        db.exec('RELEASE migration');
        throw new MigrationError(`migration ${m.version} (${m.name}) failed: ${(e as Error).message}`);
      }
    },
  };
  return migrateSync(target, list, upTo);
}

// What the accounts file's step 2 computes from a username it then forgets (PostgreSQL's step 8 the
// same in SQL): its key, SHA-256 of its UTF-8 in hex (core/key.ts); its prefix, a quarter of it and
// at most 6 characters; and why it is guessable: 'invisible' (it holds a character a new username may
// not, accounts/username.ts), 'short' (fewer than 20 characters), or null.
const INVISIBLE_LEGACY_RE = /[\p{Cc}\p{Cf}\p{Cs}\p{Default_Ignorable_Code_Point}\u2028\u2029]|(?! )\p{Zs}/u;

function defineFunctions(db: Database.Database): void {
  const text = (v: unknown): string => (typeof v === 'string' ? v : String(v));
  db.function('reglookup_key', { deterministic: true }, (u) => accountKey(text(u)));
  db.function('reglookup_prefix', { deterministic: true }, (u) => prefixOf(text(u)));
  db.function('reglookup_weak', { deterministic: true }, (u) =>
    INVISIBLE_LEGACY_RE.test(text(u)) ? 'invisible' : [...text(u)].length < 20 ? 'short' : null,
  );
}
