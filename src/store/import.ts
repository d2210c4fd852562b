// NDJSON import: every line is checked; records are written inside one transaction as they are
// read (so memory stays flat), and the transaction commits only if no line was invalid.

import fs from 'node:fs';
import readline from 'node:readline';
import type { Readable } from 'node:stream';
import { findOperation } from '../contract/operations';
import { normalizeRegistration, normalizeState } from '../service/normalize';
import { motProblem, vehicleProblem } from '../service/records';
import { updatePrepared, type PreparedForms, type StoredRecord, type VehicleStore } from './store';

const MAX_LINE_CHARS = 1024 * 1024;
/** How many bad lines are reported before the rest are only counted. */
const MAX_REPORTED = 50;

export interface LineError {
  readonly line: number;
  readonly reason: string;
}

export interface ImportReport {
  readonly lines: number;
  readonly imported: number;
  readonly byOperation: Readonly<Record<string, number>>;
  readonly errors: readonly LineError[];
  /** Invalid lines, including those past the reporting cap. */
  readonly invalid: number;
  readonly committed: boolean;
}

type Parsed = { ok: true; record: StoredRecord } | { ok: false; reason: string };

/** One NDJSON line -> a record to store, or why it cannot be imported. */
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

  let payload: string;
  if (op.result === 'UKMOTData') {
    if (r.vehicle !== undefined) return { ok: false, reason: 'a UKMOT record holds "mot", not "vehicle"' };
    const p = motProblem(r.mot);
    if (p) return { ok: false, reason: p };
    payload = JSON.stringify(r.mot);
  } else {
    if (r.mot !== undefined) return { ok: false, reason: `a ${op.name} record holds "vehicle", not "mot"` };
    const p = vehicleProblem(r.vehicle);
    if (p) return { ok: false, reason: p };
    payload = JSON.stringify(r.vehicle);
  }
  return { ok: true, record: { operation: op.name, registration: reg.value, state, payload } };
}

/**
 * Imports a stream of NDJSON; all or nothing. With `forms`, each record's prepared forms are made
 * as it is written; if the store held records prepared under another version, all are made anew.
 */
export async function importStream(store: VehicleStore, input: Readable, forms?: PreparedForms): Promise<ImportReport> {
  const current = forms !== undefined && ((await store.isEmpty()) || (await store.preparedVersion()) === forms.version);
  const batch = await store.beginImport();
  // Only now: readline starts reading at once, and lines read while a store that does real I/O
  // (PostgreSQL) was answering the awaits above would be emitted before the loop below listens.
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  const errors: LineError[] = [];
  const byOperation: Record<string, number> = {};
  let n = 0;
  let imported = 0;
  let invalid = 0;
  try {
    for await (const line of lines) {
      n++;
      if (line.trim() === '') continue;
      const parsed = parseLine(line.charCodeAt(0) === 0xfeff ? line.slice(1) : line);
      if (!parsed.ok) {
        invalid++;
        if (errors.length < MAX_REPORTED) errors.push({ line: n, reason: parsed.reason });
        continue;
      }
      if (invalid > 0) continue; // nothing will be committed; keep checking the rest
      const r = parsed.record;
      await batch.put(forms ? { ...r, prepared: forms.make(r.operation, r.payload) } : r);
      imported++;
      byOperation[parsed.record.operation] = (byOperation[parsed.record.operation] ?? 0) + 1;
    }
  } catch (e) {
    await batch.rollback();
    throw e;
  }
  if (invalid > 0) {
    await batch.rollback();
    return { lines: n, imported: 0, byOperation: {}, errors, invalid, committed: false };
  }
  await batch.commit(current ? forms.version : undefined);
  // Records whose answers a trigger dropped (see sqlite.ts) or that had none get them here; all of
  // them, if the store's were made under another version.
  if (forms) await updatePrepared(store, forms);
  return { lines: n, imported, byOperation, errors, invalid, committed: true };
}

export async function importFile(store: VehicleStore, file: string, forms?: PreparedForms): Promise<ImportReport> {
  return importStream(store, fs.createReadStream(file, { encoding: 'utf8' }), forms);
}
