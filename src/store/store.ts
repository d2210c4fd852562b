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
}

export interface Account {
  readonly username: string;
  /** Lookups left; null means unlimited. */
  readonly credits: number | null;
}

/** One open write transaction of an import: everything or nothing. */
export interface ImportBatch {
  put(record: StoredRecord): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

export interface VehicleStore {
  /** The payload JSON text, or null when no record has that key. */
  get(key: RecordKey): Promise<string | null>;
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
