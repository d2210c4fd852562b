// The storage boundary. The service asks a VehicleStore for records by key; SQLite is the embedded
// default and a PostgreSQL store implements the same interface for scale-out.

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
  /** The record's prepared forms, by form number (see PreparedForms); none when absent. */
  readonly prepared?: readonly string[];
}

/**
 * Forms of a record's result made once, when the record is written, so that a lookup only reads
 * them (transport/prepared.ts makes them; to the store they are opaque text). A record may lack
 * them; a lookup then builds its answer from the payload.
 */
export interface PreparedForms {
  /** How the forms are made: forms stored under another version are stale and made anew. */
  readonly version: string;
  /** The forms of one record, by form number (at most MAX_PREPARED_FORMS). */
  make(operation: string, payload: string): readonly string[];
}

export const MAX_PREPARED_FORMS = 8;

export interface Account {
  readonly username: string;
  /** Lookups left; null means unlimited. */
  readonly credits: number | null;
}

/** One open write transaction of an import: everything or nothing. */
export interface ImportBatch {
  put(record: StoredRecord): Promise<void>;
  /**
   * Commits. preparedVersion: every record now in the store has its forms made under that version
   * (the caller knows it: the store was empty or already at that version, and every put carried them).
   */
  commit(preparedVersion?: string): Promise<void>;
  rollback(): Promise<void>;
}

export interface VehicleStore {
  /** The payload JSON text, or null when no record has that key. */
  get(key: RecordKey): Promise<string | null>;
  /** One prepared form of a record, or null when there is no such record or it lacks that form. */
  getPrepared(key: RecordKey, form: number): Promise<string | null>;
  /** The version every stored prepared form was made under, or null when that is not known. */
  preparedVersion(): Promise<string | null>;
  /** Makes every record's forms anew, in one transaction, and records their version; returns the records done. */
  prepareAll(forms: PreparedForms): Promise<number>;
  /** Counts every record: a full pass over the key index, for tools and tests, not the request path. */
  count(): Promise<number>;
  /** Whether any record is held: one index probe, at any size. */
  isEmpty(): Promise<boolean>;
  beginImport(): Promise<ImportBatch>;

  getAccount(username: string): Promise<Account | null>;
  putAccount(account: Account): Promise<void>;
  removeAccount(username: string): Promise<boolean>;
  listAccounts(): Promise<Account[]>;
  /** Takes one credit if the account has a limited balance above zero; false when it has none left. */
  takeCredit(username: string): Promise<boolean>;

  close(): Promise<void>;
}
