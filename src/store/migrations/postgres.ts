// The PostgreSQL schema, as the steps that build it. Each step is released once and never edited;
// a change to the schema is a new step at the end. Tables are created in the connection's
// search_path schema (DATABASE_URL's ?schema=, or public).

import type { Migration } from './runner';

export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'records, meta and accounts',
    sql: `
CREATE TABLE IF NOT EXISTS records (
  id           BIGSERIAL PRIMARY KEY,
  operation    TEXT NOT NULL,
  registration TEXT NOT NULL,
  state        TEXT NOT NULL DEFAULT '',
  payload      TEXT NOT NULL
);
-- The lookup key: a lookup is one probe of this index.
CREATE UNIQUE INDEX IF NOT EXISTS records_key ON records (operation, registration, state);
CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS accounts (
  username TEXT PRIMARY KEY,
  -- Lookups left; NULL is unlimited. Taken one at a time by a single conditional UPDATE.
  credits  BIGINT CHECK (credits IS NULL OR credits >= 0)
);
`,
  },
  {
    version: 2,
    name: 'prepared answers beside each record',
    sql: `
ALTER TABLE records ADD COLUMN IF NOT EXISTS prepared TEXT;
-- Records still to be prepared (written without answers, or by a writer that changed the payload
-- only) are found through this index instead of a scan.
CREATE INDEX IF NOT EXISTS records_unprepared ON records (id) WHERE prepared IS NULL;
-- Prepared answers never outlive the payload they were made from, whoever writes the row.
CREATE OR REPLACE FUNCTION records_prepared_follows_payload() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.payload IS DISTINCT FROM OLD.payload AND NEW.prepared IS NOT DISTINCT FROM OLD.prepared THEN
    NEW.prepared := NULL;
  END IF;
  RETURN NEW;
END
$$;
DROP TRIGGER IF EXISTS records_prepared_follows_payload ON records;
CREATE TRIGGER records_prepared_follows_payload BEFORE UPDATE OF payload ON records
  FOR EACH ROW EXECUTE FUNCTION records_prepared_follows_payload();
`,
  },
  {
    version: 3,
    name: 'account settings, daily counts, usage, key order for export',
    sql: `
-- The account contract of accounts.ts (as sqlite-accounts.ts keeps it). Today's charged lookups
-- live in the row (day, day_count) so that a charge is one conditional UPDATE.
ALTER TABLE accounts ADD COLUMN IF NOT EXISTS enabled BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE accounts ADD COLUMN IF NOT EXISTS daily_limit INTEGER;
ALTER TABLE accounts ADD COLUMN IF NOT EXISTS rate DOUBLE PRECISION;
ALTER TABLE accounts ADD COLUMN IF NOT EXISTS allow TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN IF NOT EXISTS day TEXT;
ALTER TABLE accounts ADD COLUMN IF NOT EXISTS day_count INTEGER NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS usage (
  username  TEXT NOT NULL,
  day       TEXT NOT NULL,
  operation TEXT NOT NULL,
  found     BIGINT NOT NULL DEFAULT 0,
  not_found BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (username, day, operation)
);
CREATE INDEX IF NOT EXISTS usage_day ON usage (day);
-- Export reads records in code-point order (COLLATE "C") a page at a time, whatever the database's
-- collation: this index serves each page as one range scan.
CREATE INDEX IF NOT EXISTS records_key_c ON records (operation COLLATE "C", registration COLLATE "C", state COLLATE "C");
`,
  },
  {
    version: 4,
    name: 'answers written at lookup: stored answers dropped',
    sql: `
-- A record is its key and its payload: the answers are written from the payload at lookup, so the
-- prepared column, its index and the trigger that kept it in step go. (Dropping a column is a
-- catalogue change in PostgreSQL: the space comes back as rows are rewritten, or with VACUUM FULL.)
DROP TRIGGER IF EXISTS records_prepared_follows_payload ON records;
DROP FUNCTION IF EXISTS records_prepared_follows_payload();
DROP INDEX IF EXISTS records_unprepared;
ALTER TABLE records DROP COLUMN IF EXISTS prepared;
DELETE FROM meta WHERE key = 'prepared_version';
`,
  },
  {
    version: 5,
    name: 'audit log and idempotency keys of credit top-ups',
    sql: `
-- Every change an operator makes to a caller (admin API, reglookup users): who, when, what, before
-- and after (JSON text). Pruned with usage, after USAGE_DAYS.
CREATE TABLE IF NOT EXISTS audit (
  id     BIGSERIAL PRIMARY KEY,
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
);
CREATE INDEX IF NOT EXISTS idempotency_created ON idempotency (created_at);
`,
  },
  {
    version: 6,
    name: 'upstream cache',
    sql: `
-- Answers fetched from upstream providers, apart from the imported records (which always win).
-- payload NULL: the upstream said not found. fetched_at: ms since the epoch.
CREATE TABLE IF NOT EXISTS upstream_cache (
  operation    TEXT NOT NULL,
  registration TEXT NOT NULL,
  state        TEXT NOT NULL DEFAULT '',
  provider     TEXT NOT NULL,
  fetched_at   BIGINT NOT NULL,
  payload      TEXT,
  PRIMARY KEY (operation, registration, state)
);
`,
  },
  {
    version: 7,
    name: 'credit shards: metered lookups charged without one shared row',
    sql: `
-- Credits leased from an account's row to one instance (shard: a number the instance drew at start),
-- charged there without waiting on other instances; the account's balance is its row's credits plus
-- every shard's. See postgres-shards.ts.
CREATE TABLE IF NOT EXISTS credit_shards (
  username TEXT NOT NULL,
  shard    INTEGER NOT NULL,
  credits  BIGINT NOT NULL CHECK (credits >= 0),
  PRIMARY KEY (username, shard)
);
-- The usage of lookups charged on a shard, written with their charge; usage_all sums both tables.
CREATE TABLE IF NOT EXISTS usage_shards (
  username  TEXT NOT NULL,
  day       TEXT NOT NULL,
  operation TEXT NOT NULL,
  shard     INTEGER NOT NULL,
  found     BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (username, day, operation, shard)
);
CREATE INDEX IF NOT EXISTS usage_shards_day ON usage_shards (day);
CREATE OR REPLACE VIEW usage_all AS
  SELECT username, day, operation, SUM(found)::bigint AS found, SUM(not_found)::bigint AS not_found
    FROM (SELECT username, day, operation, found, not_found FROM usage
          UNION ALL SELECT username, day, operation, found, 0 FROM usage_shards) u
   GROUP BY username, day, operation;
`,
  },
  {
    version: 8,
    name: 'accounts keyed by a hash of the username, with a name and a prefix',
    // Every table that held a username holds its key instead: SHA-256 of its UTF-8 in hex (core/key.ts),
    // in the one transaction of this step, under the migration lock. A charge waiting on a row being
    // rewritten finds no row of its old username after the commit and charges nothing.
    sql: `
ALTER TABLE accounts ADD COLUMN IF NOT EXISTS name TEXT;
ALTER TABLE accounts ADD COLUMN IF NOT EXISTS prefix TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN IF NOT EXISTS key_until BIGINT;
ALTER TABLE accounts ADD COLUMN IF NOT EXISTS weak TEXT;
-- The prefix: a quarter of the username, at most 6 characters. Weak: short enough to guess, or
-- holding an invisible character (accounts/username.ts), as users list --suspicious shows.
UPDATE accounts SET
  prefix = left(username, LEAST(6, length(username) / 4)),
  weak = CASE
    WHEN username ~ '[\\u0001-\\u001f\\u007f-\\u009f\\u00ad\\u061c\\u115f\\u1160\\u180b-\\u180f\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]'
      THEN 'invisible'
    WHEN length(username) < 20 THEN 'short' END,
  username = encode(sha256(convert_to(username, 'UTF8')), 'hex');
-- A name for people: the prefix and the start of the key (the log fingerprint), unique as the keys are. A
-- username holding an invisible character keeps no prefix: it would look like another in every list.
UPDATE accounts SET prefix = '' WHERE weak = 'invisible';
UPDATE accounts SET name = (CASE WHEN prefix = '' THEN 'caller' ELSE prefix END) || '-' || left(username, 12);
CREATE UNIQUE INDEX IF NOT EXISTS accounts_name ON accounts (name);
UPDATE usage SET username = encode(sha256(convert_to(username, 'UTF8')), 'hex');
UPDATE audit SET target = COALESCE((SELECT a.name FROM accounts a WHERE a.username = encode(sha256(convert_to(audit.target, 'UTF8')), 'hex')),
                                   encode(sha256(convert_to(target, 'UTF8')), 'hex'));
-- The credit shards' tables, where a release still has them.
DO $$ BEGIN
  IF to_regclass('credit_shards') IS NOT NULL THEN
    UPDATE credit_shards SET username = encode(sha256(convert_to(username, 'UTF8')), 'hex');
  END IF;
  IF to_regclass('usage_shards') IS NOT NULL THEN
    UPDATE usage_shards SET username = encode(sha256(convert_to(username, 'UTF8')), 'hex');
  END IF;
END $$;
-- The keys an account is also known by since it was rotated (users rotate): until when each is valid (ms), or
-- NULL for no end.
CREATE TABLE IF NOT EXISTS account_keys (
  key     TEXT PRIMARY KEY,
  account TEXT NOT NULL,
  until   BIGINT
);
CREATE INDEX IF NOT EXISTS account_keys_account ON account_keys (account);
`,
  },
  {
    version: 9,
    name: 'batch jobs',
    sql: `
-- POST /api/batch: a job and one row per input row, the outcome written beside its input. owner: the
-- caller's account key (core/key.ts). Rows go with their job (retention).
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
  created_at  BIGINT NOT NULL,
  finished_at BIGINT,
  runner      TEXT,
  lease_until BIGINT NOT NULL DEFAULT 0,
  -- The address the job was sent from: its rows are looked up as from there (the caller's allow-list).
  address     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS batch_jobs_finished ON batch_jobs (finished_at);
CREATE TABLE IF NOT EXISTS batch_rows (
  job_id       TEXT NOT NULL REFERENCES batch_jobs (id) ON DELETE CASCADE,
  n            INTEGER NOT NULL,
  operation    TEXT NOT NULL,
  registration TEXT NOT NULL,
  state        TEXT NOT NULL,
  code         TEXT,
  message      TEXT,
  answer       TEXT,
  PRIMARY KEY (job_id, n)
);
`,
  },
];
