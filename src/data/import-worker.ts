// A worker thread of an import: takes runs of the file's bytes and posts back their lines'
// outcomes (chunk.ts), in the order received; the typed arrays are moved, not copied.

import { parentPort } from 'node:worker_threads';
import { packLines, type PackedChunk } from './chunk';
import { packMvsRows, type MvsLayout } from './mvs';
import { packRdwRows } from './rdw';

// A run of NDJSON lines comes as its bytes; a run of RDW CSV rows with the header's columns; a run
// of Ukraine's register with its file's layout.
type Message = Uint8Array | { bytes: Uint8Array; columns: string[] } | { bytes: Uint8Array; mvs: MvsLayout };

function pack(m: Message): PackedChunk {
  if (!(m instanceof Uint8Array) && 'mvs' in m) return packMvsRows(m.bytes, m.mvs);
  if (!(m instanceof Uint8Array) && Array.isArray((m as { columns?: unknown }).columns))
    return packRdwRows(m.bytes, (m as { columns: string[] }).columns);
  return packLines(m as Uint8Array);
}

parentPort?.on('message', (message: Message) => {
  const packed = pack(message);
  const moved = [packed.kinds.buffer, packed.ends.buffer, packed.hashes.buffer] as ArrayBuffer[];
  if (packed.days) moved.push(packed.days.buffer as ArrayBuffer);
  parentPort?.postMessage(packed, moved);
});
