// Batch jobs in the store (POST /api/batch): a job's row and one row per input row, its answer
// written beside it. SQLite keeps them in the accounts file (sqlite-batches.ts), PostgreSQL in its
// database (postgres-batches.ts); both keep every contract written here. The owner is the caller's
// account key (core/key.ts), never the username.

/** One input row as the caller gave it (text, not yet checked). */
export interface BatchInput {
  readonly operation: string;
  readonly registration: string;
  readonly state: string;
}

/** One row's outcome: `answer` (the answer's JSON text) when found, else the error `code` and its message. */
export interface BatchOutcome {
  readonly code: string | null;
  readonly message: string | null;
  readonly answer: string | null;
}

export interface BatchResultRow extends BatchInput, BatchOutcome {
  /** 1, 2, 3, ...: the input row's place. */
  readonly n: number;
}

/** running: rows remain; done: every row answered; stopped: the job ended early (see note). */
export type BatchStatus = 'running' | 'done' | 'stopped';

interface BatchCounts {
  readonly done: number;
  readonly found: number;
  readonly notFound: number;
  readonly refused: number;
}

export interface BatchJob extends BatchCounts {
  readonly id: string;
  /** accountKey(username) of the caller that created it. */
  readonly owner: string;
  /** The address it was sent from: its rows are looked up as from there (the caller's allow-list). */
  readonly address: string;
  readonly status: BatchStatus;
  readonly rows: number;
  /**
   * Rows 1..claimed were handed to lookups: one of them without an outcome was in flight when its runner stopped, and
   * may have been charged.
   */
  readonly claimed: number;
  /** What the caller is told beside the counts (paused until midnight UTC, stopped for want of credit). */
  readonly note: string | null;
  /** ms since the epoch. */
  readonly createdAt: number;
  readonly finishedAt: number | null;
  /** The process running it (BatchRunner's id) and until when that holds (ms); null: nobody. */
  readonly runner: string | null;
  readonly leaseUntil: number;
}

/** Rows answered (each with its place n), with the job's new counts, claimed mark, note and status. */
export interface BatchProgress extends BatchCounts {
  readonly outcomes: readonly (BatchOutcome & { readonly n: number })[];
  readonly claimed: number;
  /** For a job that stops: the outcome every row without one gets (rows not looked up), in the same write. */
  readonly rest?: BatchOutcome;
  readonly status: BatchStatus;
  readonly note: string | null;
  readonly finishedAt: number | null;
  readonly leaseUntil: number;
}

export interface BatchStore {
  /** A new job with its rows, all or nothing, held by `runner` until `leaseUntil`. */
  create(
    job: Pick<BatchJob, 'id' | 'owner' | 'address' | 'createdAt' | 'runner' | 'leaseUntil'>,
    rows: readonly BatchInput[],
  ): Promise<void>;
  get(id: string): Promise<BatchJob | null>;
  /**
   * Takes the job for `runner` until `leaseUntil` when nobody holds it now (its lease ended before `now`) or `runner`
   * already does: true when taken. Two processes asking together: one gets it.
   */
  take(id: string, runner: string, now: number, leaseUntil: number): Promise<boolean>;
  /** Marks rows 1..claimed as handed to lookups, and renews the lease, if `runner` holds the job. */
  claim(id: string, runner: string, claimed: number, leaseUntil: number): Promise<void>;
  /** Writes the rows' outcomes, the counts, status and note in one transaction, if `runner` still holds the job. */
  progress(id: string, runner: string, p: BatchProgress): Promise<boolean>;
  /** Up to `limit` rows from row `from` on, in order, with their outcomes (null code and answer: not answered). */
  results(id: string, from: number, limit: number): Promise<BatchResultRow[]>;
  /** Ids of jobs still running. */
  running(): Promise<string[]>;
  /** Removes the jobs that finished before `before` (ms) and their rows: how many. */
  deleteFinishedBefore(before: number): Promise<number>;
}
