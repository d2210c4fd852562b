// One NDJSON import line -> a record to store, a key to delete, or why it cannot be imported.
// Strict: a key the format does not know is an error (a misspelling would otherwise vanish from
// the answer), except inside "vehicle", whose other keys go to vehicleJson. Pure, so that worker
// threads can run it (data/chunk.ts, on the threads of data/workers.ts).

import { findOperation, suggestOperation } from '../contract/operations';
import { normalizeRegistration, normalizeState } from '../service/normalize';
import { motProblems, plainJsonText, unknownKeyProblem, vehicleProblems } from '../service/records';
import type { RecordKey, StoredRecord } from '../store/store';

const MAX_LINE_CHARS = 1024 * 1024;

const RECORD_KEYS: readonly string[] = ['operation', 'registration', 'state', 'vehicle', 'mot', 'delete'];
const DELETE_KEYS: readonly string[] = ['operation', 'registration', 'state', 'delete'];

type Parsed =
  | { ok: true; record: StoredRecord; delete: false }
  | { ok: true; record: RecordKey; delete: true }
  | { ok: false; reason: string };

/** The names of a header line's fields, split on `separator`, unquoted, in lower case. */
function headerNames(line: string, separator: string): string[] {
  return line.split(separator).map((f) =>
    f
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .trim()
      .toLowerCase(),
  );
}

/**
 * When a line that is not JSON is the start of a register's export given without its --format, what to give instead:
 * the reader's error for every line of a large CSV says nothing of why.
 */
function formatHint(text: string): string | null {
  const line = text.replace(/^\uFEFF/, '');
  if (line.startsWith('PK\u0003\u0004'))
    return "this is a ZIP archive, as Ukraine's register comes: use --format ua-mvs";
  if (line.includes(';') && headerNames(line, ';').includes('n_reg_new'))
    return "this looks like Ukraine's register (a ';'-separated header with N_REG_NEW): use --format ua-mvs";
  if (headerNames(line, ',').includes('kenteken'))
    return 'this looks like the RDW export (a CSV header with Kenteken): use --format rdw';
  return null;
}

/** Whether a line's reason is formatHint's: the input is a register export, not NDJSON, and reading on is pointless. */
export function isFormatHint(reason: string): boolean {
  return /: use --format [\w-]+$/.test(reason);
}

/** One NDJSON line -> a record to store, a key to delete, or why it cannot be imported. */
export function parseLine(text: string): Parsed {
  if (text.length > MAX_LINE_CHARS) return { ok: false, reason: `line is longer than ${MAX_LINE_CHARS} characters` };
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch (e) {
    return { ok: false, reason: formatHint(text) ?? `not valid JSON (${(e as Error).message})` };
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj))
    return { ok: false, reason: 'a record must be a JSON object' };
  const r = obj as Record<string, unknown>;
  const isDelete = r.delete !== undefined;
  if (isDelete && r.delete !== true) return { ok: false, reason: '"delete" must be true (or absent)' };
  // Every problem the line has, in the order they were once reported one at a time (the first is
  // the message a line with one problem always gave), so that a line is fixed in one go.
  const problems: string[] = [];
  const unknown = unknownKeyProblem('the record', r, isDelete ? DELETE_KEYS : RECORD_KEYS);
  if (unknown)
    problems.push(
      isDelete && RECORD_KEYS.includes(Object.keys(r).find((k) => !DELETE_KEYS.includes(k)) ?? '')
        ? `a deletion holds only operation, registration, state and "delete":true`
        : unknown,
    );
  const op = typeof r.operation === 'string' ? findOperation(r.operation) : undefined;
  if (typeof r.operation !== 'string') problems.push('"operation" is missing (e.g. "Check", "CheckUSA", "UKMOT")');
  else if (!op) {
    const near = suggestOperation(r.operation);
    problems.push(
      `unknown operation "${r.operation.slice(0, 40)}"${near ? ` (names are case-sensitive here: did you mean "${near.name}"?)` : ''}`,
    );
  }
  let registration = '';
  if (typeof r.registration !== 'string') problems.push('"registration" must be a string');
  else {
    const reg = normalizeRegistration(r.registration);
    if (reg.ok) registration = reg.value;
    else problems.push(`"registration" ${reg.reason}`);
  }
  let state = '';
  if (op?.state) {
    if (typeof r.state !== 'string') problems.push(`"state" is required for ${op.name}`);
    else {
      const st = normalizeState(op.state.country, r.state);
      if (st.ok) state = st.value;
      else problems.push(`"state" ${st.reason}`);
    }
  } else if (op && r.state !== undefined) {
    problems.push(`"state" is only for CheckUSA, CheckCanada and CheckAustralia, not ${op.name}`);
  }
  if (!op) return refused(problems);
  if (isDelete)
    return problems.length
      ? refused(problems)
      : { ok: true, delete: true, record: { operation: op.name, registration, state } };

  const plain = plainJsonText(text);
  const body = op.result === 'UKMOTData' ? 'mot' : 'vehicle';
  // A body under the other name: that is the problem, not that the right name is missing.
  if (body === 'mot') {
    if (r.vehicle !== undefined) problems.push('a UKMOT record holds "mot", not "vehicle"');
    if (r.vehicle === undefined || r.mot !== undefined) problems.push(...motProblems(r.mot, plain));
  } else {
    if (r.mot !== undefined) problems.push(`a ${op.name} record holds "vehicle", not "mot"`);
    if (r.mot === undefined || r.vehicle !== undefined) problems.push(...vehicleProblems(r.vehicle, plain));
  }
  if (problems.length) return refused(problems);
  const payload = (plain && bodyText(text, r, body)) || JSON.stringify(r[body]);
  return { ok: true, delete: false, record: { operation: op.name, registration, state, payload } };
}

/** Problems a line's reason names at most; the rest are counted. */
const MAX_PROBLEMS = 10;

/** A refused line: its problems joined by "; " (the first as it always read). */
function refused(problems: readonly string[]): Parsed {
  const shown = problems.slice(0, MAX_PROBLEMS).join('; ');
  const more = problems.length - MAX_PROBLEMS;
  return { ok: false, reason: more > 0 ? `${shown}; and ${more} more problem(s)` : shown };
}

/** Any top-level key a record line may hold, as it would be written in the line's text. */
const QUOTED_KEY_RE = new RegExp(`"(?:${RECORD_KEYS.join('|')})"`);

/**
 * The text of the line's body ("vehicle" or "mot") exactly as the line writes it, when the line is
 * laid out as export writes it ({"operation":..,"registration":..[,"state":..],"vehicle":{...}}),
 * so that the body need not be written out again; otherwise null (the caller writes it with
 * JSON.stringify). The line has been parsed already; what is left to rule out is a second
 * top-level member after the body (a repeated key, which JSON.parse lets the last of win): it
 * would have to be written as one of the record's key names in quotes (none of them can be written
 * with any escape but \u, and a plain line has none), so a body holding none of those names is
 * the body alone.
 */
function bodyText(text: string, r: Readonly<Record<string, unknown>>, body: 'vehicle' | 'mot'): string | null {
  const state = r.state === undefined ? '' : `,"state":${JSON.stringify(r.state)}`;
  const head = `{"operation":${JSON.stringify(r.operation)},"registration":${JSON.stringify(r.registration)}${state},"${body}":`;
  if (!text.startsWith(head) || text.charCodeAt(text.length - 1) !== 125 /* } */) return null;
  const value = text.slice(head.length, -1);
  if (value.charCodeAt(0) !== 123 /* { */ || value.charCodeAt(value.length - 1) !== 125) return null;
  return QUOTED_KEY_RE.test(value) ? null : value;
}
