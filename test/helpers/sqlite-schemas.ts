// A SQLite file as the first releases wrote it, written out by hand from their schema (before
// prepared answers and account settings): what the migrations must upgrade in place.

/** The first releases' schema. */
export const V1_DDL = `
CREATE TABLE records (
  id           INTEGER PRIMARY KEY,
  operation    TEXT NOT NULL,
  registration TEXT NOT NULL,
  state        TEXT NOT NULL DEFAULT '',
  payload      TEXT NOT NULL
);
CREATE UNIQUE INDEX records_key ON records (operation, registration, state);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE accounts (username TEXT PRIMARY KEY, credits INTEGER) WITHOUT ROWID;
`;
