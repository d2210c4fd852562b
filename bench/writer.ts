// npm run bench:writer: what the SQLite writer alone costs an import, and what other ways of writing
// the same rows would cost, with no parsing at all (the ceiling an import can reach on this store).
//
//   npm run bench:writer                  1,000,000 rows of ~900 bytes in random key order, each
//                                         variant in a new store file, the variants interleaved for
//                                         BENCH_WRITER_ROUNDS rounds (default 2)
//   BENCH_WRITER_ROWS=200000              another size
//
// Variants, all in one transaction on the store's own schema (migrations/sqlite.ts), WAL,
// synchronous=NORMAL and the import's 32 MB page cache, as `reglookup import` writes:
//   upsert    INSERT ... ON CONFLICT DO UPDATE, one row a statement (what the store does)
//   insert    plain INSERT, one row a statement (no conflict clause)
//   multi32   32 rows a statement (INSERT ... VALUES (...) x 32 ON CONFLICT DO UPDATE)
//   deferred  the key index dropped, rows appended, the unique index built at the end (one sort)
// Reported: wall seconds for the rows, the commit (with its checkpoint) and close; rows/s; CPU
// seconds of the process. It asserts nothing: only comparisons within one run mean much.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SqliteStore } from '../src/store/sqlite';

const ROWS = Number(process.env.BENCH_WRITER_ROWS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_WRITER_ROUNDS ?? 2);
const WORK = path.resolve(__dirname, '.work');
const VARIANTS = ['upsert', 'insert', 'multi32', 'deferred'] as const;
type Variant = (typeof VARIANTS)[number];

const OPS = ['Check', 'Check', 'Check', 'Check', 'Check', 'Check', 'Check', 'UKMOT', 'CheckUSA', 'CheckIreland'];
const PAD = 'x'.repeat(820);

/** Row i: a key in an order unrelated to i (a bijection of the 32-bit integers), ~900 bytes of payload. */
function row(i: number): [string, string, string, string] {
  const op = OPS[i % OPS.length];
  const reg = (Math.imul(i, 2654435761) >>> 0).toString(36).toUpperCase().padStart(7, '0');
  return [
    op,
    reg,
    op === 'CheckUSA' ? 'TX' : '',
    `{"Description":"CAR ${i}","RegistrationYear":${2000 + (i % 25)},"Notes":"${PAD}"}`,
  ];
}

async function freshStore(file: string): Promise<void> {
  for (const s of ['', '-wal', '-shm']) fs.rmSync(file + s, { force: true });
  const store = new SqliteStore(file); // the schema, as the service creates it
  await store.close();
}

async function run(variant: Variant): Promise<{ rows: number; commit: number; close: number; cpu: number }> {
  const file = path.join(WORK, `writer-${variant}.db`);
  await freshStore(file);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('temp_store = MEMORY');
  db.pragma('cache_size = -32768');
  const upsertSql =
    'INSERT INTO records (operation, registration, state, payload) VALUES (?, ?, ?, ?) ON CONFLICT (operation, registration, state) DO UPDATE SET payload = excluded.payload';
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  db.exec('BEGIN IMMEDIATE');
  if (variant === 'deferred') db.exec('DROP INDEX records_key');
  if (variant === 'multi32') {
    const stmt = db.prepare(
      `INSERT INTO records (operation, registration, state, payload) VALUES ${Array(32).fill('(?, ?, ?, ?)').join(', ')} ON CONFLICT (operation, registration, state) DO UPDATE SET payload = excluded.payload`,
    );
    const one = db.prepare(upsertSql);
    const params: string[] = [];
    for (let i = 0; i < ROWS; i++) {
      params.push(...row(i));
      if (params.length === 128) {
        stmt.run(params);
        params.length = 0;
      }
    }
    for (let j = 0; j < params.length; j += 4) one.run(params.slice(j, j + 4));
  } else {
    const stmt = db.prepare(
      variant === 'upsert'
        ? upsertSql
        : 'INSERT INTO records (operation, registration, state, payload) VALUES (?, ?, ?, ?)',
    );
    for (let i = 0; i < ROWS; i++) stmt.run(...row(i));
  }
  if (variant === 'deferred') db.exec('CREATE UNIQUE INDEX records_key ON records (operation, registration, state)');
  const t1 = performance.now();
  db.exec('COMMIT');
  const t2 = performance.now();
  db.close();
  const t3 = performance.now();
  const cpu = process.cpuUsage(cpu0);
  for (const s of ['', '-wal', '-shm']) fs.rmSync(file + s, { force: true });
  return {
    rows: (t1 - t0) / 1000,
    commit: (t2 - t1) / 1000,
    close: (t3 - t2) / 1000,
    cpu: (cpu.user + cpu.system) / 1e6,
  };
}

async function main(): Promise<void> {
  fs.mkdirSync(WORK, { recursive: true });
  console.log(
    `${ROWS.toLocaleString('en')} rows, ${ROUNDS} round(s), ${os.cpus().length} cores, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log('variant   rows s   commit s  close s  rows/s     cpu s');
  for (let r = 0; r < ROUNDS; r++) {
    for (const v of VARIANTS) {
      const m = await run(v);
      const total = m.rows + m.commit + m.close;
      console.log(
        `${v.padEnd(9)} ${m.rows.toFixed(2).padStart(6)}  ${m.commit.toFixed(2).padStart(7)}  ${m.close.toFixed(2).padStart(7)}  ${Math.round(
          ROWS / total,
        )
          .toLocaleString('en')
          .padStart(9)}  ${m.cpu.toFixed(2).padStart(6)}`,
      );
    }
  }
  console.log(
    `load after ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
