// What every command shares: the configuration (a bad value exits 2 naming the variable), one way
// to fail (a message on stderr, no stack), and a store opened for the length of one command.

import { ConfigError, loadConfig, type Config } from '../config';
import { ContractError } from '../contract/wsdl';
import { openStore } from '../store/open';
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

export async function withStore<T>(fn: (store: VehicleStore) => Promise<T>): Promise<T> {
  const store = openConfiguredStore(config());
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}
