// The embedded store: two SQLite files through better-sqlite3 (sqlite-layout.ts): the records, which
// only an import writes, and the accounts file beside it, which the service writes as it serves, so
// that an import's one long transaction never holds up a charge. A unique index on the lookup key
// makes a lookup two short b-tree probes at any size. (Not WITHOUT ROWID: a record's row is near the
// ~1 KB such a table keeps in its leaf pages, so many rows would spill into an overflow page, and
// rows inserted in key order fill its pages only half after random-order imports.) A row is the
// key and the payload, nothing else: rows are appended in rowid order, so table pages come out
// full, and the file is about the size of the NDJSON it was imported from.

import Database from 'better-sqlite3';
import { SqliteAdmin } from './sqlite-admin';
import { SqliteBatches } from './sqlite-batches';
import { SqliteAccounts } from './sqlite-accounts';
import { migrateSqlite } from './migrations/sqlite';
import { SQLITE_ACCOUNTS_MIGRATIONS } from './migrations/sqlite-accounts';
import { accountsFileOf, openSqliteFiles } from './sqlite-layout';
import { withWriteLock } from './sqlite-lock';
import type { Migration, MigrationReport } from './migrations/runner';
import { cacheWhere, type CacheEntry, type CacheFilter, type CachedAnswer, type CacheStatsRow } from './cache';
import {
  AS_OF_END,
  AS_OF_PREFIX,
  ImportTimes,
  importTimesOf,
  StoreUnavailableError,
  type FoundRecord,
  type ImportBatch,
  type ImportOptions,
  type BackupOptions,
  type Progress,
  type RecordKey,
  type StoredRecord,
  type StoreWatcher,
  type VehicleStore,
  type ImportRun,
  importRunOf,
  LAST_IMPORT_KEY,
} from './store';

/** Page cache of an import's connection while the batch is open (KiB, as SQLite's negative cache_size). */
const IMPORT_CACHE_KIB = -32768;
const BACKUP_PAGES_PER_STEP = 4096;

export class SqliteStore implements VehicleStore {
  /** The records file's connection. */
  private readonly db: Database.Database;
  /** The accounts file's connection: callers, usage, audit, Idempotency-Keys, the upstream cache. */
  private readonly accountsDb: Database.Database;
  private readonly getStmt: Database.Statement<[string, string, string], FoundRecord>;
  private readonly putStmt: Database.Statement<[string, string, string, string]>;
  /** Callers, credits, daily counts, usage: sqlite-accounts.ts, on the accounts file's connection. */
  readonly accounts: SqliteAccounts;
  /** Pages of callers, keyed top-ups, the audit log, billing: sqlite-admin.ts. */
  readonly admin: SqliteAdmin;
  /** Batch jobs, in the accounts file: sqlite-batches.ts. */
  readonly batches: SqliteBatches;
  private readonly deleteStmt: Database.Statement<[string, string, string]>;
  private cacheGetStmt: Database.Statement<[string, string, string]> | undefined;
  private importing = false;
  private readonly beginStmt: Database.Statement<[]>;
  private readonly commitStmt: Database.Statement<[]>;
  private sharing = false;
  private watcher: StoreWatcher | null = null;
  /** Since when writes have failed for want of the store (0: they have not). */
  private writesDownSince = 0;
  private readonly file: string;
  private readonly accountsFile: string;
  /** Steps opening the files applied, reported by the first migrate() (`reglookup migrate`, serve's log). */
  private unreported: Migration[];
  private unreportedAccounts: Migration[];

  constructor(file: string) {
    this.file = file;
    // Both schemas (migrations/) before any statement is prepared against them. A file written by an
    // older release is upgraded in place; one written by a newer release is refused here.
    const files = openSqliteFiles(file);
    this.db = files.records;
    this.accountsDb = files.accounts;
    this.accountsFile = files.accountsFile;
    this.unreported = [...files.applied];
    this.unreportedAccounts = [...files.accountsApplied];
    this.getStmt = this.db.prepare(
      'SELECT payload FROM records WHERE operation = ? AND registration = ? AND state = ?',
    );
    this.putStmt = this.db.prepare(
      'INSERT INTO records (operation, registration, state, payload) VALUES (?, ?, ?, ?) ' +
        'ON CONFLICT (operation, registration, state) DO UPDATE SET payload = excluded.payload',
    );
    this.db.pragma('busy_timeout = 0');
    this.accountsDb.pragma('busy_timeout = 0');
    this.accounts = new SqliteAccounts(
      this.accountsDb,
      { written: () => this.writesAgain(), failed: (e) => this.writeFailed(e) },
      this.accountsFile,
    );
    this.admin = new SqliteAdmin(this.accountsDb, this.accounts);
    this.batches = new SqliteBatches(this.accountsDb, (fn) => this.accounts.write(fn));
    this.deleteStmt = this.db.prepare('DELETE FROM records WHERE operation = ? AND registration = ? AND state = ?');
    this.beginStmt = this.db.prepare('BEGIN');
    this.commitStmt = this.db.prepare('COMMIT');
  }

  watch(watcher: StoreWatcher): void {
    this.watcher = watcher;
  }

  /**
   * A write that failed for want of the store (a full disk, the lock held past the wait): told to the watcher once per
   * outage.
   */
  private writeFailed(e: unknown): void {
    if (!(e instanceof StoreUnavailableError)) return;
    if (this.writesDownSince === 0) {
      this.writesDownSince = Date.now();
      this.watcher?.down('SQLite', e.message, e.problem);
    }
    this.watcher?.refused('SQLite', 1);
  }

  private writesAgain(): void {
    if (this.writesDownSince === 0) return;
    const downMs = Date.now() - this.writesDownSince;
    this.writesDownSince = 0;
    this.watcher?.up('SQLite', downMs, 'takes writes again');
  }

  /**
   * Applies the steps this file lacks (up to `upTo`) and reports them, with those that opening it
   * applied and no migrate() call has reported yet: so `reglookup migrate` and the service's start
   * say what changed, as they do on PostgreSQL.
   */
  async migrate(upTo = Infinity): Promise<MigrationReport> {
    if (this.importing) throw new Error('an import is running on this store');
    const now = await withWriteLock(() => {
      this.endSharedRead();
      return migrateSqlite(this.db, upTo);
    }, this.file);
    const accounts = await withWriteLock(
      () => migrateSqlite(this.accountsDb, Infinity, SQLITE_ACCOUNTS_MIGRATIONS),
      this.accountsFile,
    );
    const report = {
      applied: [...this.unreported, ...now.applied],
      version: now.version,
      accounts: { applied: [...this.unreportedAccounts, ...accounts.applied], version: accounts.version },
    };
    this.unreported = [];
    this.unreportedAccounts = [];
    return report;
  }

  /**
   * Lookups made in one turn of the event loop share one read transaction: each transaction of its
   * own costs SQLite two fcntl() lock calls and an fstat(), which on a busy virtual machine are a
   * large part of a lookup. The snapshot lives for that turn only. Other reads may share it; every
   * write (and close) ends it first, so that a write is never held in it or refused as stale.
   */
  private shareRead(): void {
    if (this.sharing || this.db.inTransaction) return;
    this.beginStmt.run();
    this.sharing = true;
    setImmediate(() => this.endSharedRead());
  }

  private endSharedRead(): void {
    if (!this.sharing) return;
    this.sharing = false;
    if (this.db.inTransaction) this.commitStmt.run();
  }

  async get(key: RecordKey): Promise<FoundRecord | null> {
    this.shareRead();
    return this.getStmt.get(key.operation, key.registration, key.state) ?? null;
  }

  /**
   * How SQLite runs the statement a lookup really uses (EXPLAIN QUERY PLAN of its own text), so that
   * a test can hold it to an index search without keeping a copy of the SQL.
   */
  lookupPlan(): string {
    const rows = this.db.prepare(`EXPLAIN QUERY PLAN ${this.getStmt.source}`).all('', '', '') as { detail: string }[];
    return rows.map((r) => r.detail).join('; ');
  }

  async isEmpty(): Promise<boolean> {
    return this.db.prepare('SELECT 1 FROM records LIMIT 1').get() === undefined;
  }

  async count(): Promise<number> {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM records').get() as { n: number }).n;
  }

  async countByOperation(): Promise<Record<string, number>> {
    const rows = this.db.prepare('SELECT operation, COUNT(*) AS n FROM records GROUP BY operation').all() as {
      operation: string;
      n: number;
    }[];
    return Object.fromEntries(rows.map((r) => [r.operation, r.n]));
  }

  /**
   * One write transaction (BEGIN IMMEDIATE) for the whole import: WAL readers, in this process or
   * another, keep the snapshot they began with until it commits. A replace deletes the replaced
   * operations' rows at the start of that transaction; nobody sees the gap. While it is open it
   * holds the records file's write lock, which only another import (or a migration) waits for: the
   * service's writes go to the accounts file.
   */
  async beginImport(options: ImportOptions = {}): Promise<ImportBatch> {
    this.endSharedRead();
    if (this.importing) throw new Error('an import is already running on this store');
    this.importing = true;
    try {
      await withWriteLock(() => {
        this.endSharedRead();
        this.db.exec('BEGIN IMMEDIATE');
      }, this.file);
    } catch (e) {
      this.importing = false;
      throw e;
    }
    // A bulk write touches index pages all over the key b-tree: a larger page cache for the batch
    // keeps them, instead of reading them back from the log (restored at the end).
    const cacheBefore = this.db.pragma('cache_size', { simple: true }) as number;
    this.db.pragma(`cache_size = ${IMPORT_CACHE_KIB}`);
    const replace = options.replace;
    const dropOperation = this.db.prepare('DELETE FROM records WHERE operation = ?');
    if (replace === 'all') this.db.exec('DELETE FROM records');
    else if (replace) for (const op of replace) dropOperation.run(op);
    let open = true;
    const finish = (sql: string) => {
      if (!open) return;
      open = false;
      this.importing = false;
      try {
        // SQLite rolls a transaction back itself on some failures (SQLITE_FULL): a ROLLBACK then
        // would only fail with "no transaction is active" and hide that failure.
        if (sql !== 'ROLLBACK' || this.db.inTransaction) this.db.exec(sql);
      } finally {
        this.db.pragma(`cache_size = ${cacheBefore}`);
      }
    };
    const put = this.putStmt;
    const del = this.deleteStmt;
    const times = new ImportTimes(replace, options.asOf ?? Date.now());
    const holds = this.db.prepare('SELECT 1 FROM records WHERE operation = ? LIMIT 1');
    // Once the batch has ended its writes would go straight to the file, outside any transaction.
    const live = () => {
      if (!open) throw new Error('this import has ended');
    };
    return {
      put: async (r: StoredRecord) => {
        live();
        if (!times.seen(r.operation))
          times.saw(r.operation, !times.replaced(r.operation) && holds.get(r.operation) !== undefined);
        put.run(r.operation, r.registration, r.state, r.payload);
      },
      delete: async (k: RecordKey) => {
        live();
        del.run(k.operation, k.registration, k.state);
      },
      replaceOperation: async (operation: string) => {
        live();
        if (replace !== 'all') dropOperation.run(operation);
        times.addReplaced(operation);
      },
      commit: async () => {
        if (!open) return;
        if (options.sample)
          this.db.prepare("INSERT INTO meta (key, value) VALUES ('sample', '1') ON CONFLICT (key) DO NOTHING").run();
        else this.db.prepare("DELETE FROM meta WHERE key = 'sample'").run();
        this.writeImportTimes(times);
        finish('COMMIT');
      },
      rollback: async () => finish('ROLLBACK'),
    };
  }

  /** The batch's import times (ImportTimes), in its transaction. */
  private writeImportTimes(times: ImportTimes): void {
    const w = times.writes(() => true);
    const remove = this.db.prepare('DELETE FROM meta WHERE key = ?');
    if (w.clearAll) this.db.prepare('DELETE FROM meta WHERE key >= ? AND key < ?').run(AS_OF_PREFIX, AS_OF_END);
    for (const op of w.clear) remove.run(AS_OF_PREFIX + op);
    const set = this.db.prepare(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    );
    for (const op of w.set) set.run(AS_OF_PREFIX + op, String(times.at));
    const lower = this.db.prepare('UPDATE meta SET value = ? WHERE key = ? AND CAST(value AS INTEGER) > ?');
    for (const op of w.lower) lower.run(String(times.at), AS_OF_PREFIX + op, times.at);
  }

  async importTimes(): Promise<ReadonlyMap<string, number>> {
    const rows = this.db
      .prepare('SELECT key, value FROM meta WHERE key >= ? AND key < ?')
      .all(AS_OF_PREFIX, AS_OF_END) as { key: string; value: string }[];
    return importTimesOf(rows);
  }

  async holdsOnlySample(): Promise<boolean> {
    return this.db.prepare("SELECT 1 FROM meta WHERE key = 'sample'").get() !== undefined;
  }

  async noteImport(run: ImportRun): Promise<void> {
    this.db
      .prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value')
      .run(LAST_IMPORT_KEY, JSON.stringify(run));
  }

  async lastImport(): Promise<ImportRun | null> {
    const row = this.db.prepare('SELECT value FROM meta WHERE key = ?').get(LAST_IMPORT_KEY) as
      { value: string } | undefined;
    return importRunOf(row?.value);
  }

  /**
   * Pages of 1,000 rows in key order, by the key index (keyset paging, so a page costs the same
   * at any depth). A file store reads them through a connection of its own, inside one read
   * transaction: one snapshot for the whole pass, while this connection serves and writes.
   */
  async *records(): AsyncIterable<StoredRecord> {
    const own = this.file !== ':memory:' && this.file !== '';
    const db = own ? new Database(this.file, { readonly: true, fileMustExist: true }) : this.db;
    if (!own) this.endSharedRead();
    const page = db.prepare(
      'SELECT operation, registration, state, payload FROM records WHERE (operation, registration, state) > (?, ?, ?) ' +
        'ORDER BY operation, registration, state LIMIT 1000',
    );
    try {
      if (own) {
        db.pragma('cache_size = -8192');
        db.exec('BEGIN');
      }
      let last: StoredRecord | null = null;
      for (;;) {
        const rows = page.all(last?.operation ?? '', last?.registration ?? '', last?.state ?? '') as StoredRecord[];
        if (rows.length === 0) break;
        for (const r of rows) yield r;
        last = rows[rows.length - 1];
      }
    } finally {
      if (own) {
        if (db.inTransaction) db.exec('COMMIT');
        db.close();
      }
    }
  }

  /** A backup is two files, as the store is: `dest` for the records and its accounts file beside it. */
  backupFiles(dest: string): readonly string[] {
    return [dest, accountsFileOf(dest)];
  }

  /**
   * SQLite's online backup of each file, records first, a few thousand pages a step so the event
   * loop keeps serving between steps. A write through another connection restarts a running backup;
   * if that happens, the rest is copied in one step (one read transaction: consistent, and never
   * restarted again). Each copy is one snapshot of its file; nothing in one file refers to the other.
   */
  async backup(dests: readonly string[], progress?: Progress, options: BackupOptions = {}): Promise<void> {
    const [recordsDest, accountsDest] = dests;
    this.endSharedRead();
    const accountsPages = this.accountsDb.pragma('page_count', { simple: true }) as number;
    let recordsPages = 0;
    await copyTo(this.db, recordsDest, (done, total) => {
      recordsPages = total;
      progress?.(done, total + accountsPages);
    });
    await copyTo(this.accountsDb, accountsDest, (done, total) => progress?.(recordsPages + done, recordsPages + total));
    if (options.withCache) return;
    // Fetched answers stay out unless asked for: the copy's cache table is emptied (and its pages freed).
    const copy = new Database(accountsDest);
    try {
      copy.exec('DELETE FROM upstream_cache');
      copy.exec('VACUUM');
    } finally {
      copy.close();
    }
  }

  // The upstream cache (cache.ts): a table of the accounts file, so that caching a fetched answer
  // never waits for an import either.
  async cacheGet(key: RecordKey): Promise<CachedAnswer | null> {
    this.cacheGetStmt ??= this.accountsDb.prepare(
      'SELECT payload, provider, fetched_at AS fetchedAt FROM upstream_cache WHERE operation = ? AND registration = ? AND state = ?',
    );
    return (this.cacheGetStmt.get(key.operation, key.registration, key.state) as CachedAnswer | undefined) ?? null;
  }

  async cachePut(e: CacheEntry): Promise<void> {
    await withWriteLock(() => {
      this.accountsDb
        .prepare(
          'INSERT INTO upstream_cache (operation, registration, state, provider, fetched_at, payload) VALUES (?, ?, ?, ?, ?, ?) ' +
            'ON CONFLICT (operation, registration, state) DO UPDATE SET provider = excluded.provider, fetched_at = excluded.fetched_at, payload = excluded.payload',
        )
        .run(e.operation, e.registration, e.state, e.provider, e.fetchedAt, e.payload);
    }, this.accountsFile);
  }

  async cacheStats(filter: CacheFilter = {}): Promise<CacheStatsRow[]> {
    const { where, values } = cacheWhere(filter, false);
    const sql =
      'SELECT operation, provider, SUM(payload IS NOT NULL) AS found, SUM(payload IS NULL) AS notFound, MIN(fetched_at) AS oldest, MAX(fetched_at) AS newest ' +
      `FROM upstream_cache${where} GROUP BY operation, provider ORDER BY operation, provider`;
    return this.accountsDb.prepare(sql).all(...values) as CacheStatsRow[];
  }

  async cachePurge(filter: CacheFilter = {}): Promise<number> {
    const { where, values } = cacheWhere(filter, false);
    return withWriteLock(
      () => this.accountsDb.prepare(`DELETE FROM upstream_cache${where}`).run(...values).changes,
      this.accountsFile,
    );
  }

  async *cacheEntries(): AsyncIterable<CacheEntry> {
    const page = this.accountsDb.prepare(
      'SELECT operation, registration, state, provider, fetched_at AS fetchedAt, payload FROM upstream_cache WHERE (operation, registration, state) > (?, ?, ?) ORDER BY operation, registration, state LIMIT 1000',
    );
    let last: CacheEntry | null = null;
    for (;;) {
      const rows = page.all(last?.operation ?? '', last?.registration ?? '', last?.state ?? '') as CacheEntry[];
      if (rows.length === 0) break;
      for (const r of rows) yield r;
      last = rows[rows.length - 1];
    }
  }

  async close(): Promise<void> {
    this.endSharedRead();
    if (this.db.open) this.db.close();
    if (this.accountsDb.open) this.accountsDb.close();
  }
}

/** One file's online backup into `dest`, `progress` in pages. */
async function copyTo(db: Database.Database, dest: string, progress: Progress): Promise<void> {
  let lastRemaining = Infinity;
  let restarted = false;
  await db.backup(dest, {
    progress: ({ totalPages, remainingPages }) => {
      if (remainingPages > lastRemaining) restarted = true;
      lastRemaining = remainingPages;
      progress(totalPages - remainingPages, totalPages);
      return restarted ? Math.max(totalPages, 1) : BACKUP_PAGES_PER_STEP;
    },
  });
}
