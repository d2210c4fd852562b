// Batch jobs over HTTP: POST /api/batch takes a CSV (with a header row) or JSON list of lookups and
// answers 202 with the job's id at once; GET /api/batch/{id} answers 202 with its progress while it
// runs, and 200 with its results (CSV or JSON: ?format=, else the Accept header) once it has ended.
// The username is taken as the JSON API takes it (HTTP Basic, or ?username=). A job is read by the
// username that made it only: any other gets the 404 an unknown id gets.

import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import { stackOf } from '../core/errors';
import type { TrustedProxies } from '../config';
import type { Logger } from '../ops/logger';
import type { BatchJob } from '../store/batches';
import { BatchRunner } from '../service/batch';
import { batchBodyLimit, batchRows } from '../service/batch-input';
import { batchCsv, batchJson } from '../service/batch-output';
import { asLookupError, ERRORS, LookupError } from '../service/errors';
import { BATCH_OPENAPI_PATH, batchOpenApiDocument } from '../contract/openapi';
import { baseUrl } from './help';
import { paramValue } from '../service/lookup';
import { checkCharset, decodeUtf8, parseMediaType, readBody } from './body';
import { note } from './context';
import { callerOf } from './forwarded';
import { parseForm, queryString } from './http';
import { basicUsername } from './json';
import { keyOf } from '../core/key';

const BATCH_PATH = '/api/batch';

interface BatchDeps {
  readonly runner: BatchRunner;
  readonly logger: Logger;
  readonly trustProxy: TrustedProxies;
  readonly publicUrl: string | null;
  /** Hours a finished job is kept (BATCH_RETENTION_HOURS): its expiry is part of its progress. */
  readonly retentionHours: number;
}

const QUERY_NAMES = new Map([
  ['username', 'username'],
  ['format', 'format'],
  ['operation', 'operation'],
]);

/** Whether a request target is POST /api/batch's (for the Expect: 100-continue answer, app.ts). */
export function isBatchPath(url: string | undefined): boolean {
  return (url ?? '').split('?')[0].replace(/\/+$/, '').toLowerCase() === BATCH_PATH;
}

/** Poll again after this many seconds while the job runs. */
const POLL_S = 2;

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string | number> = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(text);
}

function sendError(req: IncomingMessage, res: ServerResponse, err: LookupError, extra: Record<string, string> = {}) {
  note(req, { errorCode: err.code });
  const headers: Record<string, string | number> = { ...extra, 'X-Error-Code': err.code };
  if (err.retryAfter) headers['Retry-After'] = err.retryAfter;
  if (res.headersSent) return void res.destroy();
  sendJson(res, err.spec.status, { code: err.code, message: err.message }, headers);
}

/** The username (Basic or ?username=, as the JSON API reads it), checked as a lookup's parameter is. */
function usernameOf(req: IncomingMessage, query: Record<string, unknown>): string {
  const basic = basicUsername(req.headers.authorization);
  const given = typeof query.username === 'string' && query.username.trim() !== '' ? query.username : undefined;
  if (basic !== null && basic !== '' && given !== undefined && given !== basic)
    throw new LookupError(
      'INVALID_PARAMETER',
      'The username was given both by Basic authentication and in the query string, differently; give it once',
    );
  const raw = { username: basic !== null && basic !== '' ? basic : given };
  return paramValue({ name: 'the batch job', required: ['username'] }, raw, 'username') as string;
}

/** The job's progress as the caller sees it. */
function progressOf(job: BatchJob, retentionHours: number): Record<string, unknown> {
  const expires = job.finishedAt === null ? null : job.finishedAt + retentionHours * 3_600_000;
  return {
    id: job.id,
    status: job.status,
    rows: job.rows,
    done: job.done,
    found: job.found,
    notFound: job.notFound,
    refused: job.refused,
    note: job.note,
    createdAt: new Date(job.createdAt).toISOString(),
    finishedAt: job.finishedAt === null ? null : new Date(job.finishedAt).toISOString(),
    expiresAt: expires === null ? null : new Date(expires).toISOString(),
    results: `${BATCH_PATH}/${job.id}`,
  };
}

async function submit(deps: BatchDeps, req: express.Request, res: express.Response): Promise<void> {
  const query = parseForm(queryString(req.url), QUERY_NAMES, 'query names are matched ignoring case');
  const username = usernameOf(req, query);
  note(req, { username });
  const media = parseMediaType(req.headers['content-type']);
  if (media.type !== 'text/csv' && media.type !== 'application/json')
    throw new LookupError(
      'UNSUPPORTED_MEDIA_TYPE',
      'Send the rows as text/csv (a header row: operation,registration,state) or application/json',
    );
  checkCharset(media);
  const max = deps.runner.maxRows;
  const body = decodeUtf8(await readBody(req, batchBodyLimit(max)));
  const operation = typeof query.operation === 'string' ? query.operation : '';
  const rows = batchRows(body, media.type, max, operation);
  const job = await deps.runner.submit(keyOf(username), callerOf(req, deps.trustProxy), rows);
  sendJson(res, 202, progressOf(job, deps.retentionHours), { Location: `${BATCH_PATH}/${job.id}` });
}

/** ?format=csv|json, else the Accept header: CSV when it names text/csv before any JSON. */
function wantsCsv(req: IncomingMessage, format: unknown): boolean {
  if (format === 'csv') return true;
  if (format === 'json') return false;
  if (format !== undefined) throw new LookupError('INVALID_PARAMETER', "format must be 'csv' or 'json'");
  const accept = (req.headers.accept ?? '').toLowerCase();
  const csv = accept.indexOf('text/csv');
  const json = accept.indexOf('application/json');
  return csv !== -1 && (json === -1 || csv < json);
}

async function read(deps: BatchDeps, req: express.Request, res: express.Response, id: string): Promise<void> {
  const query = parseForm(queryString(req.url), QUERY_NAMES, 'query names are matched ignoring case');
  const username = usernameOf(req, query);
  note(req, { username });
  const csv = wantsCsv(req, query.format);
  const job = await deps.runner.read(id, keyOf(username));
  if (job === null)
    throw new LookupError('UNKNOWN_OPERATION', 'No batch job with that id for this username (or it has expired)');
  const progress = progressOf(job, deps.retentionHours);
  if (job.status === 'running') return sendJson(res, 202, progress, { 'Retry-After': String(POLL_S) });
  const pages = (from: number, limit: number) => deps.runner.results(job.id, from, limit);
  res.writeHead(200, {
    'Content-Type': csv ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...(csv ? { 'Content-Disposition': `attachment; filename="batch-${job.id}.csv"` } : {}),
  });
  // The ended job's JSON: the progress with `results` the list itself, not the job's address.
  for await (const part of csv ? batchCsv(pages) : batchJson({ ...progress, results: undefined }, pages)) {
    if (!res.write(part)) await new Promise((resolve) => res.once('drain', resolve));
    if (res.destroyed) return;
  }
  res.end();
}

/** Requests for /api/batch and below (any case): every other request passes with one test, not a router's walk. */
const BATCH_RE = /^\/api\/batch(?:[/?]|$)/i;

export function batchRouter(deps: BatchDeps): express.RequestHandler {
  const router = express.Router({ caseSensitive: false, strict: false });
  const failed = (req: express.Request, res: express.Response) => (e: unknown) => {
    const err = asLookupError(e);
    if (err.code === 'INTERNAL_ERROR') deps.logger.error('batch request failed', { error: stackOf(e) });
    sendError(req, res, err);
  };
  router.all(BATCH_PATH, (req, res) => {
    note(req, { transport: 'batch' });
    if (req.method !== 'POST')
      return sendError(req, res, new LookupError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here; use POST`), {
        Allow: 'POST',
      });
    submit(deps, req, res).catch(failed(req, res));
  });
  router.get(BATCH_OPENAPI_PATH, (req, res) => {
    note(req, { transport: 'batch' });
    sendJson(res, 200, batchOpenApiDocument(baseUrl(req, deps.publicUrl, deps.trustProxy), Object.keys(ERRORS)));
  });
  router.all(`${BATCH_PATH}/:id`, (req, res) => {
    note(req, { transport: 'batch' });
    if (req.method !== 'GET')
      return sendError(req, res, new LookupError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here; use GET`), {
        Allow: 'GET',
      });
    read(deps, req, res, String(req.params.id)).catch(failed(req, res));
  });
  return (req, res, next) => (BATCH_RE.test(req.url) ? router(req, res, next) : next());
}
