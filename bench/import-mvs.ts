// npm run bench:import-mvs: the cost of `import --format ua-mvs` (Ukraine's register, docs/data.md)
// beside the NDJSON import, and how long a daily refresh of the register takes.
//
//   npm run bench:import-mvs                 200,000 generated rows of the register (the 2021-2025
//                                            layout, quoted, DD.MM.YY, 10 % of them a plate's second
//                                            operation, 1 % without a plate) in a ZIP made by
//                                            Python's zipfile; the ua-mvs import of the ZIP and the
//                                            NDJSON import of the records it made (its export), in
//                                            three interleaved rounds: rows/s, records/s, the ratio
//   npm run bench:import-mvs -- --short      20,000 rows, one round, printed only
//   npm run bench:import-mvs -- --refresh    1,000,000 and 2,000,000 rows: the first load into an
//                                            empty store, then the daily refresh of the same files
//                                            into it (import --dry-run, then import --replace),
//                                            wall time and peak RSS of each; writes bench/IMPORT-MVS.md
//   BENCH_MVS_ROWS=500000                    another size for the ratio
//
// Each measured step runs in a child process of its own (the compiled dist/), so its peak RSS is its
// own. Nothing about speed is asserted: the machine is shared, so the ratio is taken in the same run.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { child, DIST, EXPORT, freshDb, logger, rng, ROOT, WORK, type ChildResult } from './import-harness';

const SHORT = process.argv.includes('--short');
const REFRESH = process.argv.includes('--refresh');
const ROWS = SHORT ? 20_000 : Number(process.env.BENCH_MVS_ROWS ?? 200_000);
const ROUNDS = SHORT ? 1 : 3;
const WORKERS = Math.max(1, Math.min(os.availableParallelism() - 1, 4));

const log = logger('bench:import-mvs');

// ---------------------------------------------------------------- data

const HEADER =
  '"PERSON";"REG_ADDR_KOATUU";"OPER_CODE";"OPER_NAME";"D_REG";"DEP_CODE";"DEP";"BRAND";"MODEL";"VIN";"MAKE_YEAR";"COLOR";"KIND";"BODY";"PURPOSE";"FUEL";"CAPACITY";"OWN_WEIGHT";"TOTAL_WEIGHT";"N_REG_NEW"';
const OPERATIONS: [number, string][] = [
  [100, 'ПЕРВИННА РЕЄСТРАЦIЯ Б/В ТЗ ПРИДБАНОГО В ТОРГОВЕЛЬНІЙ ОРГАНІЗАЦІЇ, ЯКИЙ ВВЕЗЕНО З-ЗА КОРДОНУ'],
  [105, 'ПЕРВИННА РЕЄСТРАЦІЯ НОВОГО ТЗ ПРИДБАНОГО В ТОРГОВЕЛЬНІЙ ОРГАНІЗАЦІЇ, ЯКИЙ ВВЕЗЕНО З-ЗА КОРДОНУ'],
  [308, 'ПЕРЕРЕЄСТРАЦІЯ НА НОВОГО ВЛАСНИКА'],
  [315, 'ПЕРЕРЕЄСТРАЦІЯ ТЗ НА НОВ. ВЛАСН. ПО ДОГОВОРУ УКЛАДЕНОМУ В ТСЦ'],
  [410, 'ЗАМІНА НОМЕРНОГО ЗНАКУ'],
  [530, 'ЗНЯТТЯ З ОБЛІКУ'],
];
const CARS: [string, string, number][] = [
  ['VOLKSWAGEN', 'PASSAT', 1968],
  ['TOYOTA', 'CAMRY', 2487],
  ['SKODA', 'OCTAVIA', 1598],
  ['RENAULT', 'MEGANE', 1461],
  ['BMW', 'X5', 2993],
  ['TESLA', 'MODEL 3', 0],
  ['ВАЗ', '2107', 1451],
  ['DAEWOO', 'LANOS', 1498],
];
const COLOURS = ['ЧОРНИЙ', 'БІЛИЙ', 'СІРИЙ', 'СИНІЙ', 'ЧЕРВОНИЙ', 'ЗЕЛЕНИЙ'];
const BODIES = ['СЕДАН', 'УНІВЕРСАЛ', 'ХЕТЧБЕК', 'УНІВЕРСАЛ-B'];
const FUELS = ['БЕНЗИН', 'ДИЗЕЛЬНЕ ПАЛИВО', 'ЕЛЕКТРО', 'БЕНЗИН АБО ГАЗ'];
const L = 'АВЕІКМНОРСТХ';

/** Plate p, written as the register writes it (Cyrillic letters). */
function plate(p: number): string {
  const letters = (n: number) => L[n % 12] + L[Math.floor(n / 12) % 12];
  return `${letters(p)}${String(p % 10000).padStart(4, '0')}${letters(Math.floor(p / 10000))}`;
}

function row(i: number, plates: number): string {
  const r = rng(i * 2654435761 + 7);
  // 1 % without a plate; 10 % a second operation of an earlier plate; the rest a plate of their own.
  const u = r();
  const p = u < 0.1 ? Math.floor(r() * plates) : i;
  const [make, model, cc] = CARS[Math.floor(r() * CARS.length)];
  const [code, name] = OPERATIONS[Math.floor(r() * OPERATIONS.length)];
  const day = `${String(1 + Math.floor(r() * 28)).padStart(2, '0')}.${String(1 + Math.floor(r() * 12)).padStart(2, '0')}.25`;
  const cells = [
    r() < 0.9 ? 'P' : 'J',
    String(1_000_000_000 + Math.floor(r() * 8_000_000_000)),
    String(code),
    name,
    day,
    String(10_000 + Math.floor(r() * 300)),
    `ТСЦ ${8000 + Math.floor(r() * 100)}`,
    make,
    model,
    `WVWZZZ3CZ${String(i).padStart(8, '0')}`,
    String(2000 + Math.floor(r() * 25)),
    COLOURS[Math.floor(r() * COLOURS.length)],
    'ЛЕГКОВИЙ',
    BODIES[Math.floor(r() * BODIES.length)],
    'ЗАГАЛЬНИЙ',
    cc === 0 ? 'ЕЛЕКТРО' : FUELS[Math.floor(r() * FUELS.length)],
    cc === 0 ? '' : String(cc),
    String(1000 + Math.floor(r() * 1000)),
    String(1500 + Math.floor(r() * 1500)),
    u > 0.99 ? '' : plate(p),
  ];
  return cells.map((c) => `"${c}"`).join(';');
}

/** The rows as a CSV in a ZIP (deflated, by Python's zipfile, as the portal's are); cached by size. */
function generate(rows: number): string {
  const zip = path.join(WORK, `mvs-${rows}.zip`);
  if (fs.existsSync(zip)) return zip;
  const csv = path.join(WORK, `mvs-${rows}.csv`);
  const fd = fs.openSync(csv, 'w');
  let buf = HEADER + '\r\n';
  for (let i = 0; i < rows; i++) {
    buf += row(i, Math.max(1, i)) + '\r\n';
    if (buf.length > 1 << 20) {
      fs.writeSync(fd, buf);
      buf = '';
    }
  }
  fs.writeSync(fd, buf);
  fs.closeSync(fd);
  const py = spawnSync(
    'python3',
    [
      '-c',
      `import sys, zipfile
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z: z.write(sys.argv[2], 'reestrtz2025.csv')`,
      zip,
      csv,
    ],
    { encoding: 'utf8' },
  );
  if (py.status !== 0) throw new Error(py.stderr);
  log(
    `generated ${rows} rows: ${(fs.statSync(csv).size / 1e6).toFixed(0)} MB of CSV, ${(fs.statSync(zip).size / 1e6).toFixed(0)} MB zipped`,
  );
  fs.rmSync(csv);
  return zip;
}

// ---------------------------------------------------------------- children

// One import as `reglookup import` runs it (no progress bar); the time runs to the store's close.
// args: kind (mvs|ndjson), file, db, workers, options as JSON.
const IMPORT = `
const { SqliteStore } = require(${JSON.stringify(path.join(DIST, 'store', 'sqlite'))});
const { importFile, importFiles } = require(${JSON.stringify(path.join(DIST, 'data', 'import'))});
(async () => {
  const [kind, file, db, workers, opts] = process.argv.slice(1);
  const t = performance.now();
  const store = new SqliteStore(db);
  const options = { workers: Number(workers), ...JSON.parse(opts) };
  const report = kind === 'mvs' ? await importFiles(store, [file], options) : await importFile(store, file, options);
  await store.close();
  const cpu = process.cpuUsage();
  console.log(JSON.stringify({ ms: performance.now() - t, cpuMs: (cpu.user + cpu.system) / 1000, lines: report.lines, imported: report.imported, committed: report.committed, dryRun: report.dryRun, errors: report.errors.slice(0, 3), maxRssBytes: process.resourceUsage().maxRSS * 1024 }));
})();
`;

function importInto(kind: 'mvs' | 'ndjson', file: string, db: string, opts: object = {}): ChildResult {
  const r = child(IMPORT, [kind, file, db, String(WORKERS), JSON.stringify(opts)]);
  if (!r.committed && !(opts as { dryRun?: boolean }).dryRun)
    throw new Error(`import did not complete: ${JSON.stringify(r)}`);
  return r;
}

const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(', ');
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const mb = (b: number) => (b / 1024 / 1024).toFixed(0);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// ---------------------------------------------------------------- runs

function ratio(): string {
  fs.mkdirSync(WORK, { recursive: true });
  const zip = generate(ROWS);
  const loadBefore = load();
  const mvs: ChildResult[] = [];
  const ndjson: ChildResult[] = [];
  let records = 0;
  for (let round = 0; round < ROUNDS; round++) {
    log(`round ${round + 1}/${ROUNDS}: ua-mvs import of ${ROWS} rows`);
    const db = freshDb('mvs-ratio.db');
    mvs.push(importInto('mvs', zip, db));
    const nd = path.join(WORK, 'mvs-ratio.ndjson');
    records = child(EXPORT, [db, nd]).records as number;
    log(`round ${round + 1}/${ROUNDS}: NDJSON import of the same ${records} records`);
    ndjson.push(importInto('ndjson', nd, freshDb('mvs-ratio-ndjson.db')));
  }
  const ratios = mvs.map((m, i) => ndjson[i].ms / m.ms);
  const cpuRatios = mvs.map((m, i) => (ndjson[i].cpuMs as number) / (m.cpuMs as number));
  const cpu = os.cpus();
  return [
    `${new Date().toISOString().slice(0, 10)}, ${cpu.length} cores (${cpu[0]?.model.trim() ?? '?'}), Node ${process.version}; load average ${loadBefore} before, ${load()} after.`,
    `Reproduce with \`npm run bench:import-mvs\`. ${fmt(ROWS)} generated rows of the register (${fmt(records)} plates), ${ROUNDS} interleaved rounds, ${WORKERS} worker thread(s).`,
    '',
    '| measure | value | target |',
    '|---|---|---|',
    `| ua-mvs import of the ZIP: rows/s, records/s (median) | ${fmt(median(mvs.map((m) => (ROWS / m.ms) * 1000)))}, ${fmt(median(mvs.map((m) => (records / m.ms) * 1000)))} (${mvs.map((m) => (m.ms / 1000).toFixed(1)).join(', ')} s) | |`,
    `| NDJSON import of the same records: records/s (median) | ${fmt(median(ndjson.map((m) => (records / m.ms) * 1000)))} (${ndjson.map((m) => (m.ms / 1000).toFixed(1)).join(', ')} s) | |`,
    `| ua-mvs records/s as a share of NDJSON records/s, per round (median) | ${ratios.map((r) => `${(r * 100).toFixed(0)} %`).join(', ')} (${(median(ratios) * 100).toFixed(0)} %) | >= 80 % |`,
    `| the same by CPU time (all threads), per round (median): less moved by other load on the machine | ${cpuRatios.map((r) => `${(r * 100).toFixed(0)} %`).join(', ')} (${(median(cpuRatios) * 100).toFixed(0)} %) | |`,
    `| peak RSS: ua-mvs / NDJSON | ${mb(Math.max(...mvs.map((m) => m.maxRssBytes)))} MB / ${mb(Math.max(...ndjson.map((m) => m.maxRssBytes)))} MB | |`,
  ].join('\n');
}

function refresh(): string {
  fs.mkdirSync(WORK, { recursive: true });
  const loadBefore = load();
  const rows: string[] = [];
  for (const n of [1_000_000, 2_000_000]) {
    const zip = generate(n);
    const db = freshDb(`mvs-refresh-${n}.db`);
    log(`${n} rows: first load into an empty store`);
    const first = importInto('mvs', zip, db);
    log(`${n} rows: the daily refresh of the same files (dry run, then --replace)`);
    const dry = importInto('mvs', zip, db, { replace: 'named', minKeep: 90, dryRun: true });
    const again = importInto('mvs', zip, db, { replace: 'named', minKeep: 90 });
    const bytes = [db, `${db}-wal`].reduce((s, f) => s + (fs.existsSync(f) ? fs.statSync(f).size : 0), 0);
    rows.push(
      `| ${fmt(n)} (${fmt(first.imported as number)} records) | ${(first.ms / 1000).toFixed(0)} s, ${mb(first.maxRssBytes)} MB | ${(dry.ms / 1000).toFixed(0)} s, ${mb(dry.maxRssBytes)} MB | ${(again.ms / 1000).toFixed(0)} s, ${mb(again.maxRssBytes)} MB | ${((dry.ms + again.ms) / 1000).toFixed(0)} s | ${mb(bytes)} MB |`,
    );
    for (const f of [db, `${db}-wal`, `${db}-shm`]) fs.rmSync(f, { force: true });
  }
  const cpu = os.cpus();
  return [
    `${new Date().toISOString().slice(0, 10)}, ${cpu.length} cores (${cpu[0]?.model.trim() ?? '?'}), Node ${process.version}; load average ${loadBefore} before, ${load()} after.`,
    `Reproduce with \`npm run bench:import-mvs -- --refresh\`. Generated rows of the register in one ZIP each, the SQLite store, ${WORKERS} worker thread(s); time to the store closed, peak RSS of the process.`,
    '',
    '| rows | first load (import) | refresh: import --dry-run | refresh: import --replace | refresh in all | store |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

const table = REFRESH ? refresh() : ratio();
process.stdout.write(table + '\n');
if (!SHORT && (REFRESH || ROWS === 200_000)) {
  const md = path.join(ROOT, 'bench', 'IMPORT-MVS.md');
  const old = fs.existsSync(md) ? fs.readFileSync(md, 'utf8') : '';
  const section = REFRESH ? '## Daily refresh' : '## ua-mvs against NDJSON';
  const parts = old.split(/\n(?=## )/).filter((p) => p.startsWith('## ') && !p.startsWith(section));
  fs.writeFileSync(
    md,
    [
      "# Import benchmark: Ukraine's register (--format ua-mvs)",
      '',
      ...parts.map((p) => p.trimEnd() + '\n'),
      `${section}\n\n${table}\n`,
    ].join('\n'),
  );
  log('wrote bench/IMPORT-MVS.md');
}
