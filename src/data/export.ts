// Export: every record as NDJSON in the import format, in key order, streaming (the store pages
// through its records; the output's backpressure is respected), so memory does not grow with the
// store. A record is written exactly as import reads it back: exporting, importing that file into
// an empty store with --replace-all and exporting again gives the same bytes.

import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { findOperation } from '../contract/operations';
import type { StoredRecord, VehicleStore } from '../store/store';

/** One record as an import line (without its line break). */
export function exportLine(r: StoredRecord): string {
  const op = findOperation(r.operation);
  const state = op?.state ? `,"state":${JSON.stringify(r.state)}` : '';
  const body = op?.result === 'UKMOTData' ? 'mot' : 'vehicle';
  // The payload is stored as JSON text already (what JSON.stringify made of the imported object).
  return `{"operation":${JSON.stringify(r.operation)},"registration":${JSON.stringify(r.registration)}${state},"${body}":${r.payload}}`;
}

/** Every record, then (withCache) every cached upstream answer whose key no record holds (not-found answers aside). */
async function* exported(store: VehicleStore, withCache: boolean): AsyncIterable<StoredRecord> {
  yield* store.records();
  if (!withCache) return;
  for await (const c of store.cacheEntries()) {
    if (c.payload === null || (await store.get(c)) !== null) continue;
    yield { operation: c.operation, registration: c.registration, state: c.state, payload: c.payload };
  }
}

/**
 * Writes every record to out; returns how many. onRecord is called every 1,000 records with the
 * count. `withCache`: the answers fetched from upstream providers follow, as record lines (so an
 * import of the file makes them imported records).
 */
export async function exportRecords(
  store: VehicleStore,
  out: Writable,
  onRecord?: (records: number) => void,
  options: { withCache?: boolean } = {},
): Promise<number> {
  let n = 0;
  let buffered = '';
  for await (const r of exported(store, options.withCache === true)) {
    buffered += exportLine(r) + '\n';
    n++;
    if (n % 1000 === 0) {
      if (!out.write(buffered)) await once(out, 'drain');
      buffered = '';
      onRecord?.(n);
    }
  }
  if (buffered !== '' && !out.write(buffered)) await once(out, 'drain');
  onRecord?.(n);
  return n;
}
