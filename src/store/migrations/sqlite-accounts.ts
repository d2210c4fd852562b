// The SQLite store's accounts file (sqlite-layout.ts): its schema, as steps of its own, recorded in
// its own schema_version table. Everything the service writes while it serves lives here (callers,
// credits and daily counts, usage, the audit log, Idempotency-Keys, the upstream cache), so that a
// write here never waits for an import, which holds the records file's write lock until it commits.
//
// Step 1 is the shape these tables had in the records file at its schema version 6, the last one
// with them there: the move (records step 7) copies their rows column for column, and `migrate --to
// 6` copies them back. A later step here changes the accounts file only; one that changes a table
// `migrate --to 6` copies back must also say how that command undoes it, or that command refuses a
// file past step 1 (sqlite-layout.ts).

import type { SqliteMigration } from './sqlite';

export const SQLITE_ACCOUNTS_MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    name: 'accounts, usage, audit, idempotency keys, upstream cache',
    sql: `
CREATE TABLE IF NOT EXISTS accounts (
  username    TEXT PRIMARY KEY,
  credits     INTEGER,
  enabled     INTEGER NOT NULL DEFAULT 1,
  daily_limit INTEGER,
  rate        REAL,
  allow       TEXT NOT NULL DEFAULT '',
  day         TEXT,
  day_count   INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage (
  username  TEXT NOT NULL,
  day       TEXT NOT NULL,
  operation TEXT NOT NULL,
  found     INTEGER NOT NULL DEFAULT 0,
  not_found INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (username, day, operation)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS usage_day ON usage (day);
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
CREATE TABLE IF NOT EXISTS idempotency (
  key         TEXT PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  result      TEXT NOT NULL,
  created_at  TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idempotency_created ON idempotency (created_at);
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
];

/** The tables of the accounts file, in the order they are copied (the move, and `migrate --to 6`). */
export const ACCOUNT_TABLES = ['accounts', 'usage', 'audit', 'idempotency', 'upstream_cache'] as const;
