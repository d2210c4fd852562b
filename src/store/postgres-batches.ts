// Batch jobs on the PostgreSQL store (see batches.ts for each method's contract). A job's rows go in
// with it in one transaction, a few thousand to a statement; a chunk's outcomes and the job's counts
// are written in one statement, conditional on the runner still holding the job.

import type { BatchInput, BatchJob, BatchProgress, BatchResultRow, BatchStore } from './batches';
import type { PgRunner } from './postgres-accounts';
import { toJob } from './sqlite-batches';

/** Input rows per INSERT statement when a job is created. */
const ROWS_PER_INSERT = 5000;

type JobRow = Parameters<typeof toJob>[0];

export class PostgresBatches implements BatchStore {
  constructor(private readonly db: PgRunner) {}

  async create(
    job: Pick<BatchJob, 'id' | 'owner' | 'address' | 'createdAt' | 'runner' | 'leaseUntil'>,
    rows: readonly BatchInput[],
  ): Promise<void> {
    await this.db.transaction(async (client) => {
      await client.query(
        `INSERT INTO batch_jobs (id, owner, address, status, rows, created_at, runner, lease_until)
         VALUES ($1, $2, $3, 'running', $4, $5, $6, $7)`,
        [job.id, job.owner, job.address, rows.length, job.createdAt, job.runner, job.leaseUntil],
      );
      for (let at = 0; at < rows.length; at += ROWS_PER_INSERT) {
        const part = rows.slice(at, at + ROWS_PER_INSERT);
        await client.query(
          `INSERT INTO batch_rows (job_id, n, operation, registration, state)
           SELECT $1, $2::int + ord, op, reg, st
             FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS t(op, reg, st, ord)`,
          [job.id, at, part.map((r) => r.operation), part.map((r) => r.registration), part.map((r) => r.state)],
        );
      }
    });
  }

  async get(id: string): Promise<BatchJob | null> {
    const r = await this.db.query<JobRow>('batch-get', 'SELECT * FROM batch_jobs WHERE id = $1', [id]);
    return r.rows[0] ? toJob(r.rows[0]) : null;
  }

  async take(id: string, runner: string, now: number, leaseUntil: number): Promise<boolean> {
    const r = await this.db.query(
      'batch-take',
      `UPDATE batch_jobs SET runner = $1, lease_until = $2
        WHERE id = $3 AND status = 'running' AND (runner IS NULL OR runner = $1 OR lease_until < $4)`,
      [runner, leaseUntil, id, now],
    );
    return r.rowCount === 1;
  }

  async claim(id: string, runner: string, claimed: number, leaseUntil: number): Promise<void> {
    await this.db.query(
      'batch-claim',
      'UPDATE batch_jobs SET claimed = $1, lease_until = $2 WHERE id = $3 AND runner = $4',
      [claimed, leaseUntil, id, runner],
    );
  }

  async progress(id: string, runner: string, p: BatchProgress): Promise<boolean> {
    const r = await this.db.query<{ ok: boolean }>(
      'batch-progress',
      `WITH job AS (
         UPDATE batch_jobs SET done = $3, found = $4, not_found = $5, refused = $6, status = $7, note = $8,
                finished_at = $9, lease_until = $10, claimed = $11
          WHERE id = $1 AND runner = $2 RETURNING id),
       written AS (
         UPDATE batch_rows b SET code = o.code, message = o.message, answer = o.answer
           FROM unnest($12::int[], $13::text[], $14::text[], $15::text[]) AS o(n, code, message, answer)
          WHERE b.job_id = (SELECT id FROM job) AND b.n = o.n RETURNING b.n),
       rest AS (
         UPDATE batch_rows b SET code = $16, message = $17
          WHERE $16::text IS NOT NULL AND b.job_id = (SELECT id FROM job) AND b.code IS NULL AND b.answer IS NULL
            AND b.n <> ALL ($12::int[]))
       SELECT EXISTS (SELECT 1 FROM job) AS ok`,
      [
        id,
        runner,
        p.done,
        p.found,
        p.notFound,
        p.refused,
        p.status,
        p.note,
        p.finishedAt,
        p.leaseUntil,
        p.claimed,
        p.outcomes.map((o) => o.n),
        p.outcomes.map((o) => o.code),
        p.outcomes.map((o) => o.message),
        p.outcomes.map((o) => o.answer),
        p.rest?.code ?? null,
        p.rest?.message ?? null,
      ],
    );
    return r.rows[0]?.ok === true;
  }

  async results(id: string, from: number, limit: number): Promise<BatchResultRow[]> {
    const r = await this.db.query<BatchResultRow>(
      'batch-results',
      `SELECT n, operation, registration, state, code, message, answer FROM batch_rows
        WHERE job_id = $1 AND n >= $2 ORDER BY n LIMIT $3`,
      [id, from, limit],
    );
    return r.rows;
  }

  async running(): Promise<string[]> {
    const r = await this.db.query<{ id: string }>(
      'batch-running',
      "SELECT id FROM batch_jobs WHERE status = 'running'",
      [],
    );
    return r.rows.map((row) => row.id);
  }

  async deleteFinishedBefore(before: number): Promise<number> {
    // The rows go with their job (ON DELETE CASCADE).
    const r = await this.db.query('batch-expire', 'DELETE FROM batch_jobs WHERE finished_at < $1', [before], 1, null);
    return r.rowCount ?? 0;
  }
}
