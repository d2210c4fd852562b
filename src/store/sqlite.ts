// The embedded store: one SQLite file through better-sqlite3. A unique index on the lookup key makes
// a lookup two short b-tree probes at any size. (Not WITHOUT ROWID: a record's row is near the
// ~1 KB such a table keeps in its leaf pages, so many rows would spill into an overflow page, and
// rows inserted in key order fill its pages only half after random-order imports.) A row is the
// key and the payload, nothing else: rows are appended in rowid order, so table pages come out
// full, and the file is about the size of the NDJSON it was imported from.

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type {
  Account,
  AccountChanges,
  AccountInput,
  AccountSummary,
  ChargeResult,
  CreditResult,
  UsageCount,
} from './accounts';
import { SqliteAdmin } from './sqlite-admin';
import { SqliteAccounts } from './sqlite-accounts';
import { migrateSqlite } from './migrations/sqlite';
import { withWriteLock } from './sqlite-lock';
import type { Migration, MigrationReport } from './migrations/runner';
import { cacheWhere, type CacheEntry, type CacheFilter, type CachedAnswer, type CacheStatsRow } from './cache';
import {
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
} from './store';

/** Page cache of an import's connection while the batch is open (KiB, as SQLite's negative cache_size). */
const IMPORT_CACHE_KIB = -32768;
const BACKUP_PAGES_PER_STEP = 4096;

export class SqliteStore implements VehicleStore {
  private readonly db: Database.Database;
  private readonly getStmt: Database.Statement<[string, string, string], FoundRecord>;
  private readonly putStmt: Database.Statement<[string, string, string, string]>;
  private readonly accounts: SqliteAccounts;
  /** Pages of callers, keyed top-ups, the audit log, billing: sqlite-admin.ts. */
  readonly admin: SqliteAdmin;
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
  /** Steps opening the file applied, reported by the first migrate() (`reglookup migrate`, serve's log). */
  private unreported: Migration[];

  constructor(file: string) {
    this.file = file;
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    this.db = new Database(file);
    // Only takes effect on a new file (before WAL mode and the first table).
    this.db.pragma('page_size = 8192');
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    // Whatever temporary storage SQLite needs (a statement journal, a sort) stays in memory rather
    // than spilling to a temporary file: inside an import's one long transaction a statement
    // journal copies every page a statement changes, 4 write() calls a record when it spilled.
    this.db.pragma('temp_store = MEMORY');
    // Opening waits for another writer (a migration under way elsewhere) as long as the CLI may;
    // after that the connection never waits inside SQLite: writes wait in sqlite-lock.ts, off the
    // event loop.
    this.db.pragma('busy_timeout = 5000');
    // Lookups are random reads across the whole table, so a page cache larger than the key index and
    // the table's interior pages (~4 MB at 110k records) mostly holds leaves that are seldom read
    // again: 8 MB. Memory-mapping the file measured no faster than read() through the OS page cache,
    // and mapped pages count in the process's RSS (+100 MB), so the file is not mapped.
    this.db.pragma('mmap_size = 0');
    this.db.pragma('cache_size = -8192');
    // The schema (migrations/sqlite.ts) before any statement is prepared against it. A file written
    // by an older release is upgraded in place; one written by a newer release is refused here.
    this.unreported = [...migrateSqlite(this.db).applied];
    this.getStmt = this.db.prepare(
      'SELECT payload FROM records WHERE operation = ? AND registration = ? AND state = ?',
    );
    this.putStmt = this.db.prepare(
      'INSERT INTO records (operation, registration, state, payload) VALUES (?, ?, ?, ?) ' +
        'ON CONFLICT (operation, registration, state) DO UPDATE SET payload = excluded.payload',
    );
    this.db.pragma('busy_timeout = 0');
    this.accounts = new SqliteAccounts(
      this.db,
      {
        beforeWrite: () => this.endSharedRead(),
        written: () => this.writesAgain(),
        failed: (e) => this.writeFailed(e),
      },
      file,
    );
    this.admin = new SqliteAdmin(this.db, this.accounts);
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
    const report = { applied: [...this.unreported, ...now.applied], version: now.version };
    this.unreported = [];
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
   * holds SQLite's one write lock: another writer (a credit taken by a server) waits up to
   * busy_timeout.
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
    // Once the batch has ended its writes would go straight to the file, outside any transaction.
    const live = () => {
      if (!open) throw new Error('this import has ended');
    };
    return {
      put: async (r: StoredRecord) => {
        live();
        put.run(r.operation, r.registration, r.state, r.payload);
      },
      delete: async (k: RecordKey) => {
        live();
        del.run(k.operation, k.registration, k.state);
      },
      replaceOperation: async (operation: string) => {
        live();
        if (replace !== 'all') dropOperation.run(operation);
      },
      commit: async () => {
        if (!open) return;
        if (options.sample)
          this.db.prepare("INSERT INTO meta (key, value) VALUES ('sample', '1') ON CONFLICT (key) DO NOTHING").run();
        else this.db.prepare("DELETE FROM meta WHERE key = 'sample'").run();
        finish('COMMIT');
      },
      rollback: async () => finish('ROLLBACK'),
    };
  }

  async holdsOnlySample(): Promise<boolean> {
    return this.db.prepare("SELECT 1 FROM meta WHERE key = 'sample'").get() !== undefined;
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

  /**
   * SQLite's online backup, a few thousand pages a step so the event loop keeps serving between
   * steps. A write through another connection restarts a running backup; if that happens, the
   * rest is copied in one step (one read transaction: consistent, and never restarted again).
   */
  async backup(dest: string, progress?: Progress, options: BackupOptions = {}): Promise<void> {
    await this.copyTo(dest, progress);
    if (options.withCache) return;
    // Fetched answers stay out unless asked for: the copy's cache table is emptied (and its pages freed).
    const copy = new Database(dest);
    try {
      copy.exec('DELETE FROM upstream_cache');
      copy.exec('VACUUM');
    } finally {
      copy.close();
    }
  }

  private async copyTo(dest: string, progress?: Progress): Promise<void> {
    this.endSharedRead();
    let lastRemaining = Infinity;
    let restarted = false;
    await this.db.backup(dest, {
      progress: ({ totalPages, remainingPages }) => {
        if (remainingPages > lastRemaining) restarted = true;
        lastRemaining = remainingPages;
        progress?.(totalPages - remainingPages, totalPages);
        return restarted ? Math.max(totalPages, 1) : BACKUP_PAGES_PER_STEP;
      },
    });
  }

  // The upstream cache (cache.ts): a table of its own on this handle.
  async cacheGet(key: RecordKey): Promise<CachedAnswer | null> {
    this.shareRead();
    this.cacheGetStmt ??= this.db.prepare(
      'SELECT payload, provider, fetched_at AS fetchedAt FROM upstream_cache WHERE operation = ? AND registration = ? AND state = ?',
    );
    return (this.cacheGetStmt.get(key.operation, key.registration, key.state) as CachedAnswer | undefined) ?? null;
  }

  async cachePut(e: CacheEntry): Promise<void> {
    await withWriteLock(() => {
      this.endSharedRead();
      this.db
        .prepare(
          'INSERT INTO upstream_cache (operation, registration, state, provider, fetched_at, payload) VALUES (?, ?, ?, ?, ?, ?) ' +
            'ON CONFLICT (operation, registration, state) DO UPDATE SET provider = excluded.provider, fetched_at = excluded.fetched_at, payload = excluded.payload',
        )
        .run(e.operation, e.registration, e.state, e.provider, e.fetchedAt, e.payload);
    }, this.file);
  }

  async cacheStats(filter: CacheFilter = {}): Promise<CacheStatsRow[]> {
    this.endSharedRead();
    const { where, values } = cacheWhere(filter, false);
    const sql =
      'SELECT operation, provider, SUM(payload IS NOT NULL) AS found, SUM(payload IS NULL) AS notFound, MIN(fetched_at) AS oldest, MAX(fetched_at) AS newest ' +
      `FROM upstream_cache${where} GROUP BY operation, provider ORDER BY operation, provider`;
    return this.db.prepare(sql).all(...values) as CacheStatsRow[];
  }

  async cachePurge(filter: CacheFilter = {}): Promise<number> {
    const { where, values } = cacheWhere(filter, false);
    return withWriteLock(() => {
      this.endSharedRead();
      return this.db.prepare(`DELETE FROM upstream_cache${where}`).run(...values).changes;
    }, this.file);
  }

  async *cacheEntries(): AsyncIterable<CacheEntry> {
    this.endSharedRead();
    const page = this.db.prepare(
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

  // Accounts, daily counts and usage: sqlite-accounts.ts, on this database handle.
  getAccount(username: string): Promise<Account | null> {
    return this.accounts.getAccount(username);
  }
  addAccount(account: AccountInput): Promise<boolean> {
    return this.accounts.addAccount(account);
  }
  putAccount(account: AccountInput): Promise<void> {
    return this.accounts.putAccount(account);
  }
  updateAccount(username: string, changes: AccountChanges, day: string): Promise<Account | null> {
    return this.accounts.updateAccount(username, changes, day);
  }
  addCredits(username: string, delta: number): Promise<CreditResult> {
    return this.accounts.addCredits(username, delta);
  }
  setEnabled(username: string, enabled: boolean): Promise<boolean> {
    return this.accounts.setEnabled(username, enabled);
  }
  removeAccount(username: string): Promise<boolean> {
    return this.accounts.removeAccount(username);
  }
  listAccounts(day: string): Promise<AccountSummary[]> {
    return this.accounts.listAccounts(day);
  }
  charge(username: string, day: string, operation?: string): Promise<ChargeResult> {
    return this.accounts.charge(username, day, operation);
  }
  addUsage(counts: readonly UsageCount[]): Promise<void> {
    return this.accounts.addUsage(counts);
  }
  usage(username: string, fromDay: string): Promise<UsageCount[]> {
    return this.accounts.usage(username, fromDay);
  }
  pruneUsage(beforeDay: string): Promise<number> {
    return this.accounts.pruneUsage(beforeDay);
  }

  async close(): Promise<void> {
    this.endSharedRead();
    if (this.db.open) this.db.close();
  }
}
