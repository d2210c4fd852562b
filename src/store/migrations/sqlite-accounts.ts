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
  {
    version: 2,
    name: 'accounts keyed by a hash of the username, with a name and a prefix',
    columns: [
      ['accounts', 'name', 'TEXT'],
      ['accounts', 'prefix', "TEXT NOT NULL DEFAULT ''"],
      ['accounts', 'key_until', 'INTEGER'],
      ['accounts', 'weak', 'TEXT'],
    ],
    // reglookup_key, reglookup_prefix and reglookup_weak are the service's own functions (sqlite.ts
    // defines them on the connection): SHA-256 in hex (core/key.ts), the first characters kept
    // for recognition, and why a username is guessable. Every SET reads the row before the UPDATE.
    sql: `
UPDATE accounts SET prefix = reglookup_prefix(username), weak = reglookup_weak(username), username = reglookup_key(username);
-- A name for people: the prefix and the start of the key (the log fingerprint), unique as the keys are. A
-- username holding an invisible character keeps no prefix: it would look like another in every list.
UPDATE accounts SET prefix = '' WHERE weak = 'invisible';
UPDATE accounts SET name = (CASE WHEN prefix = '' THEN 'caller' ELSE prefix END) || '-' || substr(username, 1, 12);
CREATE UNIQUE INDEX IF NOT EXISTS accounts_name ON accounts (name);
UPDATE usage SET username = reglookup_key(username);
UPDATE audit SET target = COALESCE((SELECT a.name FROM accounts a WHERE a.username = reglookup_key(audit.target)),
                                   reglookup_key(target));
-- The keys an account is also known by since it was rotated (users rotate): until when each is valid (ms), or
-- NULL for no end.
CREATE TABLE IF NOT EXISTS account_keys (
  key     TEXT PRIMARY KEY,
  account TEXT NOT NULL,
  until   INTEGER
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS account_keys_account ON account_keys (account);
`,
  },
  {
    version: 3,
    name: 'batch jobs',
    // Written while the service serves, so here beside the charges, never waiting for an import.
    // owner: the caller's account key (core/key.ts). Rows keep their input and, once looked up,
    // the outcome; they go with their job (retention). Not copied back by migrate --to 6: jobs are kept
    // for hours, not across a downgrade.
    sql: `
CREATE TABLE IF NOT EXISTS batch_jobs (
  id          TEXT PRIMARY KEY,
  owner       TEXT NOT NULL,
  status      TEXT NOT NULL,
  rows        INTEGER NOT NULL,
  done        INTEGER NOT NULL DEFAULT 0,
  claimed     INTEGER NOT NULL DEFAULT 0,
  found       INTEGER NOT NULL DEFAULT 0,
  not_found   INTEGER NOT NULL DEFAULT 0,
  refused     INTEGER NOT NULL DEFAULT 0,
  note        TEXT,
  created_at  INTEGER NOT NULL,
  finished_at INTEGER,
  runner      TEXT,
  lease_until INTEGER NOT NULL DEFAULT 0,
  -- The address the job was sent from: its rows are looked up as from there (the caller's allow-list).
  address     TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS batch_jobs_finished ON batch_jobs (finished_at);
CREATE TABLE IF NOT EXISTS batch_rows (
  job_id       TEXT NOT NULL,
  n            INTEGER NOT NULL,
  operation    TEXT NOT NULL,
  registration TEXT NOT NULL,
  state        TEXT NOT NULL,
  code         TEXT,
  message      TEXT,
  answer       TEXT,
  PRIMARY KEY (job_id, n)
) WITHOUT ROWID;
`,
  },
];

/** The tables of the accounts file, in the order they are copied (the move, and `migrate --to 6`). */
export const ACCOUNT_TABLES = ['accounts', 'usage', 'audit', 'idempotency', 'upstream_cache'] as const;
// account_keys (step 2) is not among them: `migrate --to 6` takes back a file at step 1 only.
