// What the import benches share: where they work, a seeded generator, and how a measured step runs in a
// child process of its own (the compiled dist/), so that its peak RSS is its own.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..');
export const WORK = path.join(ROOT, 'bench', '.work');
export const DIST = path.join(ROOT, 'dist');

/** A line on stderr, prefixed with the bench's name. */
export function logger(name: string): (s: string) => void {
  return (s) => process.stderr.write(`${name}: ${s}\n`);
}

/** A small deterministic PRNG (mulberry32), seeded per record so any record can be made alone. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What a child step prints as its last line: at least its time and its peak RSS. */
export interface ChildResult {
  readonly ms: number;
  readonly maxRssBytes: number;
  readonly [k: string]: unknown;
}

/** Runs `code` in a Node process of its own with `args`; its last line of output, parsed. */
export function child(code: string, args: string[]): ChildResult {
  const r = spawnSync(process.execPath, ['-e', code, ...args], { encoding: 'utf8', cwd: ROOT, maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`bench child failed (${r.status}): ${r.stderr.slice(-2000)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as ChildResult;
}

/** A SQLite store's records written out as NDJSON (reglookup export). args: db, file. */
export const EXPORT = `
const fs = require('fs');
const { SqliteStore } = require(${JSON.stringify(path.join(DIST, 'store', 'sqlite'))});
const { exportRecords } = require(${JSON.stringify(path.join(DIST, 'data', 'export'))});
(async () => {
  const [db, file] = process.argv.slice(1);
  const store = new SqliteStore(db);
  const out = fs.createWriteStream(file);
  const n = await exportRecords(store, out, () => {});
  await new Promise((resolve) => out.end(resolve));
  await store.close();
  console.log(JSON.stringify({ ms: 0, records: n, maxRssBytes: 0 }));
})();
`;

/** A path under bench/.work for a SQLite store, with any earlier store there (and its WAL) removed. */
export function freshDb(name: string): string {
  const db = path.join(WORK, name);
  for (const f of [db, `${db}-wal`, `${db}-shm`]) fs.rmSync(f, { force: true });
  return db;
}
