// NDJSON import, a use-case over the store: every line is checked (strict keys); records are
// written into one store batch as they are read (so memory stays flat), and the batch commits only
// if no line was invalid. A replacing import (--replace, --replace-all) makes the store hold
// exactly the file's records for the operations it replaces; readers see the old data set until
// the commit and the new one after it.

import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { findOperation } from '../contract/operations';
import { normalizeRegistration, normalizeState } from '../service/normalize';
import { motProblem, unknownKeyProblem, vehicleProblem } from '../service/records';
import { updatePrepared, type PreparedForms, type RecordKey, type Replace, type StoredRecord, type VehicleStore } from '../store/store';
import { KeySet } from './keyset';

const MAX_LINE_CHARS = 1024 * 1024;
/** How many bad lines are reported before the rest are only counted. */
const MAX_REPORTED = 50;

const RECORD_KEYS: readonly string[] = ['operation', 'registration', 'state', 'vehicle', 'mot', 'delete'];
const DELETE_KEYS: readonly string[] = ['operation', 'registration', 'state', 'delete'];

export interface LineError {
  readonly line: number;
  readonly reason: string;
}

export interface ImportReport {
  readonly lines: number;
  /** Records written (put), repeats included. */
  readonly imported: number;
  /** Deletion lines applied (a key that was not there counts too). */
  readonly deleted: number;
  /** Lines whose key an earlier line of the same file already had: the later line won. */
  readonly repeated: number;
  readonly byOperation: Readonly<Record<string, number>>;
  readonly errors: readonly LineError[];
  /** Invalid lines, including those past the reporting cap. */
  readonly invalid: number;
  readonly committed: boolean;
  /** What the import replaced: the operations given, or 'all'; null for an ordinary import. */
  readonly replaced: Replace | null;
  /** Records of the bundled sample removed because this was the first import of real data (0 if none). */
  readonly sampleRemoved: number;
}

export interface ImportOptions {
  /** Each record's answers are made as it is written (transport/prepared.ts). */
  readonly forms?: PreparedForms;
  /** 'all': every operation; 'named': the operations the file has lines for. */
  readonly replace?: 'all' | 'named';
  /** The bundled sample is being loaded (the store will say it holds only the sample). */
  readonly sample?: boolean;
  /** Called as the input is read, with the bytes read so far. */
  readonly onBytes?: (bytes: number) => void;
}

type Parsed = { ok: true; record: StoredRecord; delete: false } | { ok: true; record: RecordKey; delete: true } | { ok: false; reason: string };

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
  return { ok: true, delete: false, record: { operation: op.name, registration: reg.value, state, payload } };
}

/**
 * The lines of a byte stream, decoded as UTF-8 (a BOM at the start dropped), with the bytes read
 * so far. Splitting large chunks by hand is several times cheaper than readline's per-line events.
 */
export async function* readLines(input: Readable, onBytes?: (bytes: number) => void): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  let bytes = 0;
  let first = true;
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    let text: string;
    if (typeof chunk === 'string') {
      text = chunk;
      bytes += Buffer.byteLength(chunk);
    } else {
      text = decoder.write(chunk);
      bytes += chunk.length;
    }
    if (first && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
    }
    onBytes?.(bytes);
    let from = 0;
    let nl = text.indexOf('\n');
    if (nl === -1) {
      rest += text;
      continue;
    }
    yield stripCr(rest + text.slice(0, nl));
    rest = '';
    from = nl + 1;
    while ((nl = text.indexOf('\n', from)) !== -1) {
      yield stripCr(text.slice(from, nl));
      from = nl + 1;
    }
    rest = text.slice(from);
  }
  rest += decoder.end();
  if (rest !== '') yield stripCr(rest);
}

function stripCr(line: string): string {
  return line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line;
}

/**
 * Imports a stream of NDJSON; all or nothing. With forms, each record's answers are made as it is
 * written; if the store held records prepared under another version, all are made anew.
 */
export async function importStream(store: VehicleStore, input: Readable, options: ImportOptions = {}): Promise<ImportReport> {
  const forms = options.forms;
  let replace: Replace | null = options.replace === 'all' ? 'all' : null;
  // --replace: each operation is replaced from its first line on (the file is read once).
  const named: string[] | null = options.replace === 'named' ? [] : null;
  // The first import of real data into a store holding only the bundled sample takes its place.
  let sampleRemoved = 0;
  if (!options.sample && (await store.holdsOnlySample())) {
    sampleRemoved = await store.count();
    replace = 'all';
  }
  const current = forms !== undefined && (replace === 'all' || (await store.isEmpty()) || (await store.preparedVersion()) === forms.version);
  const batch = await store.beginImport({ replace: replace ?? undefined, sample: options.sample });
  const errors: LineError[] = [];
  const byOperation: Record<string, number> = {};
  const seen = new KeySet();
  let n = 0;
  let imported = 0;
  let deleted = 0;
  let repeated = 0;
  let invalid = 0;
  try {
    for await (const line of readLines(input, options.onBytes)) {
      n++;
      if (line.trim() === '') continue;
      const parsed = parseLine(line);
      if (!parsed.ok) {
        invalid++;
        if (errors.length < MAX_REPORTED) errors.push({ line: n, reason: parsed.reason });
        continue;
      }
      if (invalid > 0) continue; // nothing will be committed; keep checking the rest
      const r = parsed.record;
      if (named && replace !== 'all' && !named.includes(r.operation)) {
        await batch.replaceOperation(r.operation);
        named.push(r.operation);
      }
      if (seen.addSeen(`${r.operation}\u0001${r.registration}\u0001${r.state}`)) repeated++;
      if (parsed.delete) {
        await batch.delete(r);
        deleted++;
        continue;
      }
      const rec = parsed.record;
      await batch.put(forms ? { operation: rec.operation, registration: rec.registration, state: rec.state, payload: rec.payload, prepared: forms.make(rec.operation, rec.payload) } : rec);
      imported++;
      byOperation[rec.operation] = (byOperation[rec.operation] ?? 0) + 1;
    }
  } catch (e) {
    await batch.rollback();
    throw e;
  }
  if (invalid > 0) {
    await batch.rollback();
    return { lines: n, imported: 0, deleted: 0, repeated: 0, byOperation: {}, errors, invalid, committed: false, replaced: null, sampleRemoved: 0 };
  }
  await batch.commit(current ? { preparedVersion: forms.version } : undefined);
  if (named && replace !== 'all') replace = named;
  // Records whose answers a trigger dropped (see store/sqlite.ts) or that had none get them here;
  // all of them, if the store's were made under another version.
  if (forms) await updatePrepared(store, forms);
  return { lines: n, imported, deleted, repeated, byOperation, errors, invalid, committed: true, replaced: replace, sampleRemoved };
}

export async function importFile(store: VehicleStore, file: string, options: ImportOptions = {}): Promise<ImportReport> {
  return importStream(store, fs.createReadStream(file, { highWaterMark: 1 << 20 }), options);
}
