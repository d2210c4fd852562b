// The SQLite store is two database files, each its own write domain (SQLite allows one writer per
// file): DATABASE_URL's file holds the records, which only an import writes, and the accounts file
// beside it (reglookup.db -> reglookup.accounts.db) holds everything the service writes while it
// serves: callers, credits, usage, the audit log, Idempotency-Keys, the upstream cache. An import
// holds the records file's lock until it commits (minutes for a national register); a charge takes
// only the accounts file's. Each file is opened on a connection of its own: a connection with an
// ATTACHed file would take the write lock of both in every write transaction.
//
// A records file from before the accounts file existed (schema version 6 or older) has its account
// tables moved once, by records step 7 (migrations/sqlite.ts): the rows are copied into a new file
// under a temporary name, which is renamed into place, and only then are the tables dropped and
// step 7 recorded, in the same transaction that read them. A kill at any point leaves either the
// old layout, whole (any accounts file beside it is a copy left half-way, made again next time), or
// the new one. A release from before the move would go on writing the old tables in a file whose
// accounts had moved, so the move runs only when nothing else has the records file open: it waits
// a while for sole access, then refuses, changing nothing.

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { MigrationError, type Migration } from './migrations/runner';
import { inferVersion, migrateSqlite, recordedVersion, SQLITE_MIGRATIONS } from './migrations/sqlite';
import { ACCOUNT_TABLES, SQLITE_ACCOUNTS_MIGRATIONS } from './migrations/sqlite-accounts';
import { isBusy } from './sqlite-lock';

/** The records step that moves the account tables out (migrations/sqlite.ts). */
const ACCOUNTS_MOVED_VERSION = 7;
/** How long opening an old-layout file waits for every other process to close it before refusing. */
const SOLE_ACCESS_WAIT_MS = 10_000;

/** SQLite's names for a database of no file: in memory, or a temporary file removed on close. */
const isFileless = (file: string) => file === ':memory:' || file === '';

/** The accounts file beside a records file: the name with `.accounts` before its extension. */
export function accountsFileOf(file: string): string {
  if (isFileless(file)) return file;
  const ext = path.extname(file);
  return ext ? `${file.slice(0, -ext.length)}.accounts${ext}` : `${file}.accounts`;
}

interface SqliteFiles {
  /** The records file's connection: records and meta, written by imports. */
  readonly records: Database.Database;
  /** The accounts file's connection: everything written while serving. */
  readonly accounts: Database.Database;
  readonly accountsFile: string;
  /** Steps opening them applied, records file first. */
  readonly applied: readonly Migration[];
  readonly accountsApplied: readonly Migration[];
}

function openRecords(file: string): Database.Database {
  const db = new Database(file);
  // Only takes effect on a new file (before WAL mode and the first table).
  db.pragma('page_size = 8192');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  // Whatever temporary storage SQLite needs (a statement journal, a sort) stays in memory rather
  // than spilling to a temporary file: inside an import's one long transaction a statement
  // journal copies every page a statement changes, 4 write() calls a record when it spilled.
  db.pragma('temp_store = MEMORY');
  // Opening waits for another writer (a migration under way elsewhere) as long as the CLI may;
  // after that the connection never waits inside SQLite: writes wait in sqlite-lock.ts, off the
  // event loop (the store sets busy_timeout to 0 once open).
  db.pragma('busy_timeout = 5000');
  // Lookups are random reads across the whole table, so a page cache larger than the key index and
  // the table's interior pages (~4 MB at 110k records) mostly holds leaves that are seldom read
  // again: 8 MB. Memory-mapping the file is no faster than read() through the OS page cache, and
  // mapped pages count in the process's RSS, so the file is not mapped.
  db.pragma('mmap_size = 0');
  db.pragma('cache_size = -8192');
  return db;
}

function openAccounts(file: string): Database.Database {
  const db = new Database(file, { fileMustExist: !isFileless(file) });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('temp_store = MEMORY');
  db.pragma('busy_timeout = 5000');
  return db;
}

/**
 * Opens both files, bringing each schema up to this release: a new records file gets a new accounts
 * file (or keeps one already beside it), an old-layout one has its accounts moved out. A records
 * file past the move without its accounts file is refused: serving it would refuse every caller.
 */
export function openSqliteFiles(file: string): SqliteFiles {
  const accountsFile = accountsFileOf(file);
  if (!isFileless(file)) fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  let records = openRecords(file);
  const before = versionOf(records);
  const applied: Migration[] = [];
  if (before > 0 && before < ACCOUNTS_MOVED_VERSION) {
    // Only the old layout's users may still have it open: the move waits for them to go.
    records.close();
    applied.push(
      ...withSoleAccess(
        file,
        () =>
          new MigrationError(
            `cannot move the callers to their own file ${accountsFile}: another process has ${file} open (an earlier release still serving, or one of its commands); stop it, then start this release again (nothing was changed)`,
          ),
        (db) => migrateSqlite(db, Infinity, SQLITE_MIGRATIONS, mover(accountsFile, false)).applied,
      ),
    );
    records = openRecords(file);
  }
  try {
    applied.push(...migrateSqlite(records, Infinity, SQLITE_MIGRATIONS, mover(accountsFile, before === 0)).applied);
    if (!isFileless(accountsFile) && !fs.existsSync(accountsFile)) throw missingAccounts(file, accountsFile);
    const accounts = openAccounts(accountsFile);
    try {
      // A step that rewrites usernames as keys (step 2) zeroes what it deletes, and the log is emptied after it:
      // no copy of a username is left in the file's free space or its write-ahead log.
      accounts.pragma('secure_delete = ON');
      const accountsApplied = migrateSqlite(accounts, Infinity, SQLITE_ACCOUNTS_MIGRATIONS).applied;
      accounts.pragma('secure_delete = OFF');
      if (accountsApplied.length > 0 && !isFileless(accountsFile)) accounts.pragma('wal_checkpoint(TRUNCATE)');
      return { records, accounts, accountsFile, applied, accountsApplied };
    } catch (e) {
      accounts.close();
      throw e;
    }
  } catch (e) {
    records.close();
    throw e;
  }
}

function missingAccounts(file: string, accountsFile: string): MigrationError {
  return new MigrationError(
    `the accounts file ${accountsFile} is missing beside ${file} (it holds the callers, their credits and usage): put back the one from your backup (both files of a backup go back together), or move ${file} aside to start a new store`,
  );
}

/**
 * The schema version a records file is at: recorded, or inferred for one from before schema_version;
 * 0 for a new file.
 */
function versionOf(db: Database.Database): number {
  return recordedVersion(db) ?? inferVersion(db);
}

/** Step 7's move into `accountsFile`, for a records file that was new (`isNew`) or of the old layout. */
function mover(accountsFile: string, isNew: boolean) {
  return { moveAccounts: (db: Database.Database) => moveAccounts(db, accountsFile, isNew) };
}

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Runs `fn` on a connection that holds the file's EXCLUSIVE lock until it closes, taken only when no
 * other connection has the file open (in WAL mode every open connection holds a SHARED lock on it),
 * retried for SOLE_ACCESS_WAIT_MS; past that, refused with nothing changed.
 */
function withSoleAccess<T>(file: string, refusal: () => Error, fn: (db: Database.Database) => T): T {
  const deadline = Date.now() + SOLE_ACCESS_WAIT_MS;
  for (let pause = 5; ; pause = Math.min(pause * 2, 250)) {
    const db = new Database(file, { fileMustExist: true });
    try {
      db.pragma('busy_timeout = 0');
      // The move's commit is made durable before the service relies on it.
      db.pragma('synchronous = FULL');
      // The account tables it drops (the move) are zeroed, not left in free pages: they hold usernames.
      db.pragma('secure_delete = ON');
      try {
        db.pragma('locking_mode = EXCLUSIVE');
        db.exec('BEGIN EXCLUSIVE');
        db.exec('COMMIT');
      } catch (e) {
        if (!isBusy(e)) throw e;
        if (Date.now() >= deadline) throw refusal();
        sleepSync(pause * (0.5 + Math.random() / 2));
        continue;
      }
      return fn(db);
    } finally {
      db.close();
    }
  }
}

function tablesOf(db: Database.Database): Set<string> {
  return new Set(
    (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name),
  );
}

/** A database file and the journal, log and index files SQLite keeps beside it. */
function removeDatabase(file: string): void {
  for (const suffix of ['', '-journal', '-wal', '-shm']) fs.rmSync(`${file}${suffix}`, { force: true });
}

/**
 * Copies the account tables of the records file (`db`, inside step 7's transaction) into a new
 * accounts file. An accounts file already there is kept beside a new records file (`isNew`: the
 * records were removed to start again) and replaced beside an old-layout one, whose tables are the
 * callers as they are now (it is a copy left by a move that was killed, or older than the backup
 * restored over the records file).
 */
function moveAccounts(db: Database.Database, accountsFile: string, isNew: boolean): void {
  if (isFileless(accountsFile) || (isNew && fs.existsSync(accountsFile))) return;
  const present = ACCOUNT_TABLES.filter((t) => tablesOf(db).has(t));
  const partial = `${accountsFile}.partial-${process.pid}`;
  removeDatabase(partial);
  const out = new Database(partial);
  try {
    out.pragma('synchronous = FULL');
    migrateSqlite(out, 1, SQLITE_ACCOUNTS_MIGRATIONS);
    out.transaction(() => copyTables(db, out, present))();
  } catch (e) {
    out.close();
    removeDatabase(partial);
    throw e;
  }
  out.close();
  // Nothing uses the accounts file while the records file is before step 7: any log beside it is stale.
  for (const suffix of ['-journal', '-wal', '-shm']) fs.rmSync(`${accountsFile}${suffix}`, { force: true });
  fs.renameSync(partial, accountsFile);
  syncFolder(path.dirname(path.resolve(accountsFile)));
}

/** Every row of `tables`, column for column, and the AUTOINCREMENT counters (audit ids keep growing). */
function copyTables(from: Database.Database, to: Database.Database, tables: readonly string[]): void {
  for (const table of tables) {
    const cols = (from.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
    const list = cols.join(', ');
    const insert = to.prepare(`INSERT INTO ${table} (${list}) VALUES (${cols.map(() => '?').join(', ')})`);
    for (const row of from.prepare(`SELECT ${list} FROM ${table}`).raw().iterate()) insert.run(...(row as unknown[]));
  }
  if (!tablesOf(from).has('sqlite_sequence') || !tablesOf(to).has('sqlite_sequence')) return;
  const seq = from.prepare('SELECT seq FROM sqlite_sequence WHERE name = ?');
  for (const table of tables) {
    const row = seq.get(table) as { seq: number } | undefined;
    if (!row) continue;
    to.prepare('DELETE FROM sqlite_sequence WHERE name = ?').run(table);
    to.prepare('INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)').run(table, row.seq);
  }
}

/** A rename is durable once its folder is synced. */
function syncFolder(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** What `migrate --to 6` did. */
interface MovedBack {
  /** False: the file was at schema version 6 or older already, with its accounts in it. */
  readonly moved: boolean;
  readonly accountsFile: string;
}

/**
 * `reglookup migrate --to 6`: the account tables copied back into the records file, step 7's record
 * removed, then the accounts file removed, so that a release from before the accounts file (0.3)
 * opens the store with its callers. Run only while no other process has either file open. A kill
 * before the commit changes nothing; after it, the accounts file left behind is what a later move
 * replaces, and a 0.3 release never reads.
 */
export function moveAccountsBack(file: string): MovedBack {
  const accountsFile = accountsFileOf(file);
  const peek = new Database(file, { fileMustExist: true });
  const version = (() => {
    try {
      return versionOf(peek);
    } finally {
      peek.close();
    }
  })();
  if (version < ACCOUNTS_MOVED_VERSION) return { moved: false, accountsFile };
  if (version > ACCOUNTS_MOVED_VERSION)
    throw new MigrationError(`${file} is at schema version ${version}; this release takes back only version 7`);
  if (!fs.existsSync(accountsFile)) throw missingAccounts(file, accountsFile);
  const busy = (which: string) => () =>
    new MigrationError(
      `cannot move the callers back into ${file}: another process has ${which} open (the service, or one of its commands); stop it, then run this again (nothing was changed)`,
    );
  withSoleAccess(file, busy(file), (records) =>
    withSoleAccess(accountsFile, busy(accountsFile), (accounts) => {
      const at = recordedVersion(accounts) ?? 0;
      // Step 2 keyed the callers by a hash of their usernames (and step 3, batch jobs, comes after it).
      if (at >= 2)
        throw new MigrationError(
          `${accountsFile} keys its callers by a hash of their usernames, which a release before the accounts file cannot read (it finds a caller by its username); to go back, restore the backup taken before this release (nothing was changed)`,
        );
      records.transaction(() => {
        for (const t of ACCOUNT_TABLES) {
          const ddl = accounts
            .prepare('SELECT sql FROM sqlite_master WHERE tbl_name = ? AND sql IS NOT NULL ORDER BY type DESC')
            .all(t) as { sql: string }[];
          for (const d of ddl) records.exec(d.sql);
        }
        copyTables(accounts, records, ACCOUNT_TABLES);
        records.prepare('DELETE FROM schema_version WHERE version >= ?').run(ACCOUNTS_MOVED_VERSION);
      })();
    }),
  );
  removeDatabase(accountsFile);
  return { moved: true, accountsFile };
}
