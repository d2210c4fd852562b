// The storage boundary. The service asks a VehicleStore for records by key; SQLite is the embedded
// default and a PostgreSQL store implements the same interface for scale-out. The accounts part
// (callers, credits, daily counts, usage) is its own interface, AccountStore, in accounts.ts.

import type { AccountStore } from './accounts';

export type { Account } from './accounts';

export interface RecordKey {
  /** Catalogue operation name (UKMOT for test histories). */
  readonly operation: string;
  /** Normalised registration. */
  readonly registration: string;
  /** Normalised subdivision abbreviation for the three state operations, '' otherwise. */
  readonly state: string;
}

export interface StoredRecord extends RecordKey {
  /** JSON text: the vehicle object, or the MOT object for UKMOT. */
  readonly payload: string;
  /** The record's answers, made when it was written (see PreparedForms); absent when not made. */
  readonly prepared?: string | null;
}

/** What a lookup reads: the payload, and the prepared answers when the record has them. */
export interface FoundRecord {
  readonly payload: string;
  readonly prepared: string | null;
}

/**
 * A record's answers made once, when the record is written, so that a lookup reads its answer
 * instead of building it (transport/prepared.ts makes them; to the store they are opaque text).
 */
export interface PreparedForms {
  /** How the answers are made: answers stored under another version are stale and made anew. */
  readonly version: string;
  /**
   * A record's answers, or null to leave it to be answered by building them per lookup. `value`,
   * when given, is JSON.parse(payload) already made by the caller (an import has it), to save a parse.
   */
  make(operation: string, payload: string, value?: unknown): string | null;
  /** The module and export these forms can be loaded from again, for a worker thread (a function cannot be sent to one). */
  readonly source?: { readonly module: string; readonly name: string };
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
}

export interface CommitOptions {
  /**
   * Every record in the store after the commit has its answers made under this version (the
   * caller knows it: the store was empty, or already at that version, or the batch replaced all,
   * and every put carried answers); the store records it (see preparedVersion).
   */
  readonly preparedVersion?: string;
}

/**
 * One open write transaction of an import: everything or nothing. Readers (lookups, on any
 * connection or process) see the store as it was before the batch until commit returns, and the
 * whole batch after it; never a part. Puts and deletes apply in the order made: a later one for
 * the same key wins. Calls must not overlap (await each); a store need not apply them before
 * commit (PostgreSQL copies them into a staging table and merges there), so a failure of an
 * individual put may surface only at commit, which then rolls the batch back and rejects.
 */
export interface ImportBatch {
  /** Writes a record, replacing any with the same key. */
  put(record: StoredRecord): Promise<void>;
  /** Removes the record with that key, if there is one (no error when there is none). */
  delete(key: RecordKey): Promise<void>;
  /**
   * Adds an operation to what the batch replaces (see Replace), as if named in ImportOptions.replace.
   * Call it before any put or delete of that operation in the batch (an import calls it on the
   * operation's first line, so the file is read once).
   */
  replaceOperation(operation: string): Promise<void>;
  /**
   * Makes the batch visible, atomically, and ends it. A string argument is the same as
   * { preparedVersion } (older callers).
   */
  commit(options?: CommitOptions | string): Promise<void>;
  /** Drops everything the batch did, and ends it. Harmless after commit or a second rollback. */
  rollback(): Promise<void>;
}

/** A progress callback: work done and work in all, in the same unit (pages, records, bytes). */
export type Progress = (done: number, total: number) => void;

export interface VehicleStore extends AccountStore {
  /** The record with that key, or null when there is none. */
  get(key: RecordKey): Promise<FoundRecord | null>;
  /** The version every stored record's prepared answers were made under, or null when that is not known. */
  preparedVersion(): Promise<string | null>;
  /** Makes every record's answers anew, in one transaction, and records their version; returns the records done. */
  prepareAll(forms: PreparedForms): Promise<number>;
  /**
   * Makes the answers of the records that have none (written without them, or by a writer that
   * changed the payload and not the answers), where the stored version is already forms.version.
   */
  prepareMissing(forms: PreparedForms): Promise<number>;
  /** Counts every record: a full pass over the key index, for tools and tests, not the request path. */
  count(): Promise<number>;
  /** Whether any record is held: one index probe, at any size. */
  isEmpty(): Promise<boolean>;
  /** Opens the one write batch of an import; a store refuses a second while one is open. */
  beginImport(options?: ImportOptions): Promise<ImportBatch>;
  /** Whether the store holds the bundled sample data and nothing written since (see ImportOptions.sample). */
  holdsOnlySample(): Promise<boolean>;
  /**
   * Every record, in key order (operation, registration, state, compared by Unicode code point,
   * i.e. SQLite's BINARY or PostgreSQL's COLLATE "C"), from one consistent snapshot, a page at a
   * time: memory does not grow with the store. Writers are not blocked while it runs. Each record
   * carries its key and payload, not its prepared answers (export has no use for them).
   */
  records(): AsyncIterable<StoredRecord>;
  /**
   * A consistent copy of the whole store (records, accounts, usage) into a new file at `dest`,
   * taken while the store serves; absent for stores whose own tools do that (PostgreSQL: pg_dump).
   */
  backup?(dest: string, progress?: Progress): Promise<void>;

  close(): Promise<void>;
}

/**
 * Brings a store's prepared answers up to `forms`: every record's made anew when they were made
 * under another version (or none is recorded), otherwise those of the records that have none.
 */
export async function updatePrepared(store: VehicleStore, forms: PreparedForms): Promise<{ records: number; all: boolean }> {
  if ((await store.preparedVersion()) === forms.version) return { records: await store.prepareMissing(forms), all: false };
  return { records: await store.prepareAll(forms), all: true };
}
