// A worker thread of an import: takes runs of the file's bytes and posts back their lines'
// outcomes (chunk.ts), in the order received; the typed arrays are moved, not copied.

import { parentPort } from 'node:worker_threads';
import { packLines } from './chunk';
import { packRdwRows } from './rdw';

// A run of NDJSON lines comes as its bytes; a run of RDW CSV rows with the header's columns.
type Message = Uint8Array | { bytes: Uint8Array; columns: string[] };

const isRdw = (m: Message): m is { bytes: Uint8Array; columns: string[] } => !(m instanceof Uint8Array) && Array.isArray((m as { columns?: unknown }).columns);

parentPort?.on('message', (message: Message) => {
  const packed = isRdw(message) ? packRdwRows(message.bytes, message.columns) : packLines(message);
  parentPort?.postMessage(packed, [packed.kinds.buffer as ArrayBuffer, packed.ends.buffer as ArrayBuffer, packed.hashes.buffer as ArrayBuffer]);
});
