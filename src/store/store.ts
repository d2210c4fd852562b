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
  /** A record's answers, or null to leave it to be answered by building them per lookup. */
  make(operation: string, payload: string): string | null;
}

/** One open write transaction of an import: everything or nothing. */
export interface ImportBatch {
  put(record: StoredRecord): Promise<void>;
  /**
   * Commits. preparedVersion: every record now in the store has its answers made under that version
   * (the caller knows it: the store was empty or already at that version, and every put carried them).
   */
  commit(preparedVersion?: string): Promise<void>;
  rollback(): Promise<void>;
}

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
  beginImport(): Promise<ImportBatch>;

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
