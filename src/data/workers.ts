// Worker threads for an import: the main thread reads the file and writes the store, while up to
// `count` threads parse, check and prepare answers (most of an import's CPU time). Runs of lines go
// to the threads in turn and come back in the order sent, so the store sees the file's order.
// Without threads (count 0, or running from TypeScript sources, as the tests do) the same work
// runs on the main thread.

import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { PreparedForms } from '../store/store';
import { parseChunk, type LineOutcome } from './parse';

export interface ChunkRunner {
  run(lines: string[]): Promise<LineOutcome[]>;
  close(): Promise<void>;
}

const WORKER_FILE = path.join(__dirname, 'import-worker.js');

export function chunkRunner(count: number, forms?: PreparedForms): ChunkRunner {
  const usable = count > 0 && fs.existsSync(WORKER_FILE) && (forms === undefined || forms.source !== undefined);
  if (!usable) return { run: async (lines) => parseChunk(lines, forms?.make), close: async () => {} };
  const workers = Array.from({ length: count }, () => {
    // A small young generation: a thread's live data is one run of lines, and each thread's heap
    // counts in the import's RSS.
    const w = new Worker(WORKER_FILE, { workerData: { source: forms?.source ?? null, version: forms?.version ?? null }, resourceLimits: { maxYoungGenerationSizeMb: 8 } });
    const waiting: { resolve: (r: LineOutcome[]) => void; reject: (e: Error) => void }[] = [];
    w.on('message', (r: LineOutcome[]) => waiting.shift()?.resolve(r));
    w.on('error', (e) => {
      for (const p of waiting.splice(0)) p.reject(e);
    });
    return { w, waiting };
  });
  let next = 0;
  return {
    run(lines) {
      const t = workers[next];
      next = (next + 1) % workers.length;
      return new Promise((resolve, reject) => {
        t.waiting.push({ resolve, reject });
        t.w.postMessage(lines);
      });
    },
    async close() {
      await Promise.all(workers.map((t) => t.w.terminate()));
    },
  };
}
