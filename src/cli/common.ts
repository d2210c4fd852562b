// What every command shares: the configuration (a bad value exits 2 naming the variable), one way
// to fail (a message on stderr, no stack), and a store opened for the length of one command.

import { ConfigError, loadConfig, type Config } from '../config';
import { ContractError } from '../contract/wsdl';
import fs from 'node:fs';
import { openStore, sqliteFileOf, storeUnavailable } from '../store/open';
import type { VehicleStore } from '../store/store';

export function config(): Config {
  try {
    return loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`reglookup: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
}

/** A failure: its message on stderr, no stack; exit 2 for a bad configuration or contract, 1 otherwise. */
export function fatal(e: unknown): never {
  const named = e instanceof ConfigError || e instanceof ContractError;
  const msg = named ? e.message : (e as Error)?.message ?? String(e);
  process.stderr.write(`reglookup: ${msg}\n`);
  process.exit(named ? 2 : 1);
}

/**
 * `serve` could not start: exit 2 whatever the cause. Failures that a variable explains arrive as
 * ConfigError naming it; a WSDL that disagrees with the catalogue as ContractError.
 */
export function startupFailed(e: unknown): never {
  const msg =
    e instanceof ConfigError ? e.message : e instanceof ContractError ? `the service contract (wsdl/reg.wsdl) cannot be served: ${e.message}` : `start-up failed: ${(e as Error)?.message ?? String(e)}`;
  process.stderr.write(`reglookup: ${msg}\n`);
  process.exit(2);
}

/** The store DATABASE_URL names, with its pool and timeout settings. */
export function openConfiguredStore(cfg: Config): VehicleStore {
  return openStore(cfg.databaseUrl, { pool: cfg.databasePool, statementTimeoutMs: cfg.databaseStatementTimeoutMs, cacheTtlMs: cfg.cacheTtlMs });
}

/** Network failures (PostgreSQL unreachable) and PostgreSQL's refusals of the login or the database. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET']);
function isConnectionFailure(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  if (typeof code !== 'string') return false;
  // SQLSTATE 28xxx: the login refused; 3D000: no such database.
  return UNREACHABLE.has(code) || code.startsWith('28') || code === '3D000';
}

/**
 * One command's store. `mustExist`: a command that only reads (export, backup) refuses a SQLite file
 * that is not there, instead of creating an empty store at a mistyped path. A store that cannot be
 * reached fails naming DATABASE_URL (exit 2), as `serve` does.
 */
export async function withStore<T>(fn: (store: VehicleStore) => Promise<T>, options: { mustExist?: boolean } = {}): Promise<T> {
  const cfg = config();
  const file = sqliteFileOf(cfg.databaseUrl);
  if (options.mustExist && file && file !== ':memory:' && !fs.existsSync(file)) {
    throw new ConfigError(`DATABASE_URL '${cfg.databaseUrl}': no store at ${file} (nothing to read; check the path, or import into it first)`);
  }
  let store: VehicleStore | undefined;
  try {
    store = openConfiguredStore(cfg);
    return await fn(store);
  } catch (e) {
    if (isConnectionFailure(e)) throw storeUnavailable(cfg.databaseUrl, e);
    throw e;
  } finally {
    await store?.close().catch(() => undefined);
  }
}
