// One NDJSON import line -> a record to store, a key to delete, or why it cannot be imported.
// Strict: a key the format does not know is an error (a misspelling would otherwise vanish from
// the answer), except inside "vehicle", whose other keys go to vehicleJson. Pure, so that worker
// threads can run it (data/chunk.ts, on the threads of data/workers.ts).

import { findOperation, suggestOperation } from '../contract/operations';
import { normalizeRegistration, normalizeState } from '../service/normalize';
import { motProblem, plainJsonText, unknownKeyProblem, vehicleProblem } from '../service/records';
import type { RecordKey, StoredRecord } from '../store/store';

const MAX_LINE_CHARS = 1024 * 1024;

const RECORD_KEYS: readonly string[] = ['operation', 'registration', 'state', 'vehicle', 'mot', 'delete'];
const DELETE_KEYS: readonly string[] = ['operation', 'registration', 'state', 'delete'];

export type Parsed = { ok: true; record: StoredRecord; delete: false } | { ok: true; record: RecordKey; delete: true } | { ok: false; reason: string };

/** One NDJSON line -> a record to store, a key to delete, or why it cannot be imported. */
export function parseLine(text: string): Parsed {
  if (text.length > MAX_LINE_CHARS) return { ok: false, reason: `line is longer than ${MAX_LINE_CHARS} characters` };
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch (e) {
    return { ok: false, reason: `not valid JSON (${(e as Error).message})` };
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return { ok: false, reason: 'a record must be a JSON object' };
  const r = obj as Record<string, unknown>;
  const isDelete = r.delete !== undefined;
  if (isDelete && r.delete !== true) return { ok: false, reason: '"delete" must be true (or absent)' };
  const unknown = unknownKeyProblem('the record', r, isDelete ? DELETE_KEYS : RECORD_KEYS);
  if (unknown) return { ok: false, reason: isDelete && RECORD_KEYS.includes(Object.keys(r).find((k) => !DELETE_KEYS.includes(k)) ?? '') ? `a deletion holds only operation, registration, state and "delete":true` : unknown };
  if (typeof r.operation !== 'string') return { ok: false, reason: '"operation" is missing (e.g. "Check", "CheckUSA", "UKMOT")' };
  const op = findOperation(r.operation);
  if (!op) {
    const near = suggestOperation(r.operation);
    return { ok: false, reason: `unknown operation "${r.operation.slice(0, 40)}"${near ? ` (names are case-sensitive here: did you mean "${near.name}"?)` : ''}` };
  }
  if (typeof r.registration !== 'string') return { ok: false, reason: '"registration" must be a string' };
  const reg = normalizeRegistration(r.registration);
  if (!reg.ok) return { ok: false, reason: `"registration" ${reg.reason}` };

  let state = '';
  if (op.state) {
    if (typeof r.state !== 'string') return { ok: false, reason: `"state" is required for ${op.name}` };
    const st = normalizeState(op.state.country, r.state);
    if (!st.ok) return { ok: false, reason: `"state" ${st.reason}` };
    state = st.value;
  } else if (r.state !== undefined) {
    return { ok: false, reason: `"state" is only for CheckUSA, CheckCanada and CheckAustralia, not ${op.name}` };
  }
  if (isDelete) return { ok: true, delete: true, record: { operation: op.name, registration: reg.value, state } };

  const plain = plainJsonText(text);
  const body = op.result === 'UKMOTData' ? 'mot' : 'vehicle';
  if (body === 'mot') {
    if (r.vehicle !== undefined) return { ok: false, reason: 'a UKMOT record holds "mot", not "vehicle"' };
    const p = motProblem(r.mot, plain);
    if (p) return { ok: false, reason: p };
  } else {
    if (r.mot !== undefined) return { ok: false, reason: `a ${op.name} record holds "vehicle", not "mot"` };
    const p = vehicleProblem(r.vehicle, plain);
    if (p) return { ok: false, reason: p };
  }
  const payload = (plain && bodyText(text, r, body)) || JSON.stringify(r[body]);
  return { ok: true, delete: false, record: { operation: op.name, registration: reg.value, state, payload } };
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
