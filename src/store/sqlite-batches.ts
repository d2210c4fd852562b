// Batch jobs on the SQLite store (see batches.ts for each method's contract), in the accounts file,
// through its write path (write lock, hooks): a job's rows and its counts are written in one
// transaction.

import type Database from 'better-sqlite3';
import type { BatchInput, BatchJob, BatchProgress, BatchResultRow, BatchStatus, BatchStore } from './batches';

type Write = <T>(fn: () => T) => Promise<T>;

interface JobRow {
  id: string;
  owner: string;
  address: string;
  status: string;
  rows: number;
  done: number;
  claimed: number;
  found: number;
  not_found: number;
  refused: number;
  note: string | null;
  created_at: number;
  finished_at: number | null;
  runner: string | null;
  lease_until: number;
}

export function toJob(r: JobRow): BatchJob {
  return {
    id: r.id,
    owner: r.owner,
    address: r.address,
    status: r.status as BatchStatus,
    rows: Number(r.rows),
    done: Number(r.done),
    claimed: Number(r.claimed),
    found: Number(r.found),
    notFound: Number(r.not_found),
    refused: Number(r.refused),
    note: r.note,
    createdAt: Number(r.created_at),
    finishedAt: r.finished_at === null ? null : Number(r.finished_at),
    runner: r.runner,
    leaseUntil: Number(r.lease_until),
  };
}

/** Rows of a new job written at a time (create). */
const CREATE_CHUNK = 5000;

export class SqliteBatches implements BatchStore {
  constructor(
    private readonly db: Database.Database,
    private readonly write: Write,
  ) {}

  async create(
    job: Pick<BatchJob, 'id' | 'owner' | 'address' | 'createdAt' | 'runner' | 'leaseUntil'>,
    rows: readonly BatchInput[],
  ): Promise<void> {
    const insertJob = this.db.prepare(
      `INSERT INTO batch_jobs (id, owner, address, status, rows, created_at, runner, lease_until)
       VALUES (?, ?, ?, 'running', ?, ?, ?, ?)`,
    );
    const insertRow = this.db.prepare(
      'INSERT INTO batch_rows (job_id, n, operation, registration, state) VALUES (?, ?, ?, ?, ?)',
    );
    // The rows go in writes of CREATE_CHUNK, the event loop turning between them, so that a job of 100,000 rows does
    // not hold every lookup (and every charge, written by the same connection) for its whole insert. The job's own
    // row comes with the last chunk: until then the job does not exist for anyone. A create that fails part-way
    // takes back the rows it wrote.
    try {
      for (let at = 0; ; at += CREATE_CHUNK) {
        const part = rows.slice(at, at + CREATE_CHUNK);
        const last = at + CREATE_CHUNK >= rows.length;
        await this.write(() =>
          this.db.transaction(() => {
            part.forEach((r, i) => insertRow.run(job.id, at + i + 1, r.operation, r.registration, r.state));
            if (last)
              insertJob.run(job.id, job.owner, job.address, rows.length, job.createdAt, job.runner, job.leaseUntil);
          })(),
        );
        if (last) return;
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (e) {
      await this.write(() => this.db.prepare('DELETE FROM batch_rows WHERE job_id = ?').run(job.id)).catch(
        () => undefined,
      );
      throw e;
    }
  }

  async get(id: string): Promise<BatchJob | null> {
    const r = this.db.prepare('SELECT * FROM batch_jobs WHERE id = ?').get(id) as JobRow | undefined;
    return r ? toJob(r) : null;
  }

  async take(id: string, runner: string, now: number, leaseUntil: number): Promise<boolean> {
    const r = await this.write(() =>
      this.db
        .prepare(
          `UPDATE batch_jobs SET runner = ?, lease_until = ?
            WHERE id = ? AND status = 'running' AND (runner IS NULL OR runner = ? OR lease_until < ?)`,
        )
        .run(runner, leaseUntil, id, runner, now),
    );
    return r.changes === 1;
  }

  async claim(id: string, runner: string, claimed: number, leaseUntil: number): Promise<void> {
    await this.write(() =>
      this.db
        .prepare('UPDATE batch_jobs SET claimed = ?, lease_until = ? WHERE id = ? AND runner = ?')
        .run(claimed, leaseUntil, id, runner),
    );
  }

  async progress(id: string, runner: string, p: BatchProgress): Promise<boolean> {
    const update = this.db.prepare(
      'UPDATE batch_rows SET code = ?, message = ?, answer = ? WHERE job_id = ? AND n = ?',
    );
    return this.write(() =>
      this.db.transaction(() => {
        const r = this.db
          .prepare(
            `UPDATE batch_jobs SET done = ?, found = ?, not_found = ?, refused = ?, status = ?, note = ?,
                    finished_at = ?, lease_until = ?, claimed = ?
              WHERE id = ? AND runner = ?`,
          )
          .run(
            p.done,
            p.found,
            p.notFound,
            p.refused,
            p.status,
            p.note,
            p.finishedAt,
            p.leaseUntil,
            p.claimed,
            id,
            runner,
          );
        if (r.changes !== 1) return false;
        for (const o of p.outcomes) update.run(o.code, o.message, o.answer, id, o.n);
        if (p.rest)
          this.db
            .prepare('UPDATE batch_rows SET code = ?, message = ? WHERE job_id = ? AND code IS NULL AND answer IS NULL')
            .run(p.rest.code, p.rest.message, id);
        return true;
      })(),
    );
  }

  async results(id: string, from: number, limit: number): Promise<BatchResultRow[]> {
    return this.db
      .prepare(
        `SELECT n, operation, registration, state, code, message, answer FROM batch_rows
          WHERE job_id = ? AND n >= ? ORDER BY n LIMIT ?`,
      )
      .all(id, from, limit) as BatchResultRow[];
  }

  async running(): Promise<string[]> {
    const rows = this.db.prepare("SELECT id FROM batch_jobs WHERE status = 'running'").all() as { id: string }[];
    return rows.map((r) => r.id);
  }

  async deleteFinishedBefore(before: number): Promise<number> {
    return this.write(() =>
      this.db.transaction(() => {
        const ids = this.db.prepare('SELECT id FROM batch_jobs WHERE finished_at < ?').all(before) as { id: string }[];
        const rows = this.db.prepare('DELETE FROM batch_rows WHERE job_id = ?');
        const job = this.db.prepare('DELETE FROM batch_jobs WHERE id = ?');
        for (const { id } of ids) {
          rows.run(id);
          job.run(id);
        }
        return ids.length;
      })(),
    );
  }
}
