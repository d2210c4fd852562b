// One NDJSON import line -> a record to store, a key to delete, or why it cannot be imported.
// Strict: a key the format does not know is an error (a misspelling would otherwise vanish from
// the answer), except inside "vehicle", whose other keys go to vehicleJson. Pure, so that worker
// threads can run it (data/import-worker.ts).

import { findOperation } from '../contract/operations';
import { normalizeRegistration, normalizeState } from '../service/normalize';
import { motProblem, unknownKeyProblem, vehicleProblem } from '../service/records';
import type { RecordKey, StoredRecord } from '../store/store';

const MAX_LINE_CHARS = 1024 * 1024;

const RECORD_KEYS: readonly string[] = ['operation', 'registration', 'state', 'vehicle', 'mot', 'delete'];
const DELETE_KEYS: readonly string[] = ['operation', 'registration', 'state', 'delete'];

export type Parsed = { ok: true; record: StoredRecord; delete: false; value?: unknown } | { ok: true; record: RecordKey; delete: true } | { ok: false; reason: string };

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
  if (!op) return { ok: false, reason: `unknown operation "${r.operation.slice(0, 40)}"` };
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

  let payload: string;
  let value: unknown;
  if (op.result === 'UKMOTData') {
    if (r.vehicle !== undefined) return { ok: false, reason: 'a UKMOT record holds "mot", not "vehicle"' };
    const p = motProblem(r.mot);
    if (p) return { ok: false, reason: p };
    payload = JSON.stringify(r.mot);
    value = r.mot;
  } else {
    if (r.mot !== undefined) return { ok: false, reason: `a ${op.name} record holds "vehicle", not "mot"` };
    const p = vehicleProblem(r.vehicle);
    if (p) return { ok: false, reason: p };
    payload = JSON.stringify(r.vehicle);
    value = r.vehicle;
  }
  return { ok: true, delete: false, record: { operation: op.name, registration: reg.value, state, payload }, value };
}


/** A line's outcome as the import loop takes it: null for a blank line; a put carries its answers when forms are given. */
export type LineOutcome = Parsed | null;

/** Parses (and prepares the answers of) a run of lines: the unit of work a worker thread takes. */
export function parseChunk(lines: readonly string[], make?: (operation: string, payload: string, value?: unknown) => string | null): LineOutcome[] {
  const out: LineOutcome[] = new Array(lines.length);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === '') {
      out[i] = null;
      continue;
    }
    const p = parseLine(line);
    if (p.ok && !p.delete && make) {
      const r = p.record;
      // The parsed object stays here: only the record crosses back from a worker thread.
      out[i] = { ok: true, delete: false, record: { operation: r.operation, registration: r.registration, state: r.state, payload: r.payload, prepared: make(r.operation, r.payload, p.value) } };
    } else out[i] = p.ok && !p.delete ? { ok: true, delete: false, record: p.record } : p;
  }
  return out;
}
