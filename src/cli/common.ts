// What every command shares: the configuration (a bad value exits 2 naming the variable), one way
// to fail (a message on stderr, no stack), and a store opened for the length of one command.

import cluster from 'node:cluster';
import { ConfigError, loadConfig, lookalikeVariables, type Config } from '../config';
import { ContractError } from '../contract/wsdl';
import { createdStoreNotice, newSqliteFile, openStore, storeUnavailable } from '../store/open';
import type { VehicleStore } from '../store/store';

let warned = false;

/**
 * Variables that look misspelt, said once a process and once for a cluster (its workers read the same environment).
 * Also before a configuration error: the misspelling is often its cause (ADMIN_TOKEN for ADMIN_TOKENS).
 */
function warnLookalikes(): void {
  if (warned || !cluster.isPrimary) return;
  warned = true;
  for (const l of lookalikeVariables())
    process.stderr.write(`reglookup: warning: ${l.name} is set but not read; did you mean ${l.known}?\n`);
}

export function config(): Config {
  try {
    const cfg = loadConfig();
    warnLookalikes();
    return cfg;
  } catch (e) {
    if (e instanceof ConfigError) {
      warnLookalikes();
      process.stderr.write(`reglookup: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
}

/** A failure: its message on stderr, no stack; exit 2 for a bad configuration or contract, 1 otherwise. */
export function fatal(e: unknown): never {
  const named = e instanceof ConfigError || e instanceof ContractError;
  const msg = named ? e.message : ((e as Error)?.message ?? String(e));
  process.stderr.write(`reglookup: ${msg}\n`);
  process.exit(named ? 2 : 1);
}

/**
 * `serve` could not start: exit 2 whatever the cause. Failures that a variable explains arrive as
 * ConfigError naming it; a WSDL that disagrees with the catalogue as ContractError.
 */
export function startupFailed(e: unknown): never {
  const msg =
    e instanceof ConfigError
      ? e.message
      : e instanceof ContractError
        ? `the service contract (wsdl/reg.wsdl) cannot be served: ${e.message}`
        : `start-up failed: ${(e as Error)?.message ?? String(e)}`;
  process.stderr.write(`reglookup: ${msg}\n`);
  process.exit(2);
}

/** The store DATABASE_URL names, with its pool and timeout settings. */
export function openConfiguredStore(cfg: Config): VehicleStore {
  return openStore(cfg.databaseUrl, {
    pool: cfg.databasePool,
    statementTimeoutMs: cfg.databaseStatementTimeoutMs,
    cacheTtlMs: cfg.cacheTtlMs,
    readUrls: cfg.databaseReadUrls,
    readMaxLagMs: cfg.databaseReadMaxLagMs,
  });
}

/** Network failures (PostgreSQL unreachable) and PostgreSQL's refusals of the login or the database. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
]);
function isConnectionFailure(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  if (typeof code !== 'string') return false;
  // SQLSTATE 28xxx: the login refused; 3D000: no such database.
  return UNREACHABLE.has(code) || code.startsWith('28') || code === '3D000';
}

/**
 * One command's store. `mustExist`: a command that only reads or changes what is there (export,
 * backup, users other than add) refuses a SQLite file
 * that is not there, instead of creating an empty store at a mistyped path. A store that cannot be
 * reached fails naming DATABASE_URL (exit 2), as `serve` does.
 */
/**
 * `mustExist`: a SQLite file that is not there is refused (a command that only reads, or changes
 * what must already be there). `absentAsEmpty`: it is taken as an empty store held in memory, so
 * that nothing is created (a dry run).
 */
export async function withStore<T>(
  fn: (store: VehicleStore) => Promise<T>,
  options: { mustExist?: boolean; absentAsEmpty?: boolean; sayCreated?: boolean } = {},
): Promise<T> {
  let cfg = config();
  const absent = newSqliteFile(cfg.databaseUrl);
  if (options.mustExist && absent) {
    throw new ConfigError(
      `DATABASE_URL '${cfg.databaseUrl}': no store at ${absent} (nothing to read; check the path, or import into it first)`,
    );
  }
  if (options.absentAsEmpty && absent) cfg = { ...cfg, databaseUrl: 'sqlite::memory:' };
  let store: VehicleStore | undefined;
  try {
    try {
      store = openConfiguredStore(cfg);
    } catch (e) {
      // A file that is not a database, one this user may not open, ...: as `serve` says it (exit 2).
      if (e instanceof ConfigError) throw e;
      throw storeUnavailable(cfg.databaseUrl, e);
    }
    const out = await fn(store);
    // A new SQLite file where an existing store was meant (a mistyped path) would take what the
    // command wrote where the service never reads it: said, as `serve` says it.
    if (options.sayCreated && absent) process.stderr.write(`reglookup: ${createdStoreNotice(absent)}\n`);
    return out;
  } catch (e) {
    if (isConnectionFailure(e)) throw storeUnavailable(cfg.databaseUrl, e);
    throw e;
  } finally {
    await store?.close().catch(() => undefined);
  }
}
