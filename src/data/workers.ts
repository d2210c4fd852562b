// Worker threads for an import: the main thread reads the file and writes the store, while up to
// `count` threads parse, check and prepare answers (most of an import's CPU time). Runs of lines go
// to the threads in turn and come back in the order sent, so the store sees the file's order.
// Without threads (count 0) the same work runs on the main thread.

import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { PreparedForms } from '../store/store';
import { parseChunk, type LineOutcome } from './parse';

export interface ChunkRunner {
  run(lines: string[]): Promise<LineOutcome[]>;
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

export function chunkRunner(count: number, forms?: PreparedForms): ChunkRunner {
  const worker = count > 0 && (forms === undefined || forms.source !== undefined) ? WORKER : null;
  if (!worker) return { run: async (lines) => parseChunk(lines, forms?.make), close: async () => {} };
  const workers = Array.from({ length: count }, () => {
    // The young generation: a thread's live data is one run of lines, but it makes ~2.5 MB of
    // short-lived objects a run; at 8 MB it was scavenged every few runs. 32 MB, measured at 100,000
    // records with one thread (load ~9, two alternations): process CPU 6.2 / 6.1 s at 8 MB, 5.9 /
    // 5.6 s at 16, 5.7 / 4.8 s at 32. Each thread's heap counts in the RSS: at 1,000,000 records the
    // import peaked at 273 MB with 32 MB (over the 250 MB target), 243 MB with 16, 237 MB with 8.
    const w = new Worker(worker.file, { execArgv: worker.execArgv, workerData: { source: forms?.source ?? null, version: forms?.version ?? null }, resourceLimits: { maxYoungGenerationSizeMb: 16 } });
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
