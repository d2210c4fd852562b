// Batch jobs from the admin API: an operator submits a job for a caller (named by its account, as
// every admin route names it) and reads its progress and results. The job is the caller's: its rows
// are looked up and charged as that caller's, as if it had sent POST /api/batch itself; the
// submission is written to the audit log.

import { noSuch } from '../accounts/manage';
import { batchBodyLimit, batchRows } from '../service/batch-input';
import { batchCsv } from '../service/batch-output';
import type { BatchRunner } from '../service/batch';
import { asLookupError } from '../service/errors';
import type { BatchJob } from '../store/batches';
import { AdminError, invalid } from './errors';
import type { Request, Route } from './routes';

/** What the admin API needs of the service's batch runner: null where none runs in this process (WORKERS > 1). */
export type AdminBatches = Pick<BatchRunner, 'submit' | 'maxRows'>;

/** The address a job submitted here is looked up from, for the caller's allow-list. */
const CONSOLE_ADDRESS = '127.0.0.1';

const JOB = {
  type: 'object',
  required: ['id', 'status', 'rows', 'done', 'found', 'notFound', 'refused'],
  properties: {
    id: { type: 'string' },
    status: { type: 'string', enum: ['running', 'done', 'stopped'] },
    rows: { type: 'integer' },
    done: { type: 'integer' },
    found: { type: 'integer' },
    notFound: { type: 'integer' },
    refused: { type: 'integer' },
    note: { type: ['string', 'null'] },
  },
} as const;

function jobJson(job: BatchJob): Record<string, unknown> {
  const { id, status, rows, done, found, notFound, refused, note } = job;
  return { id, status, rows, done, found, notFound, refused, note };
}

async function submit(req: Request): Promise<{ status: number; body: unknown }> {
  const runner = req.ctx.batches;
  if (!runner)
    throw new AdminError(
      503,
      'SERVICE_UNAVAILABLE',
      'batch jobs are run by the service process: with WORKERS > 1 submit them through POST /api/batch',
    );
  const name = req.params.name;
  const account = await req.ctx.store.accounts.getAccountByName(name);
  if (!account) throw noSuch(name);
  let rows;
  try {
    rows = batchRows((req.body as { csv: string }).csv, 'text/csv', runner.maxRows);
  } catch (e) {
    throw invalid(asLookupError(e).message);
  }
  // The account's key (its row's `username`): the job's rows are charged to it as the caller's own lookups.
  const job = await runner.submit(account.username, { address: CONSOLE_ADDRESS }, rows);
  await req.ctx.store.admin.addAudit({
    at: new Date().toISOString(),
    actor: req.actor,
    action: 'batch',
    target: name,
    before: null,
    after: { job: job.id, rows: job.rows },
  });
  return { status: 202, body: jobJson(job) };
}

async function jobOf(req: Request): Promise<BatchJob> {
  const job = await req.ctx.store.batches.get(req.params.name);
  if (!job) throw new AdminError(404, 'NOT_FOUND', 'no batch job with that id (or it has expired)');
  return job;
}

export function batchRoutes(): Route[] {
  return [
    {
      method: 'POST',
      path: '/admin/api/users/{name}/batch',
      operationId: 'submitBatch',
      summary: "A batch job for the caller (CSV: operation,registration,state), charged as the caller's own lookups",
      body: { type: 'object', additionalProperties: false, required: ['csv'], properties: { csv: { type: 'string' } } },
      // The CSV as POST /api/batch takes it, inside JSON (whose escapes of quotes and line ends at most double it).
      maxBody: (ctx) => (ctx.batches ? 2 * batchBodyLimit(ctx.batches.maxRows) : 65_536),
      ok: { status: 202, description: 'the job, begun', schema: JOB },
      errors: [400, 404, 503],
      handle: submit,
    },
    {
      method: 'GET',
      path: '/admin/api/batch/{name}',
      operationId: 'getBatch',
      summary: "A batch job's progress (the path's parameter is the job id)",
      ok: { status: 200, description: 'the job', schema: JOB },
      errors: [404],
      handle: async (req) => ({ status: 200, body: jobJson(await jobOf(req)) }),
    },
    {
      method: 'GET',
      path: '/admin/api/batch/{name}/results',
      operationId: 'getBatchResults',
      summary: "A finished batch job's results, one CSV row per input row (the path's parameter is the job id)",
      ok: { status: 200, description: 'the results', csv: true },
      errors: [404, 409],
      handle: async (req) => {
        const job = await jobOf(req);
        if (job.status === 'running') throw new AdminError(409, 'RUNNING', 'the job is still running');
        let text = '';
        for await (const part of batchCsv((from, limit) => req.ctx.store.batches.results(job.id, from, limit)))
          text += part;
        return { status: 200, text, contentType: 'text/csv; charset=utf-8' };
      },
    },
  ];
}
