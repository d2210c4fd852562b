// Batch jobs: many lookups as one job, run in the background through the same LookupService (and so
// the same admission, charge and usage) as one lookup each. A job is kept in the store (its rows,
// their outcomes, its counts), so it outlives the process that began it; it is run a chunk of rows at
// a time: the chunk is claimed, looked up a few rows at once, and its outcomes and counts written in
// one store write. Limits pace the job and never fail its rows: RATE_LIMITED and an upstream's
// quota (SERVICE_UNAVAILABLE with a wait) pause it for the wait given, DAILY_LIMIT_REACHED until
// midnight UTC (saying so in the job's note); OUT_OF_CREDIT stops it. A row charged is written
// before the job moves on; one in flight when the process died (claimed, without an outcome) is not
// looked up again, since it may have been charged: it is answered SERVICE_UNAVAILABLE, to be asked
// again by the caller. A graceful stop finishes the rows in flight and leaves none in doubt.

import { randomBytes } from 'node:crypto';
import { findOperation, suggestOperation, type Operation } from '../contract/operations';
import { stackOf } from '../core/errors';
import { fingerprintOfKey } from '../ops/fingerprint';
import type { Logger } from '../ops/logger';
import type { BatchInput, BatchJob, BatchOutcome, BatchResultRow, BatchStatus, BatchStore } from '../store/batches';
import { resultJson } from './answer-json';
import { asLookupError, quote, type LookupError } from './errors';
import type { Caller, LookupService } from './lookup';

interface BatchSettings {
  /** Rows a job may hold (BATCH_MAX_ROWS). */
  readonly maxRows: number;
  /** How long a finished job is kept, ms (BATCH_RETENTION_HOURS). */
  readonly retentionMs: number;
  readonly logger: Logger;
  /** Lookups of one job in flight at once. */
  readonly concurrency?: number;
  /** Rows claimed and written at a time. */
  readonly chunk?: number;
  /** How long a runner holds a job without writing to it, ms: past that, another process may take it. */
  readonly leaseMs?: number;
  /** Longest wait between retention sweeps, ms. */
  readonly sweepMs?: number;
}

/**
 * Who a job's lookups are made and charged as: its owner, by account key (the store keeps no username), from the
 * address the job was sent from. The username a lookup quotes in its messages is the owner's log fingerprint
 * (`sha256:` and 12 hex characters, what `reglookup users fingerprint` prints), so that no outcome a job keeps holds
 * the username either.
 */
function ownerOf(job: Pick<BatchJob, 'owner' | 'address'>): Who {
  return { username: fingerprintOfKey(job.owner), caller: { address: job.address, key: job.owner } };
}

/** A job id: 144 random bits, URL-safe. */
const ID_RE = /^[A-Za-z0-9_-]{24}$/;

/** What a running job keeps in memory beside its row. */
interface Run {
  readonly id: string;
  readonly rows: number;
  done: number;
  found: number;
  notFound: number;
  refused: number;
  /** Rows 1..claimed handed to lookups (BatchJob.claimed). */
  claimed: number;
  note: string | null;
  /** When the lease is next renewed mid-chunk (ms): a slow chunk (a low rate limit) keeps its job. */
  renewAt: number;
  /** No lookup starts before this time (ms): the job is paced. */
  pausedUntil: number;
  /** Set by OUT_OF_CREDIT or a username refused: what the rows not looked up are answered; no further row starts. */
  stopped: BatchOutcome | null;
}

interface Who {
  readonly username: string;
  readonly caller: Caller;
}
type Numbered = BatchOutcome & { readonly n: number };

const DAY_MS = 86_400_000;
/** Retries of a row an upstream could not answer and gave no wait for (1, 2, 4, 8 s apart). */
const UNAVAILABLE_TRIES = 5;

function outcome(code: string, message: string): BatchOutcome {
  return { code, message, answer: null };
}

export class BatchRunner {
  /** This process, as the store's job rows name the runner holding them. */
  readonly id = randomBytes(8).toString('hex');
  private readonly live = new Map<string, Promise<void>>();
  private readonly concurrency: number;
  private readonly chunk: number;
  private readonly leaseMs: number;
  private sweeper: NodeJS.Timeout | null = null;
  private closing = false;
  private readonly wakers = new Set<() => void>();

  constructor(
    private readonly store: BatchStore,
    private readonly service: LookupService,
    private readonly settings: BatchSettings,
  ) {
    this.concurrency = settings.concurrency ?? 8;
    this.chunk = settings.chunk ?? 64;
    this.leaseMs = settings.leaseMs ?? 60_000;
  }

  get maxRows(): number {
    return this.settings.maxRows;
  }

  /** Deletes expired jobs now and then, and takes up jobs nobody runs (the process running them stopped). */
  start(): void {
    const every = Math.max(100, Math.min(this.settings.sweepMs ?? 60_000, this.settings.retentionMs / 2));
    this.sweeper = setInterval(() => void this.sweep(), every);
    this.sweeper.unref();
    void this.sweep();
  }

  /** Stops taking rows: the rows in flight finish and are written; the jobs resume when a process takes them up. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.sweeper) clearInterval(this.sweeper);
    for (const wake of this.wakers) wake();
    await Promise.allSettled([...this.live.values()]);
  }

  private async sweep(): Promise<void> {
    try {
      const gone = await this.store.deleteFinishedBefore(Date.now() - this.settings.retentionMs);
      if (gone > 0) this.settings.logger.info('batch jobs expired', { jobs: gone });
      for (const id of await this.store.running()) {
        const job = await this.store.get(id);
        if (job && job.leaseUntil < Date.now()) this.run(id);
      }
    } catch (e) {
      this.settings.logger.warn('batch job sweep failed', { error: stackOf(e) });
    }
  }

  /** A new job of `rows` for the account `owner` (accountKey of its username), sent from `caller`, begun at once. */
  async submit(owner: string, caller: Caller, rows: readonly BatchInput[]): Promise<BatchJob> {
    const id = randomBytes(18).toString('base64url');
    const now = Date.now();
    const job = { id, owner, address: caller.address, createdAt: now, runner: this.id, leaseUntil: now + this.leaseMs };
    await this.store.create(job, rows);
    this.run(id);
    return (await this.store.get(id)) as BatchJob;
  }

  /**
   * The job, for the caller that made it; null for any other (and for an id that is not one). Its owner's call takes
   * up a job nobody runs (the process running it stopped).
   */
  async read(id: string, owner: string): Promise<BatchJob | null> {
    if (!ID_RE.test(id)) return null;
    const job = await this.store.get(id);
    if (job === null || job.owner !== owner) return null;
    if (job.status === 'running' && !this.live.has(id) && job.leaseUntil < Date.now()) this.run(id);
    return job;
  }

  /** A page of a job's rows with their outcomes (for batch-output.ts). */
  results(id: string, from: number, limit: number): Promise<BatchResultRow[]> {
    return this.store.results(id, from, limit);
  }

  private run(id: string): void {
    if (this.live.has(id) || this.closing) return;
    const done = this.loop(id)
      .catch((e: unknown) => {
        this.settings.logger.error('batch job failed', { job: id, error: stackOf(e) });
      })
      .finally(() => this.live.delete(id));
    this.live.set(id, done);
  }

  private async loop(id: string): Promise<void> {
    if (!(await this.store.take(id, this.id, Date.now(), Date.now() + this.leaseMs))) return;
    const job = await this.store.get(id);
    if (!job || job.status !== 'running') return;
    const who = ownerOf(job);
    const run: Run = { ...job, pausedUntil: 0, stopped: null, renewAt: Date.now() + this.leaseMs / 3 };
    let cursor = job.claimed + 1;
    if (job.claimed > 0 && !(await this.settleInDoubt(run, job.claimed))) return;
    while (cursor <= run.rows && !this.closing && run.stopped === null) {
      const rows = await this.store.results(id, cursor, this.chunk);
      if (rows.length === 0) break;
      const last = rows[rows.length - 1].n;
      run.claimed = last;
      await this.store.claim(id, this.id, last, Date.now() + this.leaseMs);
      const todo = rows.filter((r) => r.code === null && r.answer === null);
      const outcomes = await this.lookUp(run, todo, who);
      const written: Numbered[] = [];
      outcomes.forEach((o, i) => {
        if (o !== null) written.push({ ...o, n: todo[i].n });
      });
      for (const o of written) this.count(run, o);
      // Rows not begun (a stop, or this process closing) are not in doubt: the mark goes back to before the first.
      const notBegun = outcomes.findIndex((o) => o === null);
      const claimed = notBegun === -1 ? last : todo[notBegun].n - 1;
      run.claimed = claimed;
      if (!(await this.write(run, written, claimed))) return;
      cursor = last + 1;
    }
  }

  /** Rows claimed without an outcome when their runner stopped: they may have been charged, so are not asked again. */
  private async settleInDoubt(run: Run, claimed: number): Promise<boolean> {
    const doubt: Numbered[] = [];
    for (let from = 1; from <= claimed;) {
      const rows = await this.store.results(run.id, from, 1000);
      if (rows.length === 0) break;
      for (const r of rows)
        if (r.n <= claimed && r.code === null && r.answer === null)
          doubt.push({
            n: r.n,
            ...outcome(
              'SERVICE_UNAVAILABLE',
              'The service stopped while this row was being looked up; it may have been charged: look it up again',
            ),
          });
      from = rows[rows.length - 1].n + 1;
    }
    for (const o of doubt) this.count(run, o);
    return doubt.length === 0 || this.write(run, doubt, claimed);
  }

  private count(run: Run, o: BatchOutcome): void {
    run.done++;
    if (o.answer !== null) run.found++;
    else if (o.code === 'VEHICLE_NOT_FOUND') run.notFound++;
    else run.refused++;
  }

  /** The outcomes and the job's counts, status and note: false when another process holds the job now. */
  private write(run: Run, outcomes: readonly Numbered[], claimed: number): Promise<boolean> {
    const status: BatchStatus = run.stopped !== null ? 'stopped' : run.done >= run.rows ? 'done' : 'running';
    const finished = status !== 'running';
    return this.store.progress(run.id, this.id, {
      outcomes,
      claimed,
      rest: run.stopped ?? undefined,
      done: run.done,
      found: run.found,
      notFound: run.notFound,
      refused: run.refused,
      status,
      note: run.stopped?.message ?? run.note,
      finishedAt: finished ? Date.now() : null,
      // A process that closes lets go at once, for the next to take the job up.
      leaseUntil: finished || this.closing ? 0 : Date.now() + this.leaseMs,
    });
  }

  /** The rows' outcomes, `concurrency` at a time, in the rows' order; null for a row not begun. */
  private async lookUp(run: Run, rows: readonly BatchResultRow[], who: Who): Promise<(BatchOutcome | null)[]> {
    const out = new Array<BatchOutcome | null>(rows.length).fill(null);
    let next = 0;
    const worker = async () => {
      while (next < rows.length && !this.closing && run.stopped === null) {
        const i = next++;
        out[i] = await this.row(run, rows[i], who);
        if (Date.now() > run.renewAt) {
          run.renewAt = Date.now() + this.leaseMs / 3;
          await this.store.claim(run.id, this.id, run.claimed, Date.now() + this.leaseMs).catch(() => undefined);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, rows.length) }, worker));
    return out;
  }

  /** One row: its answer or error; null when the job stopped or the process closes before it was looked up. */
  private async row(run: Run, input: BatchInput, who: Who): Promise<BatchOutcome | null> {
    const op = findOperation(input.operation.trim());
    if (!op) return unknownOperation(input.operation);
    const raw = rawParams(op, input, who.username);
    for (let unavailable = 0; ;) {
      if (!(await this.paced(run))) return null;
      try {
        const result = await this.service.lookup(op, raw, who.caller);
        if (run.note !== null && run.pausedUntil <= Date.now()) run.note = null;
        return { code: null, message: null, answer: resultJson(result) };
      } catch (e) {
        const err = asLookupError(e);
        if (err.code === 'INTERNAL_ERROR') this.settings.logger.error('batch row failed', { error: stackOf(e) });
        const wait = this.pace(run, err, unavailable);
        if (wait === 'stop') return null;
        if (wait === 'row') return outcome(err.code, err.message);
        if (err.code === 'SERVICE_UNAVAILABLE' && err.retryAfter === undefined) unavailable++;
      }
    }
  }

  /** What a refusal does to the job: pause it (and retry the row), stop it, or answer the row with it. */
  private pace(run: Run, err: LookupError, unavailable: number): 'retry' | 'stop' | 'row' {
    const now = Date.now();
    switch (err.code) {
      case 'RATE_LIMITED':
        run.pausedUntil = Math.max(run.pausedUntil, now + (err.retryAfter ?? 1) * 1000);
        return 'retry';
      case 'DAILY_LIMIT_REACHED': {
        const midnight = (Math.floor(now / DAY_MS) + 1) * DAY_MS;
        run.pausedUntil = Math.max(run.pausedUntil, midnight);
        run.note = `Paused: the caller's daily limit is reached; the job resumes after midnight UTC (${new Date(midnight).toISOString()})`;
        void this.write(run, [], run.claimed).catch(() => undefined);
        return 'retry';
      }
      case 'SERVICE_UNAVAILABLE': {
        if (err.retryAfter === undefined && unavailable + 1 >= UNAVAILABLE_TRIES) return 'row';
        const waitS = err.retryAfter ?? 2 ** unavailable;
        run.pausedUntil = Math.max(run.pausedUntil, now + waitS * 1000);
        if (waitS >= 60) {
          run.note = `Waiting for an upstream to take lookups again: the job resumes at ${new Date(now + waitS * 1000).toISOString()}`;
          void this.write(run, [], run.claimed).catch(() => undefined);
        }
        return 'retry';
      }
      case 'OUT_OF_CREDIT':
        run.stopped = outcome(
          'OUT_OF_CREDIT',
          'Stopped: the caller is out of credit; ask the operator for more, then submit the rows not looked up again',
        );
        return 'stop';
      case 'UNKNOWN_USERNAME':
        // Every row would be refused the same way.
        run.stopped = outcome('UNKNOWN_USERNAME', `Stopped: ${err.message}`);
        return 'stop';
      default:
        return 'row';
    }
  }

  /** Waits out the job's pause, renewing its lease; false when the process closes or the job stopped meanwhile. */
  private async paced(run: Run): Promise<boolean> {
    while (!this.closing && run.stopped === null) {
      const left = run.pausedUntil - Date.now();
      if (left <= 0) return true;
      await this.sleep(Math.min(left, this.leaseMs / 3));
      if (run.pausedUntil - Date.now() > 0)
        await this.store.claim(run.id, this.id, run.claimed, Date.now() + this.leaseMs).catch(() => undefined);
    }
    return false;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakers.add(wake);
    });
  }
}

function unknownOperation(name: string): BatchOutcome {
  const near = suggestOperation(name.trim());
  return outcome(
    'UNKNOWN_OPERATION',
    name.trim() === ''
      ? 'No operation given for this row'
      : `Unknown operation ${quote(name)}${near ? ` (did you mean '${near.name}'?)` : ''}`,
  );
}

function rawParams(op: Operation, input: BatchInput, username: string): Record<string, string> {
  const raw: Record<string, string> = { RegistrationNumber: input.registration, username };
  if (op.state) raw[op.state.param] = input.state;
  return raw;
}
