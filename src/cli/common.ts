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

export function fatal(e: unknown): never {
  const msg = e instanceof ConfigError || e instanceof ContractError ? e.message : (e as Error)?.message ?? String(e);
  process.stderr.write(`reglookup: ${msg}\n`);
  process.exit(1);
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
