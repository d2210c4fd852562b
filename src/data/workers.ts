// Worker threads for an import: the main thread reads the file and writes the store, while up to
// `count` threads decode, parse and check runs of its bytes (most of an import's CPU time besides
// the store's). Runs go to the threads in turn and come back in the order sent, so the store sees
// the file's order. Without threads (count 0) the same work runs on the main thread.

import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { packLines, type PackedChunk } from './chunk';
import { packMvsRows, type MvsLayout } from './mvs';
import { packRdwRows } from './rdw';

export interface ChunkRunner {
  /**
   * The outcomes of a run of complete lines (NDJSON), or of whole CSV rows of RDW's vehicles file
   * when `columns` (its header, as field names) is given, or of Ukraine's register when `mvs` (its
   * file's layout) is; the bytes are moved to the thread (do not reuse them).
   */
  run(bytes: Uint8Array, columns?: readonly string[], mvs?: MvsLayout): Promise<PackedChunk>;
  close(): Promise<void>;
}

// Compiled, the thread runs import-worker.js; from the TypeScript sources (tests, ts-node) it runs
// import-worker.ts through ts-node.
const WORKER_JS = path.join(__dirname, 'import-worker.js');
const WORKER_TS = path.join(__dirname, 'import-worker.ts');
const WORKER: { file: string; execArgv: string[] } | null = fs.existsSync(WORKER_JS)
  ? { file: WORKER_JS, execArgv: [] }
  : fs.existsSync(WORKER_TS)
    ? { file: WORKER_TS, execArgv: ['-r', 'ts-node/register/transpile-only'] }
    : null;

export function chunkRunner(count: number): ChunkRunner {
  if (count <= 0 || !WORKER)
    return {
      run: async (bytes, columns, mvs) =>
        mvs ? packMvsRows(bytes, mvs) : columns ? packRdwRows(bytes, columns) : packLines(bytes),
      close: async () => {},
    };
  const worker = WORKER;
  const workers = Array.from({ length: count }, () => {
    // The young generation: a thread's live data is one run of lines, but it makes several MB of
    // short-lived objects a run (the lines, their parsed objects); 16 MB keeps scavenges rare
    // without the thread's heap weighing much in the import's RSS.
    const w = new Worker(worker.file, { execArgv: worker.execArgv, resourceLimits: { maxYoungGenerationSizeMb: 16 } });
    const waiting: { resolve: (r: PackedChunk) => void; reject: (e: Error) => void }[] = [];
    w.on('message', (r: PackedChunk) => waiting.shift()?.resolve(r));
    w.on('error', (e) => {
      for (const p of waiting.splice(0)) p.reject(e);
    });
    return { w, waiting };
  });
  let next = 0;
  return {
    run(bytes, columns, mvs) {
      const t = workers[next];
      next = (next + 1) % workers.length;
      return new Promise((resolve, reject) => {
        t.waiting.push({ resolve, reject });
        t.w.postMessage(mvs ? { bytes, mvs } : columns ? { bytes, columns } : bytes, [bytes.buffer as ArrayBuffer]);
      });
    },
    async close() {
      await Promise.all(workers.map((t) => t.w.terminate()));
    },
  };
}
