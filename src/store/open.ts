// DATABASE_URL -> a VehicleStore: sqlite:PATH (embedded) or postgres://... (scale-out).

import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../config';
import { isPostgresUrl, PostgresStore } from './postgres';
import { SqliteStore } from './sqlite';
import type { MigrationReport } from './migrations/runner';
import type { VehicleStore } from './store';

interface StoreOptions {
  /** PostgreSQL: connections per process (DATABASE_POOL). */
  readonly pool?: number;
  /** PostgreSQL: longest a request's statement may run, ms (DATABASE_STATEMENT_TIMEOUT_MS); 0: none. */
  readonly statementTimeoutMs?: number;
  /** PostgreSQL: longest a store call waits for its answer, ms (DATABASE_QUERY_TIMEOUT_MS); 0: none. */
  readonly queryTimeoutMs?: number;
  /** PostgreSQL: longest a lookup waits for a replica before asking the primary, ms (DATABASE_READ_TIMEOUT_MS). */
  readonly readTimeoutMs?: number;
  /** PostgreSQL: how long a lookup may be answered from this process's memory, ms (CACHE_TTL_MS); 0: off. */
  readonly cacheTtlMs?: number;
  /** PostgreSQL: read replicas for record lookups (DATABASE_READ_URL). */
  readonly readUrls?: readonly string[];
  /** PostgreSQL: longest a replica may lag and still be read, ms (DATABASE_READ_MAX_LAG_MS). */
  readonly readMaxLagMs?: number;
}

/** A store whose schema is brought up to date by versioned migrations (`reglookup migrate`). */
interface MigratableStore extends VehicleStore {
  migrate(upTo?: number): Promise<MigrationReport>;
}

export function isMigratable(store: VehicleStore): store is MigratableStore {
  return typeof (store as Partial<MigratableStore>).migrate === 'function';
}

/** The URL with any password hidden, for logs and messages. */
export function redactUrl(url: string): string {
  return url.replace(/(\/\/[^:@/]*):[^@/]*@/, '$1:***@');
}

/**
 * A store DATABASE_URL names that could not be opened or reached, as one line naming the variable (password hidden).
 */
export function storeUnavailable(databaseUrl: string, e: unknown): ConfigError {
  const err = e as { message?: string; code?: string } | null | undefined;
  return new ConfigError(
    `DATABASE_URL '${redactUrl(databaseUrl)}' cannot be opened: ${err?.message || err?.code || String(e)}`,
  );
}

/** The file a sqlite: URL names (sqlite:PATH, sqlite:///abs/path); null for any other URL. */
export function sqliteFileOf(databaseUrl: string): string | null {
  return databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '') : null;
}

/** The file of a SQLite DATABASE_URL that names one not there yet (opening it creates it); else null. */
export function newSqliteFile(databaseUrl: string): string | null {
  const file = sqliteFileOf(databaseUrl);
  return file && file !== ':memory:' && !fs.existsSync(file) ? file : null;
}

/** What is said when opening a store created its SQLite file: a mistyped path is the usual reason. */
export function createdStoreNotice(file: string): string {
  return `created a new store at ${path.resolve(file)}: no file was there (check DATABASE_URL if you meant an existing store)`;
}

export function openStore(databaseUrl: string, options: StoreOptions = {}): VehicleStore {
  const file = sqliteFileOf(databaseUrl);
  if (file !== null) {
    if (file === '') throw new ConfigError('DATABASE_URL sqlite: needs a file path, e.g. sqlite:data/reglookup.db');
    return new SqliteStore(file);
  }
  if (isPostgresUrl(databaseUrl)) {
    try {
      return new PostgresStore(databaseUrl, options);
    } catch (e) {
      throw new ConfigError((e as Error).message);
    }
  }
  throw new ConfigError(
    `DATABASE_URL '${redactUrl(databaseUrl)}' is not supported; use sqlite:PATH or postgres://USER@HOST:PORT/DATABASE`,
  );
}
