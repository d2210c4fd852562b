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
];
