// The scale-out store: PostgreSQL through a pg connection pool, shared by any number of service
// instances. Same interface and behaviour as the SQLite store (the behavioural suite in test/store/
// runs against both). The schema comes from migrations/postgres.ts, applied on first use under an
// advisory lock, so that instances starting together take turns.
//
// What concurrency needs here, and where it is handled:
// - credits: one statement per batch of an account's concurrent charges locks its row and takes
//   what is left to grant (postgres-accounts.ts), so no two lookups can both take the last credit,
//   from any number of processes, and a busy account costs one commit per batch, not per lookup;
// - imports stream through COPY into a temporary staging table and are merged into `records` by one
//   INSERT ... ON CONFLICT in the same transaction: readers see the old records until the commit,
//   then all of the new ones;
// - imports take one transaction-scoped advisory lock, so two imports into one database take turns.

import { messageOf } from '../core/errors';
import { cacheWhere, type CacheEntry, type CacheFilter, type CachedAnswer, type CacheStatsRow } from './cache';
import pg from 'pg';
import { migrate, type Migration, type MigrationReport, type MigrationTarget } from './migrations/runner';
import { POSTGRES_MIGRATIONS } from './migrations/postgres';
import { PostgresAdmin } from './postgres-admin';
import { PostgresBatches } from './postgres-batches';
import { PostgresAccounts, type PgRunner } from './postgres-accounts';
import { PostgresImport } from './postgres-import';
import { answersWithin, QueryTimeoutError, withDeadline } from './postgres-deadline';
import { Replicas, type ReplicaProbe } from './postgres-replicas';
import {
  AS_OF_PREFIX,
  importTimesOf,
  StoreUnavailableError,
  type FoundCharge,
  type FoundRecord,
  type ImportBatch,
  type ImportOptions,
  type RecordKey,
  type StoredRecord,
  type StoreWatcher,
  type VehicleStore,
  type ImportRun,
  importRunOf,
  LAST_IMPORT_KEY,
} from './store';

interface PostgresOptions {
  /** Most connections this process holds (DATABASE_POOL). */
  readonly pool?: number;
  /**
   * Longest a request's statement may run, in ms (DATABASE_STATEMENT_TIMEOUT_MS); 0 for none, even
   * where the server, the database or the role sets a limit of its own.
   */
  readonly statementTimeoutMs?: number;
  /**
   * Longest a store call waits for its answer, ms, the wait for a free connection included
   * (DATABASE_QUERY_TIMEOUT_MS), enforced by this process whatever the server does; 0 for none.
   * Imports, exports and migrations are not bounded.
   */
  readonly queryTimeoutMs?: number;
  /**
   * Longest a record lookup waits for a read replica before it is asked of the primary, ms
   * (DATABASE_READ_TIMEOUT_MS).
   */
  readonly readTimeoutMs?: number;
  /**
   * Lookups answered from this process's memory for at most this long, ms (CACHE_TTL_MS); 0: off.
   * An entry is dropped this long after it was read, so a record changed by anyone is served in its
   * old form for at most this long; this process's own imports clear the cache at once.
   */
  readonly cacheTtlMs?: number;
  /** Read replicas (DATABASE_READ_URL): record lookups go to one within readMaxLagMs of the primary. */
  readonly readUrls?: readonly string[];
  /** Longest a replica may be behind the primary and still be read (DATABASE_READ_MAX_LAG_MS). */
  readonly readMaxLagMs?: number;
}

/**
 * A schema name as DATABASE_URL's ?schema= may give it: a plain lower-case identifier, the same
 * whether quoted (CREATE SCHEMA) or not (the connection's search_path, which folds case).
 */
const SCHEMA_RE = /^[a-z_][a-z0-9_]{0,62}$/;

/** Second key of the two-part advisory locks (the first is the schema's hash). */
const LOCK_MIGRATE = 1;
const LOCK_WRITE = 2;

/**
 * A charge statement grants nothing once the server's clock is within this of its call's deadline
 * (at most a quarter of DATABASE_QUERY_TIMEOUT_MS): time for the answer to come back before the call
 * gives up, so that a charge granted is one whose caller is answered.
 */
const CHARGE_MARGIN_MS = 250;

/** How often a store found hung is probed (one SELECT 1 under the query deadline) until it answers. */
const PROBE_EVERY_MS = 500;

/** The deadline of a transaction (an operator's write), ms, when DATABASE_QUERY_TIMEOUT_MS is shorter. */
const TRANSACTION_WAIT_MS = 10_000;

/** Most cached lookups; past it the cache starts again empty (cheaper than tracking recency). */
const CACHE_MAX = 50_000;
/** Records read per page by records(). */
const RECORDS_PAGE = 1000;

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

/**
 * The connection string without ?schema= and ?options=, the schema (null: the server's
 * search_path), and the URL's own ?options= (server settings, e.g. `-c work_mem=64MB`), which the
 * store sends along with its own: pg lets a URL's ?options= replace the options it is given.
 */
export function parsePostgresUrl(url: string): {
  connectionString: string;
  schema: string | null;
  options: string | null;
} {
  const u = new URL(url);
  const schema = u.searchParams.get('schema');
  const options = u.searchParams.get('options');
  u.searchParams.delete('schema');
  u.searchParams.delete('options');
  if (schema !== null && !SCHEMA_RE.test(schema))
    throw new Error(
      `DATABASE_URL ?schema= must be a plain identifier (lower-case letters, digits, _), got '${schema.slice(0, 70)}'`,
    );
  return { connectionString: u.toString(), schema, options };
}

/**
 * SQLSTATEs of a server that cannot be reached or is going away: class 08 (connection exception),
 * 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up, shutting
 * down, in recovery), 53300 too_many_connections.
 */
const UNREACHABLE_SQLSTATE = /^(08...|57P0[123]|53300)$/;
/** Socket and name-lookup failures (Node's error codes). */
const UNREACHABLE_ERRNO = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** What pg and pg-pool say when a connection dies or cannot be had in time (they set no code). */
const UNREACHABLE_MESSAGE =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly)/;

/**
 * Whether a failure means the server cannot be reached (retry later) rather than that the
 * statement failed. A statement timeout (57014) is not one: the server answered.
 */
export function isUnreachable(e: unknown): boolean {
  if (e === null || typeof e !== 'object') return false;
  const { code, message, errors } = e as { code?: unknown; message?: unknown; errors?: unknown };
  if (typeof code === 'string' && (UNREACHABLE_ERRNO.has(code) || UNREACHABLE_SQLSTATE.test(code))) return true;
  if (typeof message === 'string' && UNREACHABLE_MESSAGE.test(message)) return true;
  // Node's connect to a name with several addresses fails with an AggregateError of each attempt.
  return Array.isArray(errors) && errors.length > 0 && errors.every(isUnreachable);
}

interface CacheRow {
  operation: string;
  registration: string;
  state: string;
  provider: string;
  fetched_at: string;
  payload: string | null;
}

export class PostgresStore implements VehicleStore {
  private readonly pool: pg.Pool;
  private readonly schema: string | null;
  private ready: Promise<void> | null = null;
  private importing = false;
  private closed = false;
  private readonly cacheTtlMs: number;
  private cache = new Map<string, { found: FoundRecord | null; until: number }>();
  /** Counts this process's writes to records, so that a read overlapping one is not cached. */
  private generation = 0;
  private pending: { key: RecordKey; resolve: (f: FoundRecord | null) => void; reject: (e: unknown) => void }[] | null =
    null;
  private readonly runner: PgRunner = {
    query: (name, text, values, calls, deadline) => this.query(name, text, values, calls, deadline ?? this.deadline()),
    deadline: () => this.deadline(),
    serverDeadline: (d) => d + this.clockOffset - Math.min(CHARGE_MARGIN_MS, Math.floor(this.queryTimeoutMs / 4)),
    transaction: (fn) => this.transaction(fn),
  };
  /** Callers, credits, daily counts, usage: postgres-accounts.ts, on this store's pool. */
  readonly accounts = new PostgresAccounts(this.runner);
  /** Pages of callers, keyed top-ups, the audit log, billing: postgres-admin.ts. */
  readonly admin = new PostgresAdmin(this.runner);
  /** Batch jobs: postgres-batches.ts. */
  readonly batches = new PostgresBatches(this.runner);
  /**
   * Whether the server is known to be unreachable: set by a call that found it so, cleared by the next that succeeds.
   */
  private down = false;
  private downSince = 0;
  /**
   * Set when a call got no answer by its deadline: until a probe gets one, calls are refused at once
   * rather than each waiting out the deadline on a server that does not answer.
   */
  private hung: { error: QueryTimeoutError; probe: NodeJS.Timeout } | null = null;
  /** The primary's connection settings, for a probe's connection of its own. */
  private readonly probeConfig: pg.ClientConfig;
  /** The server's clock minus this process's, ms (measureClock). */
  private clockOffset = 0;
  /** DATABASE_READ_TIMEOUT_MS: a replica read's deadline. */
  private readonly readTimeoutMs: number;
  /** DATABASE_QUERY_TIMEOUT_MS: each call's deadline from its start (0: none). */
  readonly queryTimeoutMs: number;
  private watcher: StoreWatcher | null = null;
  /** Read replicas for record lookups (DATABASE_READ_URL), or null: every query goes to the primary. */
  private readonly replicas: Replicas | null = null;
  /**
   * Without replicas, where a metered lookup's read and its charge both go to the primary: both in
   * one statement and one round trip (postgres-accounts.ts). With replicas the record is read there
   * (get), and the charge taken on the primary after it.
   */
  readonly chargeFound?: (key: RecordKey, username: string, day: string, operation: string) => Promise<FoundCharge>;

  constructor(url: string, options: PostgresOptions = {}) {
    const { connectionString, schema, options: urlOptions } = parsePostgresUrl(url);
    this.schema = schema;
    this.cacheTtlMs = options.cacheTtlMs ?? 0;
    const timeout = options.statementTimeoutMs ?? 5000;
    this.queryTimeoutMs = options.queryTimeoutMs ?? 2000;
    this.readTimeoutMs = options.readTimeoutMs ?? 300;
    const poolConfig = (connection: string, urlOpts: string | null): pg.PoolConfig => ({
      connectionString: connection,
      max: options.pool ?? 10,
      application_name: 'reglookup',
      // A request waits at most this long for a free connection before it fails (and is logged);
      // with a query deadline, the deadline bounds the wait first.
      connectionTimeoutMillis: this.queryTimeoutMs > 0 ? Math.min(10_000, this.queryTimeoutMs + 1000) : 10_000,
      idleTimeoutMillis: 30_000,
      // The timeout is sent as a startup option rather than pg's statement_timeout setting, which
      // leaves out 0 and so would let a limit set on the server, database or role apply where 0
      // asks for none. Ours come last: they win over the same settings in the URL's ?options=.
      options: `${urlOpts ?? ''} -c statement_timeout=${timeout}${schema !== null ? ` -c search_path=${schema}` : ''}`,
    });
    this.probeConfig = poolConfig(connectionString, urlOptions);
    this.pool = new pg.Pool(this.probeConfig);
    const readUrls = options.readUrls ?? [];
    if (readUrls.length > 0) {
      const configs = readUrls.map((readUrl, i) => {
        const r = parsePostgresUrl(readUrl);
        // A replica holds the primary's database: its tables are in the same schema.
        if (r.schema !== null && r.schema !== schema)
          throw new Error(
            `DATABASE_READ_URL: replica ${i + 1}'s ?schema= differs from DATABASE_URL's; leave it out (the primary's is used)`,
          );
        // A replica that does not answer is given up quickly: the lookup goes to the primary.
        return {
          ...poolConfig(r.connectionString, r.options),
          connectionTimeoutMillis: Math.min(10_000, Math.max(500, options.readMaxLagMs ?? 1000)),
        };
      });
      this.replicas = new Replicas(
        configs,
        options.readMaxLagMs ?? 1000,
        async () =>
          (
            await withDeadline(this.pool, this.deadline(), 'PostgreSQL', (c) =>
              c.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn'),
            )
          ).rows[0].lsn,
        this.readTimeoutMs,
      );
    } else {
      this.chargeFound = (key, username, day, operation) => this.accounts.chargeFound(key, username, day, operation);
    }
    // An idle connection the server drops must not take the process with it: the next query on the
    // pool opens a new one, and reports the failure if the server is still away. A server shutting
    // down drops them all at once: the outage is reported then, before any lookup finds it.
    this.pool.on('error', (e) => {
      if (isUnreachable(e)) this.unreachable(e);
    });
  }

  watch(watcher: StoreWatcher): void {
    this.watcher = watcher;
  }

  /** Marks the server unreachable (reported once per outage). */
  private unreachable(e: unknown): void {
    if (this.down) return;
    this.down = true;
    this.downSince = Date.now();
    this.watcher?.down('PostgreSQL', messageOf(e).slice(0, 300));
  }

  private reachable(): void {
    this.down = false;
    this.watcher?.up('PostgreSQL', Date.now() - this.downSince);
  }

  /** The deadline of a call starting now (null: none). */
  private deadline(): number | null {
    return this.queryTimeoutMs > 0 ? Date.now() + this.queryTimeoutMs : null;
  }

  /** Refuses a call at once while the server is known to hang (see `hung`). */
  private refuseIfHung(calls: number): void {
    if (this.hung === null) return;
    this.watcher?.refused('PostgreSQL', calls);
    throw new StoreUnavailableError('PostgreSQL', this.hung.error);
  }

  /**
   * A call timed out: a busy server (every pooled connection in use, a statement waiting on a lock)
   * or a hung one. A probe on a connection of its own tells which: one that gets no answer either
   * marks the server hung, reported once, and calls are refused until a probe is answered.
   */
  private timedOut(e: QueryTimeoutError): void {
    if (this.hung !== null || this.suspect || this.closed) return;
    this.suspect = true;
    void answersWithin(this.probeConfig, this.queryTimeoutMs).then((ok) => {
      this.suspect = false;
      if (ok || this.hung !== null || this.closed) return;
      const probe = setInterval(() => void this.probeHung(), PROBE_EVERY_MS);
      probe.unref();
      this.hung = { error: e, probe };
      this.unreachable(e);
    });
  }

  /** A probe is under way after a time-out (see timedOut). */
  private suspect = false;
  private probing = false;

  private async probeHung(): Promise<void> {
    if (this.probing || this.hung === null) return;
    this.probing = true;
    try {
      if (!(await answersWithin(this.probeConfig, this.queryTimeoutMs)) || this.hung === null) return;
      clearInterval(this.hung.probe);
      this.hung = null;
      if (this.down) this.reachable();
    } finally {
      this.probing = false;
    }
  }

  /** A failed call's error as its callers get it: StoreUnavailableError when the server cannot be reached. */
  private failure(e: unknown, calls: number): unknown {
    if (e instanceof StoreUnavailableError) return e;
    if (!isUnreachable(e)) return e;
    // A time-out is reported once a probe finds the server hung (timedOut), not on its own.
    if (e instanceof QueryTimeoutError) this.timedOut(e);
    else this.unreachable(e);
    this.watcher?.refused('PostgreSQL', calls);
    return new StoreUnavailableError('PostgreSQL', e);
  }

  /** The two-part advisory lock keys of this store's schema. */
  private lockKey(part: number): string {
    return `SELECT pg_advisory_xact_lock(hashtext($1), ${part})`;
  }

  private lockName(): string {
    return `reglookup:${this.schema ?? ''}`;
  }

  /** Migrations, once per store object, before its first query; after a failure, tried again on the next call. */
  private init(): Promise<void> {
    if (this.ready === null) {
      const ready = this.migrate().then(() => this.measureClock());
      ready.catch(() => {
        this.ready = null;
      });
      this.ready = ready;
    }
    return this.ready;
  }

  /**
   * The server's clock against this process's (server minus local, ms), for the deadlines the charge
   * statements check on the server: measured once, halfway through one round trip.
   */
  private async measureClock(): Promise<void> {
    if (this.queryTimeoutMs === 0) return;
    const before = Date.now();
    const r = await withDeadline(this.pool, this.deadline(), 'PostgreSQL', (c) =>
      c.query<{ now: number }>('SELECT extract(epoch FROM clock_timestamp())::float8 * 1000 AS now'),
    );
    const after = Date.now();
    this.clockOffset = Number(r.rows[0].now) - (before + after) / 2;
  }

  /** Applies the migrations this store lacks (up to `upTo`), one instance at a time. */
  async migrate(upTo = Infinity, list: readonly Migration[] = POSTGRES_MIGRATIONS): Promise<MigrationReport> {
    const client = await this.pool.connect();
    try {
      // Migrations may run for longer than a request is allowed to.
      await client.query('SET statement_timeout = 0');
      const target: MigrationTarget = {
        withLock: async (fn) => {
          await client.query('SELECT pg_advisory_lock(hashtext($1), $2)', [this.lockName(), LOCK_MIGRATE]);
          try {
            // Under the lock: CREATE SCHEMA IF NOT EXISTS is not safe against itself run concurrently.
            // Quoted as it is (SCHEMA_RE admits no quote), so that it is the schema search_path names.
            if (this.schema !== null) await client.query(`CREATE SCHEMA IF NOT EXISTS "${this.schema}"`);
            return await fn();
          } finally {
            await client.query('SELECT pg_advisory_unlock(hashtext($1), $2)', [this.lockName(), LOCK_MIGRATE]);
          }
        },
        appliedVersions: async () => {
          await client.query(
            'CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())',
          );
          const rows = await client.query<{ version: number }>('SELECT version FROM schema_version ORDER BY version');
          return rows.rows.map((r) => r.version);
        },
        apply: async (m) => {
          await client.query('BEGIN');
          try {
            await client.query(m.sql);
            await client.query('INSERT INTO schema_version (version, name) VALUES ($1, $2)', [m.version, m.name]);
            await client.query('COMMIT');
          } catch (e) {
            await client.query('ROLLBACK');
            throw new Error(`migration ${m.version} (${m.name}) failed: ${(e as Error).message}`, { cause: e });
          }
        },
      };
      return await migrate(target, list, upTo);
    } finally {
      await client.query('RESET statement_timeout').catch(() => undefined);
      client.release();
    }
  }

  /** Runs fn in one transaction on one connection (each statement under the statement timeout). */
  private async transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    this.refuseIfHung(1);
    await this.init();
    try {
      // Transactions are the operator's writes (top-ups, account changes), which may queue on an
      // account's row behind its charges: they keep the longer wait they always had.
      const deadline = this.queryTimeoutMs > 0 ? Date.now() + Math.max(this.queryTimeoutMs, TRANSACTION_WAIT_MS) : null;
      const out = await withDeadline(this.pool, deadline, 'PostgreSQL', async (client) => {
        await client.query('BEGIN');
        try {
          const r = await fn(client);
          await client.query('COMMIT');
          return r;
        } catch (e) {
          if (!isUnreachable(e)) await client.query('ROLLBACK').catch(() => undefined);
          throw e;
        }
      });
      if (this.down && this.hung === null) this.reachable();
      return out;
    } catch (e) {
      throw this.failure(e, 1);
    }
  }

  /** `calls`: how many callers this query answers (a batch of lookups), each counted when it is refused. */
  private async query<R extends pg.QueryResultRow>(
    name: string,
    text: string,
    values: unknown[],
    calls = 1,
    deadline: number | null = this.deadline(),
  ): Promise<pg.QueryResult<R>> {
    this.refuseIfHung(calls);
    await this.init();
    try {
      // Named: each connection parses and plans the statement once.
      const r = await withDeadline(this.pool, deadline, 'PostgreSQL', (c) => c.query<R>({ name, text, values }));
      if (this.down && this.hung === null) this.reachable();
      return r;
    } catch (e) {
      throw this.failure(e, calls);
    }
  }

  async get(key: RecordKey): Promise<FoundRecord | null> {
    if (this.cacheTtlMs === 0) return this.read(key);
    const id = `${key.operation}\u0000${key.registration}\u0000${key.state}`;
    const now = Date.now();
    const hit = this.cache.get(id);
    if (hit !== undefined && hit.until > now) return hit.found;
    const generation = this.generation;
    const found = await this.read(key);
    // A read that overlapped this process's own write may hold the old record: not kept.
    if (generation !== this.generation) return found;
    if (this.cache.size >= CACHE_MAX) this.cache = new Map();
    // Timed from before the read: the answer is at most as old as the moment it was asked for.
    this.cache.set(id, { found, until: now + this.cacheTtlMs });
    return found;
  }

  /** Forgets every cached lookup: after this process changed records. */
  private forget(): void {
    this.generation++;
    this.replicas?.changed();
    if (this.cache.size > 0) this.cache = new Map();
  }

  /**
   * Lookups asked for in the same turn of the event loop go to the server as one query (the service
   * serves the requests of one turn together: transport/turn.ts): one round trip and one pool
   * checkout for all of them instead of one each.
   */
  private read(key: RecordKey): Promise<FoundRecord | null> {
    return new Promise((resolve, reject) => {
      if (this.pending === null) {
        this.pending = [];
        setImmediate(() => void this.readPending());
      }
      this.pending.push({ key, resolve, reject });
    });
  }

  /**
   * A record lookup's query: on a replica within the lag bound when there is one, else (or when the
   * replica fails it) on the primary.
   */
  private async readQuery<R extends pg.QueryResultRow>(
    name: string,
    text: string,
    values: unknown[],
    calls: number,
  ): Promise<pg.QueryResult<R>> {
    const replica = this.replicas?.pick();
    if (replica) {
      try {
        // Bounded by its own deadline: a hung replica costs a lookup this, then the primary answers.
        return await withDeadline(replica.pool, Date.now() + this.readTimeoutMs, replica.name, (c) =>
          c.query<R>({ name, text, values }),
        );
      } catch (e) {
        this.replicas?.failed(replica.replica, e);
      }
    }
    return this.query<R>(name, text, values, calls);
  }

  private async readPending(): Promise<void> {
    const batch = this.pending ?? [];
    this.pending = null;
    try {
      if (batch.length === 1) {
        const { key } = batch[0];
        const r = await this.readQuery<FoundRecord>(
          'get',
          'SELECT payload FROM records WHERE operation = $1 AND registration = $2 AND state = $3',
          [key.operation, key.registration, key.state],
          1,
        );
        batch[0].resolve(r.rows[0] ?? null);
        return;
      }
      const r = await this.readQuery<FoundRecord & { i: string }>(
        'get-many',
        `SELECT k.i::int AS i, r.payload
           FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS k(operation, registration, state, i)
           JOIN records r ON r.operation = k.operation AND r.registration = k.registration AND r.state = k.state`,
        [batch.map((b) => b.key.operation), batch.map((b) => b.key.registration), batch.map((b) => b.key.state)],
        batch.length,
      );
      const found: (FoundRecord | null)[] = batch.map(() => null);
      for (const row of r.rows) found[Number(row.i) - 1] = { payload: row.payload };
      batch.forEach((b, i) => b.resolve(found[i]));
    } catch (e) {
      for (const b of batch) b.reject(e);
    }
  }

  async isEmpty(): Promise<boolean> {
    return (await this.query('is-empty', 'SELECT 1 FROM records LIMIT 1', [])).rowCount === 0;
  }

  async count(): Promise<number> {
    const r = await this.query<{ n: string }>('count', 'SELECT count(*) AS n FROM records', []);
    return Number(r.rows[0].n);
  }

  async countByOperation(): Promise<Record<string, number>> {
    const r = await this.query<{ operation: string; n: string }>(
      'count-by-operation',
      'SELECT operation, count(*) AS n FROM records GROUP BY operation',
      [],
    );
    return Object.fromEntries(r.rows.map((row) => [row.operation, Number(row.n)]));
  }

  /**
   * One transaction on a connection of its own, under the write lock: COPY straight into records
   * when the table began empty, else through a staging table merged at commit (postgres-import.ts).
   * Readers see the records as they were until COMMIT, and never wait for it (MVCC).
   */
  async beginImport(options: ImportOptions = {}): Promise<ImportBatch> {
    if (this.importing) throw new Error('an import is already running on this store');
    this.importing = true;
    let client: pg.PoolClient;
    try {
      await this.init();
      client = await this.pool.connect();
    } catch (e) {
      this.importing = false;
      throw e;
    }
    const batch = new PostgresImport(client, options, (committed) => {
      this.importing = false;
      if (committed) this.forget();
    });
    await batch.begin(this.lockKey(LOCK_WRITE), this.lockName());
    return batch;
  }

  async holdsOnlySample(): Promise<boolean> {
    return (await this.query('holds-only-sample', "SELECT 1 FROM meta WHERE key = 'sample'", [])).rowCount !== 0;
  }

  async noteImport(run: ImportRun): Promise<void> {
    await this.query(
      'note-import',
      'INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      [LAST_IMPORT_KEY, JSON.stringify(run)],
    );
  }

  async lastImport(): Promise<ImportRun | null> {
    const r = await this.query<{ value: string }>('last-import', 'SELECT value FROM meta WHERE key = $1', [
      LAST_IMPORT_KEY,
    ]);
    return importRunOf(r.rows[0]?.value);
  }

  async importTimes(): Promise<ReadonlyMap<string, number>> {
    const r = await this.query<{ key: string; value: string }>(
      'import-times',
      'SELECT key, value FROM meta WHERE starts_with(key, $1)',
      [AS_OF_PREFIX],
    );
    return importTimesOf(r.rows);
  }

  replicasInUse(): readonly { readonly replica: string; readonly inUse: boolean }[] {
    return this.replicas?.inUse() ?? [];
  }

  /**
   * Every record in code-point key order, a page of 1,000 at a time by keyset (each page one range
   * scan of records_key_c, the same cost at any depth), all pages inside one REPEATABLE READ
   * READ ONLY transaction on a connection of its own: one snapshot for the whole pass, while writers
   * go on (MVCC: they never wait for it).
   */
  async *records(): AsyncIterable<StoredRecord> {
    await this.init();
    const client = await this.pool.connect();
    try {
      // Each page is one short statement: the statement timeout applies to it as to a lookup.
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const page = `SELECT operation, registration, state, payload FROM records
         WHERE (operation COLLATE "C", registration COLLATE "C", state COLLATE "C") > ($1, $2, $3)
         ORDER BY operation COLLATE "C", registration COLLATE "C", state COLLATE "C" LIMIT ${RECORDS_PAGE}`;
      let last: StoredRecord | null = null;
      for (;;) {
        const rows: StoredRecord[] = (
          await client.query<StoredRecord>({
            name: 'records-page',
            text: page,
            values: [last?.operation ?? '', last?.registration ?? '', last?.state ?? ''],
          })
        ).rows;
        if (rows.length === 0) break;
        for (const r of rows) yield r;
        last = rows[rows.length - 1];
      }
    } finally {
      // (After a failed BEGIN this is a no-op with a warning.)
      await client.query('COMMIT').catch(() => undefined);
      client.release();
    }
  }

  // The upstream cache (cache.ts): a table of its own.
  async cacheGet(key: RecordKey): Promise<CachedAnswer | null> {
    const r = await this.query<{ payload: string | null; provider: string; fetched_at: string }>(
      'cache-get',
      'SELECT payload, provider, fetched_at FROM upstream_cache WHERE operation = $1 AND registration = $2 AND state = $3',
      [key.operation, key.registration, key.state],
    );
    const row = r.rows[0];
    return row ? { payload: row.payload, provider: row.provider, fetchedAt: Number(row.fetched_at) } : null;
  }

  async cachePut(e: CacheEntry): Promise<void> {
    await this.query(
      'cache-put',
      'INSERT INTO upstream_cache (operation, registration, state, provider, fetched_at, payload) VALUES ($1, $2, $3, $4, $5, $6) ' +
        'ON CONFLICT (operation, registration, state) DO UPDATE SET provider = excluded.provider, fetched_at = excluded.fetched_at, payload = excluded.payload',
      [e.operation, e.registration, e.state, e.provider, e.fetchedAt, e.payload],
    );
  }

  async cacheStats(filter: CacheFilter = {}): Promise<CacheStatsRow[]> {
    const { where, values } = cacheWhere(filter, true);
    const r = await this.query<Record<string, string>>(
      `cache-stats-${values.length}-${filter.operation !== undefined ? 'o' : ''}`,
      'SELECT operation, provider, COUNT(payload) AS found, COUNT(*) - COUNT(payload) AS not_found, MIN(fetched_at) AS oldest, MAX(fetched_at) AS newest ' +
        `FROM upstream_cache${where} GROUP BY operation, provider ORDER BY operation COLLATE "C", provider COLLATE "C"`,
      values,
    );
    return r.rows.map((x) => ({
      operation: x.operation,
      provider: x.provider,
      found: Number(x.found),
      notFound: Number(x.not_found),
      oldest: Number(x.oldest),
      newest: Number(x.newest),
    }));
  }

  async cachePurge(filter: CacheFilter = {}): Promise<number> {
    const { where, values } = cacheWhere(filter, true);
    const r = await this.query(
      `cache-purge-${values.length}-${filter.operation !== undefined ? 'o' : ''}`,
      `DELETE FROM upstream_cache${where}`,
      values,
    );
    return r.rowCount ?? 0;
  }

  async *cacheEntries(): AsyncIterable<CacheEntry> {
    let last: CacheEntry | null = null;
    for (;;) {
      const r: pg.QueryResult<CacheRow> = await this.query<CacheRow>(
        'cache-page',
        `SELECT operation, registration, state, provider, fetched_at, payload FROM upstream_cache
         WHERE (operation COLLATE "C", registration COLLATE "C", state COLLATE "C") > ($1, $2, $3)
         ORDER BY operation COLLATE "C", registration COLLATE "C", state COLLATE "C" LIMIT ${RECORDS_PAGE}`,
        [last?.operation ?? '', last?.registration ?? '', last?.state ?? ''],
      );
      if (r.rows.length === 0) break;
      for (const x of r.rows) {
        last = {
          operation: x.operation,
          registration: x.registration,
          state: x.state,
          provider: x.provider,
          fetchedAt: Number(x.fetched_at),
          payload: x.payload,
        };
        yield last;
      }
    }
  }

  /** /readyz's check of the read replicas, when there are any. */
  readinessProbe(): ReplicaProbe | null {
    return this.replicas?.probe() ?? null;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Credits this instance leased go back to their accounts; if the server cannot be reached they
    // stay in its shard, counted in the balance, for another instance to drain.
    await this.accounts.releaseShards().catch(() => undefined);
    if (this.hung !== null) clearInterval(this.hung.probe);
    await this.replicas?.close();
    await this.pool.end();
  }
}
