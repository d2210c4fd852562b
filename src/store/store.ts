// The storage boundary. The service asks a VehicleStore for records by key; SQLite is the embedded
// default and a PostgreSQL store implements the same interface for scale-out. The accounts part
// (callers, credits, daily counts, usage) is its own interface, AccountStore, in accounts.ts, which a
// store exposes as `store.accounts` beside `store.admin`.

import { messageOf } from '../core/errors';
import type { AccountStore, ChargeResult } from './accounts';
import type { AdminStore } from './admin';
import type { BatchStore } from './batches';
import type { UpstreamCacheStore } from './cache';

export interface RecordKey {
  /** Catalogue operation name (UKMOT for test histories). */
  readonly operation: string;
  /** Normalised registration. */
  readonly registration: string;
  /** Normalised subdivision abbreviation for the three state operations, '' otherwise. */
  readonly state: string;
}

export interface StoredRecord extends RecordKey {
  /**
   * JSON text: the vehicle object, or the MOT object for UKMOT, as the import wrote it. It is the
   * record's only stored form: answers are written from it at lookup (transport/answers.ts), so a
   * record costs its payload and its key, about the size of its import line.
   */
  readonly payload: string;
}

/**
 * The caller a charge is for, as far as the store needs it: its connection, destroyed once the
 * caller has left (closed it, or given up on the answer). A charge whose caller has left before it
 * is committed is not kept: nobody is charged for an answer that is never sent.
 */
export interface ChargeCaller {
  readonly destroyed: boolean;
}

/** The refusal of a charge whose caller left first (see ChargeCaller): answered to nobody. */
export function callerLeft(store: string): StoreUnavailableError {
  return new StoreUnavailableError(store, 'the caller closed its connection before the charge', 'did not charge');
}

/** What a lookup reads: the payload. */
export interface FoundRecord {
  readonly payload: string;
}

/**
 * What chargeFound gives: the record, or null when the store has none (and then nothing was
 * charged: charge is null too); with a record, its charge, granted or refused (refused: the caller
 * must not answer with the record).
 */
export interface FoundCharge {
  readonly found: FoundRecord | null;
  readonly charge: ChargeResult | null;
}

/**
 * What a batch replaces. The contract, for every store: after commit, the store holds for each
 * replaced operation exactly the records put in the batch (and not deleted after their put); every
 * other operation's records are as before, with the batch's puts and deletes applied. 'all' replaces
 * every operation, whether the batch names it or not.
 */
export type Replace = 'all' | readonly string[];

export interface ImportOptions {
  /** Operations whose whole record set the batch replaces (see Replace); none when absent. */
  readonly replace?: Replace;
  /**
   * The batch writes the bundled sample data: after commit the store remembers that it holds only
   * the sample (holdsOnlySample), until a batch without this flag commits.
   */
  readonly sample?: boolean;
  /**
   * When the batch's records are as of (ms since the epoch): the time its register file says it was
   * extracted, else the import's. Kept per operation at commit (see ImportTimes); absent: now.
   */
  readonly asOf?: number;
}

/** The meta row that keeps an operation's import time: this prefix and the operation's name. */
export const AS_OF_PREFIX = 'as_of:';

/** The first key after every AS_OF_PREFIX key (the prefix's last character, ':', plus one): a range scan. */
export const AS_OF_END = 'as_of;';

/** The import times from their meta rows; a row whose value is not a time is left out. */
export function importTimesOf(rows: readonly { key: string; value: string }[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows) {
    const at = Number(r.value);
    if (r.key.startsWith(AS_OF_PREFIX) && Number.isSafeInteger(at) && at > 0)
      out.set(r.key.slice(AS_OF_PREFIX.length), at);
  }
  return out;
}

/**
 * What an import's commit writes of its operations' import times, one meta row an operation
 * (AS_OF_PREFIX): a replaced operation holds only the batch's records, so it is as of the batch; so
 * is an operation the store held no record of before. One the batch adds to (no replace) holds
 * records of earlier imports too: its time becomes the older of the two, and stays unknown when it
 * was (records imported before import times were kept). Kept per operation rather than per record:
 * a record costs no byte more, and a refresh that leaves a record unchanged need not rewrite it.
 */
export class ImportTimes {
  /** Each operation the batch put a record of, and whether the store held one of it before the batch. */
  private readonly put = new Map<string, boolean>();
  private readonly replacedOps: Set<string>;

  constructor(
    private readonly replace: Replace | undefined,
    readonly at: number,
  ) {
    this.replacedOps = new Set(replace === 'all' || replace === undefined ? [] : replace);
  }

  replaced(operation: string): boolean {
    return this.replace === 'all' || this.replacedOps.has(operation);
  }

  addReplaced(operation: string): void {
    this.replacedOps.add(operation);
  }

  /** Whether the batch has put a record of the operation yet. */
  seen(operation: string): boolean {
    return this.put.has(operation);
  }

  /** A put of the operation; `heldBefore`: the store held a record of it before the batch (false when replaced). */
  saw(operation: string, heldBefore: boolean): void {
    this.put.set(operation, heldBefore && !this.replaced(operation));
  }

  /** Operations put, not replaced, whose holding before the batch is not known yet (`saw` with heldBefore true). */
  merged(): string[] {
    return [...this.put].filter(([, held]) => held).map(([op]) => op);
  }

  /**
   * The commit's writes: every replaced operation's row removed (all rows for 'all'), then `set` given
   * `at`, and `lower` lowered to `at` where it is later.
   */
  writes(heldBefore: (operation: string) => boolean): {
    clearAll: boolean;
    clear: string[];
    set: string[];
    lower: string[];
  } {
    const set: string[] = [];
    const lower: string[] = [];
    for (const [op, held] of this.put) (held && heldBefore(op) ? lower : set).push(op);
    return { clearAll: this.replace === 'all', clear: [...this.replacedOps], set, lower };
  }
}

/**
 * One open write transaction of an import: everything or nothing. Readers (lookups, on any
 * connection or process) see the store as it was before the batch until commit returns, and the
 * whole batch after it; never a part. Puts and deletes apply in the order made: a later one for
 * the same key wins. Calls must not overlap (await each); a store need not apply them before
 * commit (PostgreSQL copies them into a staging table and merges there), so a failure of an
 * individual put may surface only at commit, which then rolls the batch back and rejects.
 * Once the batch has ended (commit or rollback), put, delete and replaceOperation fail with
 * 'this import has ended', and a second commit does nothing.
 */
export interface ImportBatch {
  /**
   * Writes a record, replacing any with the same key. `fresh`: the caller vouches that no earlier
   * put or delete of this batch had this key (an import knows: it counts repeated keys), which lets
   * a store write the record more directly; without it a store must allow for a repeat.
   */
  put(record: StoredRecord, fresh?: boolean): Promise<void>;
  /** Removes the record with that key, if there is one (no error when there is none). */
  delete(key: RecordKey): Promise<void>;
  /**
   * Adds an operation to what the batch replaces (see Replace), as if named in ImportOptions.replace.
   * Call it before any put or delete of that operation in the batch (an import calls it on the
   * operation's first line, so the file is read once).
   */
  replaceOperation(operation: string): Promise<void>;
  /** Makes the batch visible, atomically, and ends it. */
  commit(): Promise<void>;
  /** Drops everything the batch did, and ends it. Harmless after commit or a second rollback. */
  rollback(): Promise<void>;
}

/** A progress callback: work done and work in all, in the same unit (pages, records, bytes). */
export type Progress = (done: number, total: number) => void;

export interface BackupOptions {
  /** Keep the upstream cache's answers in the copy (left out by default). */
  readonly withCache?: boolean;
}

/** How an import ended: when (ms since the epoch) and whether it committed. */
export interface ImportRun {
  readonly at: number;
  readonly committed: boolean;
}

/** The meta row an ImportRun is kept in, as JSON text. */
export const LAST_IMPORT_KEY = 'last_import';

/** An ImportRun read back from its meta row; null for a row that is not one. */
export function importRunOf(text: string | undefined): ImportRun | null {
  if (text === undefined) return null;
  try {
    const v = JSON.parse(text) as Partial<ImportRun>;
    return typeof v.at === 'number' && typeof v.committed === 'boolean' ? { at: v.at, committed: v.committed } : null;
  } catch {
    return null;
  }
}

export interface VehicleStore extends UpstreamCacheStore {
  /** Callers, credits, daily counts and usage: accounts.ts. */
  readonly accounts: AccountStore;
  /** What the admin API and `reglookup users` need beyond the accounts: admin.ts. */
  readonly admin: AdminStore;
  /** Batch jobs (POST /api/batch): batches.ts. */
  readonly batches: BatchStore;
  /** The record with that key, or null when there is none. */
  get(key: RecordKey): Promise<FoundRecord | null>;
  /**
   * Optional, for a store whose charges cost a round trip (PostgreSQL): get() and, when found,
   * accounts.charge(username, day, operation) in one atomic step and one round trip, with the
   * contract of both. A store without it is asked get(), then accounts.charge().
   */
  chargeFound?(
    key: RecordKey,
    username: string,
    day: string,
    operation: string,
    caller?: ChargeCaller,
  ): Promise<FoundCharge>;
  /** Counts every record: a full pass over the key index, for tools and tests, not the request path. */
  count(): Promise<number>;
  /** Records per operation (operations holding none left out): like count(), for import guards and dry runs. */
  countByOperation(): Promise<Record<string, number>>;
  /** Whether any record is held: one index probe, at any size. */
  isEmpty(): Promise<boolean>;
  /** Opens the one write batch of an import; a store refuses a second while one is open. */
  beginImport(options?: ImportOptions): Promise<ImportBatch>;
  /** Whether the store holds the bundled sample data and nothing written since (see ImportOptions.sample). */
  holdsOnlySample(): Promise<boolean>;
  /**
   * Remembers how the latest import ended (`reglookup import`, not a dry run), so that every instance serving from
   * this store can report it (reglookup_last_import_success). Replaces the one before.
   */
  noteImport(run: ImportRun): Promise<void>;
  /** How the latest import noted ended, or null when none was. */
  lastImport(): Promise<ImportRun | null>;
  /**
   * Each operation's import time (ms since the epoch; see ImportTimes), for the age of an answer;
   * operations whose time is not known are left out. Absent: the store keeps none.
   */
  importTimes?(): Promise<ReadonlyMap<string, number>>;
  /**
   * Every record, in key order (operation, registration, state, compared by Unicode code point,
   * i.e. SQLite's BINARY or PostgreSQL's COLLATE "C"), from one consistent snapshot, a page at a
   * time: memory does not grow with the store. Writers are not blocked while it runs. Each record
   * carries its key and payload.
   */
  records(): AsyncIterable<StoredRecord>;
  /**
   * The files a backup named `dest` is: `dest` and any beside it, each named as the store names its
   * own (SQLite: the records file and its accounts file). With backup, absent for stores whose own
   * tools take copies (PostgreSQL: pg_dump).
   */
  backupFiles?(dest: string): readonly string[];
  /**
   * A consistent copy of the whole store (records, accounts, usage) into new files, one for each of
   * backupFiles(dest) in the same order, taken while the store serves.
   */
  backup?(dests: readonly string[], progress?: Progress, options?: BackupOptions): Promise<void>;

  /**
   * Tells `watcher` when the store stops being reachable and when it is reachable again; absent
   * for stores that cannot be unreachable (SQLite is a file in this process).
   */
  watch?(watcher: StoreWatcher): void;

  /**
   * A readiness check of the store's own beyond the basic one (PostgreSQL: its read replicas), in
   * ops/health.ts's probe shape; absent or null when there is none.
   */
  readinessProbe?(): { readonly name: string; check(): Promise<unknown>; readonly degraded?: string } | null;

  /** Each read replica (PostgreSQL's DATABASE_READ_URL, named by its position) and whether lookups read it now. */
  replicasInUse?(): readonly { readonly replica: string; readonly inUse: boolean }[];

  close(): Promise<void>;
}

/**
 * A store's reachability, reported on the change only (not per call), and the calls it refused
 * meanwhile (a batch of lookups read together counts each of them).
 */
export interface StoreWatcher {
  /** `problem`: what is wrong, after the store's name ("cannot be reached", "cannot write: its disk is full"). */
  down(store: string, error: string, problem?: string): void;
  /** `state`: what is right again, after the store's name ("is reachable again", "takes writes again"). */
  up(store: string, downMs: number, state?: string): void;
  refused(store: string, calls: number): void;
}

/**
 * A store call that failed because the store could not be reached (connection refused, dropped,
 * timed out, the server shutting down or starting up), or could not write for a reason the operator
 * fixes (SQLite: its disk is full, its lock held past the wait): the caller is told to retry later
 * (SERVICE_UNAVAILABLE), not that something broke (INTERNAL_ERROR). The cause stays for the log.
 */
export class StoreUnavailableError extends Error {
  constructor(
    readonly store: string,
    cause: unknown,
    /** What is wrong, as the log says it after the store's name. */
    readonly problem = 'cannot be reached',
  ) {
    super(`${store} ${problem}: ${messageOf(cause).slice(0, 300)}`, { cause });
    this.name = 'StoreUnavailableError';
  }
}
