// A worker thread of an import: takes runs of the file's bytes and posts back their lines'
// outcomes (chunk.ts), in the order received; the typed arrays are moved, not copied.

import { parentPort } from 'node:worker_threads';
import { packLines } from './chunk';

parentPort?.on('message', (bytes: Uint8Array) => {
  const packed = packLines(bytes);
  parentPort?.postMessage(packed, [packed.kinds.buffer as ArrayBuffer, packed.ends.buffer as ArrayBuffer, packed.hashes.buffer as ArrayBuffer]);
});
