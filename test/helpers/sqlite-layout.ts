// The SQLite store's two files (docs/data.md, "Two files"), read from outside: what the files hold,
// and a store of the earlier one-file layout (0.3) to move. Used by test/store/sqlite-layout.test.ts
// (in-process) and test/cli/sqlite-layout.test.ts (other processes).

import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import { migrateSqlite } from '../../src/store/migrations/sqlite';

export const ACCOUNT_TABLES = ['accounts', 'usage', 'audit', 'idempotency', 'upstream_cache'];

/** docs/data.md: the accounts file is the store's name with `.accounts` before its extension. */
export const accountsOf = (file: string) => file.replace(/\.db$/, '.accounts.db');

export function query<T>(file: string, text: string): T[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(text).all() as T[];
  } finally {
    db.close();
  }
}

export const tablesIn = (file: string) =>
  query<{ name: string }>(
    file,
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
  ).map((r) => r.name);
export const versionOf = (file: string) =>
  query<{ v: number }>(file, 'SELECT MAX(version) AS v FROM schema_version')[0].v;

/**
 * A store as 0.3 leaves it, made at `file`: one file at schema version 6, in WAL mode, holding records and every
 * account table, filled as that release fills them. `usageRows` pads the usage table (a long-lived store).
 */
export function oldLayoutStore(file: string, usageRows = 0): string {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  migrateSqlite(db, 6);
  db.exec(`
INSERT INTO records (operation, registration, state, payload) VALUES ('Check', 'OLD1', '', '{"Description":"kept"}');
INSERT INTO accounts (username, credits, daily_limit, allow) VALUES ('alice', 40, 5, '10.0.0.0/8'), ('bob', NULL, NULL, '');
UPDATE accounts SET day = '2026-11-20', day_count = 3 WHERE username = 'alice';
INSERT INTO usage (username, day, operation, found, not_found) VALUES ('alice', '2026-11-20', 'Check', 3, 1);
INSERT INTO audit (at, actor, action, target, before, after) VALUES
  ('2026-11-01T00:00:00Z', 'cli:root', 'add', 'gone', NULL, '{}'),
  ('2026-11-19T10:00:00Z', 'ops', 'add', 'alice', NULL, '{"credits":40}'),
  ('2026-11-20T10:00:00Z', 'ops', 'credit', 'alice', '{"credits":40}', '{"credits":50,"amount":10}');
DELETE FROM audit WHERE target = 'gone';
INSERT INTO idempotency (key, fingerprint, result, created_at) VALUES ('k-1', 'fp-1', '{"balance":50}', '2026-11-20');
INSERT INTO upstream_cache (operation, registration, state, provider, fetched_at, payload) VALUES ('Check', 'UP1', '', 'dvla', 1700000000000, '{"Description":"fetched"}');
`);
  const pad = db.prepare(
    "INSERT INTO usage (username, day, operation, found, not_found) VALUES ('bob', ?, 'Check', 1, 0)",
  );
  db.transaction(() => {
    for (let i = 0; i < usageRows; i++) pad.run(`d${String(i).padStart(8, '0')}`);
  })();
  db.close();
  return file;
}

/** Every row of the account tables, as text: what a move must carry over whole. */
export function accountRows(file: string): string {
  return ACCOUNT_TABLES.map((t) =>
    JSON.stringify(
      t === 'usage'
        ? query(
            file,
            "SELECT COUNT(*) AS n, SUM(found) AS found, MIN(day) AS first, MAX(day) AS last, SUM(username = 'bob') AS bob FROM usage",
          )
        : query(file, `SELECT * FROM ${t} ORDER BY 1, 2, 3`),
    ),
  ).join('\n');
}

const sha256 = (u: string) => createHash('sha256').update(u, 'utf8').digest('hex');

/**
 * accountRows of the old layout's store (alice, bob) as the accounts file's step 2 leaves them: usernames as their
 * keys, named by their prefix (a quarter, at most 6 characters) and the key's start, both flagged short.
 */
export function keyed(before: string): string {
  const [alice, bob] = [sha256('alice'), sha256('bob')];
  const was = before.split('\n');
  const accounts = (JSON.parse(was[0]) as { username: string }[]).map((r) => ({
    ...r,
    username: r.username === 'alice' ? alice : bob,
    name: r.username === 'alice' ? `a-${alice.slice(0, 12)}` : `caller-${bob.slice(0, 12)}`,
    prefix: r.username === 'alice' ? 'a' : '',
    key_until: null,
    weak: 'short',
  }));
  return [
    JSON.stringify(accounts),
    was[1].replace(/"bob":\d+/, '"bob":0'),
    was[2].replace(/"target":"alice"/g, `"target":"a-${alice.slice(0, 12)}"`),
    ...was.slice(3),
  ].join('\n');
}
