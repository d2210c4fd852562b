// A batch job's input (POST /api/batch, `reglookup lookup --file`): CSV with a header row, or JSON,
// into rows of (operation, registration, state) kept as text. What is wrong with the whole input (no
// rows, a header without a registration column, too many rows) refuses the job; what is wrong with
// one row (an unknown operation, a malformed registration) is that row's error when the job runs.

import { LookupError } from '../core/errors';
import type { BatchInput } from '../store/batches';

/** Header names (compared ignoring case and spaces) to the column they fill. */
const COLUMNS: ReadonlyMap<string, keyof BatchInput> = new Map([
  ['operation', 'operation'],
  ['registration', 'registration'],
  ['registrationnumber', 'registration'],
  ['state', 'state'],
]);

/** Body bytes a job may send per row it may hold (BATCH_MAX_ROWS): far above a CSV row's 20-40. */
const BATCH_BYTES_PER_ROW = 256;

/** The body a job may send: BATCH_BYTES_PER_ROW a row, and never less than MAX_BODY_BYTES's default. */
export function batchBodyLimit(maxRows: number): number {
  return Math.max(65_536, maxRows * BATCH_BYTES_PER_ROW);
}

function malformed(message: string): LookupError {
  return new LookupError('MALFORMED_REQUEST', message);
}

function tooMany(maxRows: number): LookupError {
  return new LookupError(
    'PAYLOAD_TOO_LARGE',
    `A batch job holds at most ${maxRows.toLocaleString('en-US')} rows (BATCH_MAX_ROWS); split the file`,
  );
}

/** RFC 4180 records of `text`: fields split at commas outside quotes, a doubled quote inside them is one. */
function* csvRecords(text: string): Generator<string[]> {
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const n = text.length;
  while (i < n) {
    const fields: string[] = [];
    for (;;) {
      let field = '';
      if (text[i] === '"') {
        i++;
        for (;;) {
          const q = text.indexOf('"', i);
          if (q === -1) throw malformed('A quoted CSV field is never closed');
          field += text.slice(i, q);
          i = q + 1;
          if (text[i] !== '"') break;
          field += '"';
          i++;
        }
      } else {
        let j = i;
        while (j < n && text[j] !== ',' && text[j] !== '\n' && text[j] !== '\r') j++;
        field = text.slice(i, j);
        i = j;
      }
      fields.push(field);
      if (text[i] === ',') {
        i++;
        continue;
      }
      break;
    }
    if (text[i] === '\r') i++;
    if (text[i] === '\n') i++;
    else if (i < n) throw malformed('A quoted CSV field is followed by text before the next comma');
    yield fields;
  }
}

/** CSV with a header row naming operation, registration (or RegistrationNumber) and state; `operation`: the default. */
function csvRows(text: string, maxRows: number, operation = ''): BatchInput[] {
  const records = csvRecords(text);
  const first = records.next();
  if (first.done) throw malformed('The CSV is empty: give a header row (operation,registration,state) and rows');
  const header = first.value.map((h) => COLUMNS.get(h.replace(/\s+/g, '').toLowerCase()));
  const unknown = first.value.filter((_, i) => header[i] === undefined);
  const shown = (names: readonly string[]) =>
    names
      .slice(0, 5)
      .map((h) => JSON.stringify(h.slice(0, 40)))
      .join(', ');
  if (unknown.length > 0)
    throw malformed(
      `The CSV's header names ${unknown.length === 1 ? 'a column' : 'columns'} this service does not take: ${shown(unknown)}` +
        ` (the columns are operation, registration and state${first.value.some((h) => /[;\t]/.test(h)) ? ', separated by commas' : ''})`,
    );
  if (!header.includes('registration'))
    throw malformed(
      `The CSV's header has no registration column (got ${shown(first.value)}); name the columns operation, registration and state`,
    );
  if (!header.includes('operation') && operation === '')
    throw malformed('The CSV has no operation column: add one, or give ?operation= for every row');
  const rows: BatchInput[] = [];
  for (const rec of records) {
    if (rec.length === 1 && rec[0].trim() === '') continue;
    if (rows.length >= maxRows) throw tooMany(maxRows);
    const row = { operation, registration: '', state: '' };
    header.forEach((col, i) => {
      if (col !== undefined && rec[i] !== undefined) row[col] = rec[i];
    });
    rows.push(row);
  }
  return rows;
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
}

/** JSON: an array of {operation, registration, state}, or {"rows": [...]}; `operation`: the default. */
function jsonRows(body: string, maxRows: number, operation = ''): BatchInput[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw malformed('The body is not valid JSON');
  }
  const list = Array.isArray(parsed) ? parsed : (parsed as { rows?: unknown } | null)?.rows;
  if (!Array.isArray(list))
    throw malformed('Give a JSON array of {"operation","registration","state"}, or {"rows": [...]}');
  if (list.length > maxRows) throw tooMany(maxRows);
  return list.map((item: unknown) => {
    const o = (item !== null && typeof item === 'object' ? item : {}) as Record<string, unknown>;
    const own = (k: string) => (Object.hasOwn(o, k) ? o[k] : undefined);
    return {
      operation: text(own('operation')) || operation,
      registration: text(own('registration') ?? own('RegistrationNumber')),
      state: text(own('state') ?? own('State')),
    };
  });
}

/** The rows of a body, by its media type (text/csv or application/json). */
export function batchRows(body: string, mediaType: string, maxRows: number, operation = ''): BatchInput[] {
  const rows =
    mediaType === 'application/json' ? jsonRows(body, maxRows, operation) : csvRows(body, maxRows, operation);
  if (rows.length === 0) throw malformed('The job has no rows');
  return rows;
}
