// A finished batch job's results, one row per input row in input order: CSV or JSON, written a page
// of rows at a time (memory does not grow with the job). A found row carries the answer's fields
// flattened (nested objects as dotted names, lists as JSON text), whatever fields the answer has; any
// other row its error code and message.

import type { BatchResultRow } from '../store/batches';

/** Rows read from the store at a time. */
const PAGE = 1000;

/** The columns every row has, before the answer's fields. */
const BATCH_COLUMNS = ['row', 'operation', 'registration', 'state', 'code', 'message'] as const;

type Pages = (from: number, limit: number) => Promise<BatchResultRow[]>;

/** The answer's fields as (name, text) pairs: nested objects give dotted names, lists and nulls their JSON. */
function flatten(answer: string): [string, string][] {
  const out: [string, string][] = [];
  const walk = (prefix: string, v: unknown): void => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      for (const [k, inner] of Object.entries(v)) walk(prefix === '' ? k : `${prefix}.${k}`, inner);
      return;
    }
    out.push([prefix, typeof v === 'string' ? v : v === null ? '' : JSON.stringify(v)]);
  };
  walk('', JSON.parse(answer));
  return out;
}

/** A row without an answer: its error (a stopped job's rows not looked up have the stop's). */
function outcomeOf(row: BatchResultRow): { code: string; message: string } {
  return { code: row.code ?? 'SERVICE_UNAVAILABLE', message: row.message ?? 'Not looked up' };
}

async function* allRows(pages: Pages): AsyncGenerator<BatchResultRow> {
  for (let from = 1; ;) {
    const page = await pages(from, PAGE);
    for (const r of page) yield r;
    if (page.length < PAGE) return;
    from = page[page.length - 1].n + 1;
  }
}

function csvField(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The CSV: a header row (the fixed columns, then every answer field in the order first met), then the rows. */
export async function* batchCsv(pages: Pages): AsyncGenerator<string> {
  const fields = new Map<string, number>();
  for await (const r of allRows(pages)) {
    if (r.answer === null) continue;
    for (const [k] of flatten(r.answer)) if (!fields.has(k)) fields.set(k, fields.size);
  }
  yield [...BATCH_COLUMNS, ...fields.keys()].map(csvField).join(',') + '\r\n';
  let lines: string[] = [];
  for await (const r of allRows(pages)) {
    const { code, message } = r.answer !== null ? { code: '', message: '' } : outcomeOf(r);
    const cells = [String(r.n), r.operation, r.registration, r.state, code, message];
    const values = new Array<string>(fields.size).fill('');
    if (r.answer !== null) for (const [k, v] of flatten(r.answer)) values[fields.get(k) as number] = v;
    lines.push([...cells, ...values].map(csvField).join(','));
    if (lines.length >= PAGE) {
      yield lines.join('\r\n') + '\r\n';
      lines = [];
    }
  }
  if (lines.length > 0) yield lines.join('\r\n') + '\r\n';
}

/** The JSON: the job's progress object with `results`, one object per row (the fixed columns, then the fields). */
export async function* batchJson(progress: object, pages: Pages): AsyncGenerator<string> {
  const head = JSON.stringify(progress);
  yield `${head.slice(0, -1)},"results":[`;
  let first = true;
  let parts: string[] = [];
  for await (const r of allRows(pages)) {
    const o: Record<string, string | number> = {
      row: r.n,
      operation: r.operation,
      registration: r.registration,
      state: r.state,
    };
    if (r.answer === null) Object.assign(o, outcomeOf(r));
    else for (const [k, v] of flatten(r.answer)) if (!Object.hasOwn(o, k)) o[k] = v;
    parts.push((first ? '' : ',') + JSON.stringify(o));
    first = false;
    if (parts.length >= PAGE) {
      yield parts.join('');
      parts = [];
    }
  }
  yield parts.join('') + ']}';
}
