// The embedded store: one SQLite file through better-sqlite3. A unique index on the lookup key makes
// a lookup two short b-tree probes at any size. (Not WITHOUT ROWID: a record's row is over the
// ~1 KB such a table keeps in its leaf pages, and every row would spill into an overflow page.)
// A record's prepared answers sit in its own row beside its payload, so a lookup reads one row;
// with 8 KB pages two such rows (~4 KB each) share a page instead of each taking a 4 KB page and
// an overflow page.

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Account, FoundRecord, ImportBatch, PreparedForms, RecordKey, StoredRecord, VehicleStore } from './store';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS records (
  id           INTEGER PRIMARY KEY,
  operation    TEXT NOT NULL,
  registration TEXT NOT NULL,
  state        TEXT NOT NULL DEFAULT '',
  payload      TEXT NOT NULL,
  prepared     TEXT
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
`;

const TRIGGERS = `
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
`;

export class SqliteStore implements VehicleStore {
  private readonly db: Database.Database;
  private readonly getStmt: Database.Statement<[string, string, string], FoundRecord>;
  private readonly putStmt: Database.Statement<[string, string, string, string, string | null]>;
  private readonly accountStmt: Database.Statement<[string], Account>;
  private readonly creditStmt: Database.Statement<[string]>;
  private importing = false;
  private readonly beginStmt: Database.Statement<[]>;
  private readonly commitStmt: Database.Statement<[]>;
  private sharing = false;

  constructor(file: string) {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    this.db = new Database(file);
    // Only takes effect on a new file (before WAL mode and the first table).
    this.db.pragma('page_size = 8192');
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    // Lookups are random reads across the whole table, so a page cache larger than the key index and
    // the table's interior pages (~4 MB at 110k records) mostly holds leaves that are seldom read
    // again: 8 MB. Memory-mapping the file measured no faster than read() through the OS page cache,
    // and mapped pages count in the process's RSS (+100 MB), so the file is not mapped.
    this.db.pragma('mmap_size = 0');
    this.db.pragma('cache_size = -8192');
    this.db.exec(SCHEMA);
    // A store written before answers were prepared: the column is added; its records have none yet.
    const columns = this.db.prepare('PRAGMA table_info(records)').all() as { name: string }[];
    if (!columns.some((c) => c.name === 'prepared')) this.db.exec('ALTER TABLE records ADD COLUMN prepared TEXT');
    this.db.exec(TRIGGERS);
    this.getStmt = this.db.prepare('SELECT payload, prepared FROM records WHERE operation = ? AND registration = ? AND state = ?');
    this.putStmt = this.db.prepare(
      'INSERT INTO records (operation, registration, state, payload, prepared) VALUES (?, ?, ?, ?, ?) ' +
        'ON CONFLICT (operation, registration, state) DO UPDATE SET payload = excluded.payload, prepared = excluded.prepared',
    );
    this.accountStmt = this.db.prepare('SELECT username, credits FROM accounts WHERE username = ?');
    this.creditStmt = this.db.prepare('UPDATE accounts SET credits = credits - 1 WHERE username = ? AND credits > 0');
    this.beginStmt = this.db.prepare('BEGIN');
    this.commitStmt = this.db.prepare('COMMIT');
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

  async preparedVersion(): Promise<string | null> {
    const row = this.db.prepare("SELECT value FROM meta WHERE key = 'prepared_version'").get() as { value: string } | undefined;
    return row ? row.value : null;
  }

  private setPreparedVersion(version: string): void {
    this.db.prepare("INSERT INTO meta (key, value) VALUES ('prepared_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(version);
  }

  async prepareAll(forms: PreparedForms): Promise<number> {
    return this.prepareRows(forms, 'SELECT id, operation, payload FROM records WHERE id > ? ORDER BY id LIMIT 1000', true);
  }

  async prepareMissing(forms: PreparedForms): Promise<number> {
    return this.prepareRows(forms, 'SELECT id, operation, payload FROM records WHERE prepared IS NULL AND id > ? ORDER BY id LIMIT 1000', false);
  }

  private prepareRows(forms: PreparedForms, select: string, allOfThem: boolean): number {
    if (this.importing) throw new Error('an import is running on this store');
    this.endSharedRead();
    const page = this.db.prepare(select);
    const update = this.db.prepare('UPDATE records SET prepared = ? WHERE id = ?');
    let done = 0;
    this.db.transaction(() => {
      for (let last = -1; ; ) {
        const rows = page.all(last) as { id: number; operation: string; payload: string }[];
        if (rows.length === 0) break;
        for (const r of rows) update.run(forms.make(r.operation, r.payload), r.id);
        done += rows.length;
        last = rows[rows.length - 1].id;
      }
      if (allOfThem) this.setPreparedVersion(forms.version);
    })();
    return done;
  }

  async isEmpty(): Promise<boolean> {
    return this.db.prepare('SELECT 1 FROM records LIMIT 1').get() === undefined;
  }

  async count(): Promise<number> {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM records').get() as { n: number }).n;
  }

  async beginImport(): Promise<ImportBatch> {
    this.endSharedRead();
    if (this.importing) throw new Error('an import is already running on this store');
    this.importing = true;
    this.db.exec('BEGIN IMMEDIATE');
    let open = true;
    const finish = (sql: string) => {
      if (!open) return;
      open = false;
      this.importing = false;
      this.db.exec(sql);
    };
    return {
      put: async (r: StoredRecord) => {
        this.putStmt.run(r.operation, r.registration, r.state, r.payload, r.prepared ?? null);
      },
      commit: async (preparedVersion?: string) => {
        if (open && preparedVersion !== undefined) this.setPreparedVersion(preparedVersion);
        finish('COMMIT');
      },
      rollback: async () => finish('ROLLBACK'),
    };
  }

  async getAccount(username: string): Promise<Account | null> {
    return this.accountStmt.get(username) ?? null;
  }

  async putAccount(account: Account): Promise<void> {
    this.endSharedRead();
    this.db
      .prepare('INSERT INTO accounts (username, credits) VALUES (?, ?) ON CONFLICT (username) DO UPDATE SET credits = excluded.credits')
      .run(account.username, account.credits);
  }

  async removeAccount(username: string): Promise<boolean> {
    this.endSharedRead();
    return this.db.prepare('DELETE FROM accounts WHERE username = ?').run(username).changes > 0;
  }

  async listAccounts(): Promise<Account[]> {
    return this.db.prepare('SELECT username, credits FROM accounts ORDER BY username').all() as Account[];
  }

  async takeCredit(username: string): Promise<boolean> {
    this.endSharedRead();
    return this.creditStmt.run(username).changes > 0;
  }

  async close(): Promise<void> {
    this.endSharedRead();
    if (this.db.open) this.db.close();
  }
}
