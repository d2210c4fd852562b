// npm run bench:import: how fast a national register loads, and what it costs to hold and to read.
//
//   npm run bench:import                 1,000,000 generated records: import rate beside a bare
//                                        read-and-JSON.parse pass over the same file in the same run,
//                                        peak RSS, store size, lookup p50/p99 at 10,000 and at
//                                        1,000,000 records; writes bench/IMPORT.md
//   npm run bench:import -- --short      20,000 records, printed only (CI: asserts only that it completed)
//   BENCH_IMPORT_RECORDS=200000          another size (printed only unless it is 1,000,000)
//   npm run bench:import -- --store postgres
//                                        the import into PostgreSQL (COPY into staging, one merge):
//                                        rate beside the bare pass, peak RSS; printed only. The
//                                        database is BENCH_DATABASE_URL (default
//                                        postgres://root@127.0.0.1:5432/test), schema
//                                        reglookup_bench_import, dropped before and after
//
// Each measured step runs in a child process of its own (the compiled dist/), so its peak RSS is
// its own. It asserts nothing about speed: the machine is shared, so the import is given as a
// share of the bare pass measured in the same run (once before the import and once after).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { child, DIST, EXPORT, freshDb, logger, rng, ROOT, WORK, type ChildResult } from './import-harness';

const SHORT = process.argv.includes('--short');
const RECORDS = SHORT ? 20_000 : Number(process.env.BENCH_IMPORT_RECORDS ?? 1_000_000);
const SMALL = SHORT ? 2_000 : 10_000;
const LOOKUPS = SHORT ? 5_000 : 50_000;
const WORKERS = Number(process.env.BENCH_IMPORT_WORKERS ?? Math.max(1, Math.min(os.availableParallelism() - 1, 4)));
const STORE = process.argv.includes('--store') ? process.argv[process.argv.indexOf('--store') + 1] : 'sqlite';
const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const PG_SCHEMA = 'reglookup_bench_import';
const GENERATOR = 1; // bump when the generated records change, so a cached file is made again

const log = logger('bench:import');

// ---------------------------------------------------------------- data

const OTHER_OPS = [
  'CheckMotorBikeUK',
  'CheckCanada',
  'CheckUSA',
  'CheckAustralia',
  'CheckNewZealand',
  'CheckKazakhstan',
  'CheckArgentina',
  'CheckSingapore',
  'CheckPortugal',
  'CheckFinland',
  'CheckUkraine',
  'CheckLebanon',
  'CheckPoland',
  'CheckCyprus',
  'CheckChina',
  'CheckNetherlands',
  'CheckLithuania',
  'CheckIndonesia',
  'CheckSriLanka',
  'CheckSlovenia',
  'CheckSlovakia',
  'CheckMalaysia',
  'CheckColombia',
  'CheckRomania',
  'CheckIreland',
  'CheckIceland',
  'CheckNigeria',
  'CheckTunisia',
  'CheckSouthAfrica',
];
const STATES: Record<string, readonly string[]> = {
  CheckUSA: ['CA', 'TX', 'NY', 'FL'],
  CheckCanada: ['ON', 'QC', 'BC'],
  CheckAustralia: ['NSW', 'VIC', 'QLD'],
};
const MAKES = [
  'FORD',
  'VAUXHALL',
  'VOLKSWAGEN',
  'TOYOTA',
  'BMW',
  'AUDI',
  'NISSAN',
  'PEUGEOT',
  'MERCEDES-BENZ',
  'HONDA',
  'KIA',
  'SKODA',
];
const MODELS = [
  'FOCUS',
  'CORSA',
  'GOLF',
  'YARIS',
  '320D',
  'A3',
  'QASHQAI',
  '208',
  'C220',
  'CIVIC',
  'SPORTAGE',
  'OCTAVIA',
];
const ADVISORIES = [
  'Nearside front tyre worn close to legal limit',
  'Brake pipe slightly corroded',
  'Oil leak, but not excessive',
  'Suspension arm pin or bush has slight play',
  'Exhaust has a minor leak of exhaust gases',
];

/** Record i's key: deterministic, so a lookup can draw any record without reading the file. */
export function keyOf(i: number): { operation: string; registration: string; state: string } {
  const r = rng(i * 2654435761);
  const u = r();
  const operation = u < 0.7 ? 'Check' : u < 0.85 ? 'UKMOT' : OTHER_OPS[Math.floor(r() * OTHER_OPS.length)];
  const states = STATES[operation];
  const state = states ? states[Math.floor(r() * states.length)] : '';
  // Unique per index: the index itself, written in letters and digits like a plate.
  const L = 'ABCDEFGHJKLMNPRSTUVWXYZ';
  let n = i;
  let tail = '';
  for (let k = 0; k < 3; k++) {
    tail += L[n % 23];
    n = Math.floor(n / 23);
  }
  const registration = `${L[n % 23]}${L[Math.floor(n / 23) % 23]}${String(Math.floor(n / 529) % 100).padStart(2, '0')}${tail}`;
  return { operation, registration, state };
}

function vehicle(i: number, r: () => number): Record<string, unknown> {
  const m = Math.floor(r() * MAKES.length);
  const make = MAKES[m];
  const model = MODELS[m];
  const year = 1995 + Math.floor(r() * 30);
  const cc = 900 + Math.floor(r() * 2200);
  const v: Record<string, unknown> = {
    ABICode: String(30000000 + i),
    Description: `${make} ${model} ${cc}cc`,
    RegistrationYear: String(year),
  };
  // Varied fill: each optional field present with its own probability, in one of its allowed forms.
  if (r() < 0.8) v.ManufactureYearFrom = year - 1;
  if (r() < 0.8) v.ManufactureYearTo = year + 5;
  v.CarMake = { CurrentTextValue: make };
  v.CarModel = r() < 0.5 ? { CurrentTextValue: model } : model;
  if (r() < 0.9)
    v.BodyStyle = {
      CurrentValue: null,
      CurrentTextValue: ['Hatchback', 'Saloon', 'Estate', 'SUV', 'Coupe'][Math.floor(r() * 5)],
    };
  v.EngineSize = { CurrentValue: cc, CurrentTextValue: `${cc}cc` };
  if (r() < 0.9) v.NumberOfDoors = { CurrentValue: 5, CurrentTextValue: '5' };
  v.Transmission = { CurrentValue: null, CurrentTextValue: r() < 0.6 ? 'Manual' : 'Automatic' };
  v.FuelType = {
    CurrentValue: null,
    CurrentTextValue: ['Petrol', 'Diesel', 'Electric', 'Hybrid'][Math.floor(r() * 4)],
  };
  if (r() < 0.7) v.MakeDescription = { CurrentValue: null, CurrentTextValue: make };
  if (r() < 0.7) v.ModelDescription = { CurrentValue: null, CurrentTextValue: model };
  if (r() < 0.5) v.Immobiliser = { CurrentTextValue: 'Fitted' };
  if (r() < 0.8) v.NumberOfSeats = { CurrentValue: 5, CurrentTextValue: '5' };
  if (r() < 0.6) v.IndicativeValue = { CurrentTextValue: String(500 + Math.floor(r() * 40000)) };
  if (r() < 0.9) v.DriverSide = { CurrentTextValue: 'RHD' };
  v.Colour = ['Black', 'Silver', 'Blue', 'Red', 'White', 'Grey'][Math.floor(r() * 6)];
  v.VehicleIdentificationNumber = `WF0${String(i).padStart(14, '0')}`;
  if (r() < 0.7)
    v.ImageUrl = `https://img.example.com/vehicle/${make.toLowerCase()}/${model.toLowerCase()}/${year}.jpg`;
  return v;
}

function mot(i: number, r: () => number): Record<string, unknown> {
  const m = Math.floor(r() * MAKES.length);
  const tests = Array.from({ length: 1 + Math.floor(r() * 5) }, (_, k) => {
    const fail = r() < 0.2;
    const t: Record<string, unknown> = {
      TestDate: `${2025 - k}-0${1 + Math.floor(r() * 9)}-1${Math.floor(r() * 10)}`,
      ExpiryDate: `${2026 - k}-0${1 + Math.floor(r() * 9)}-1${Math.floor(r() * 10)}`,
      Result: fail ? 'Fail' : 'Pass',
      Odometer: String(90000 - k * 9000 - Math.floor(r() * 5000)),
      TestNumber: String(100000000000 + i * 7 + k),
      FailureReasons: fail ? [ADVISORIES[Math.floor(r() * ADVISORIES.length)]] : [],
      Advisories: r() < 0.5 ? [ADVISORIES[Math.floor(r() * ADVISORIES.length)]] : [],
    };
    return t;
  });
  return {
    make: MAKES[m],
    model: MODELS[m],
    taxDate: '2026-09-01',
    tests,
    extendedInformation: [
      ['Colour', 'Blue'],
      ['Fuel type', 'Petrol'],
    ],
  };
}

export function recordLine(i: number): string {
  const k = keyOf(i);
  const r = rng(i * 40503 + 17);
  const base: Record<string, unknown> = { operation: k.operation, registration: k.registration };
  if (k.state) base.state = k.state;
  if (k.operation === 'UKMOT') base.mot = mot(i, r);
  else base.vehicle = vehicle(i, r);
  return JSON.stringify(base);
}

function generate(file: string, n: number): void {
  const marker = `${file}.done-${GENERATOR}`;
  if (fs.existsSync(file) && fs.existsSync(marker)) return;
  const t = Date.now();
  const fd = fs.openSync(file, 'w');
  let buf = '';
  for (let i = 0; i < n; i++) {
    buf += recordLine(i) + '\n';
    if (buf.length > 1 << 20) {
      fs.writeSync(fd, buf);
      buf = '';
    }
  }
  fs.writeSync(fd, buf);
  fs.closeSync(fd);
  fs.writeFileSync(marker, '');
  log(
    `generated ${n} records (${(fs.statSync(file).size / 1e6).toFixed(0)} MB) in ${((Date.now() - t) / 1000).toFixed(1)} s`,
  );
}

// RDW's bulk CSVs (import --format rdw): the registered-vehicles file under the portal's column
// titles (the first 40 of the real data set's, in its order) and the fuel file under the API's
// field names, one fuel row a vehicle and a second for one in ten (hybrids), some fields quoted.
const RDW_TITLES = [
  'Kenteken',
  'Voertuigsoort',
  'Merk',
  'Handelsbenaming',
  'Vervaldatum APK',
  'Datum tenaamstelling',
  'Bruto BPM',
  'Inrichting',
  'Aantal zitplaatsen',
  'Eerste kleur',
  'Tweede kleur',
  'Aantal cilinders',
  'Cilinderinhoud',
  'Massa ledig voertuig',
  'Toegestane maximum massa voertuig',
  'Massa rijklaar',
  'Maximum massa trekken ongeremd',
  'Maximum trekken massa geremd',
  'Datum eerste toelating',
  'Datum eerste tenaamstelling in Nederland',
  'Wacht op keuren',
  'Catalogusprijs',
  'WAM verzekerd',
  'Maximale constructiesnelheid',
  'Laadvermogen',
  'Oplegger geremd',
  'Aanhangwagen autonoom geremd',
  'Aanhangwagen middenas geremd',
  'Aantal staanplaatsen',
  'Aantal deuren',
  'Aantal wielen',
  'Afstand hart koppeling tot achterzijde voertuig',
  'Afstand voorzijde voertuig tot hart koppeling',
  'Afwijkende maximum snelheid',
  'Lengte',
  'Breedte',
  'Europese voertuigcategorie',
  'Europese voertuigcategorie toevoeging',
  'Europese uitvoeringcategorie toevoeging',
  'Plaats chassisnummer',
];
const RDW_COLOURS = ['GRIJS', 'ZWART', 'WIT', 'BLAUW', 'ROOD', 'GROEN'];
const RDW_BODIES = ['hatchback', 'sedan', 'stationwagen', 'MPV', 'cabriolet'];

function rdwRow(i: number): { row: string; fuel: string } {
  const r = rng(i * 40503 + 29);
  const plate = keyOf(i).registration;
  const m = Math.floor(r() * MAKES.length);
  const date = `${1995 + Math.floor(r() * 30)}${String(1 + Math.floor(r() * 12)).padStart(2, '0')}${String(1 + Math.floor(r() * 28)).padStart(2, '0')}`;
  const cc = String(900 + Math.floor(r() * 2200));
  const model = r() < 0.1 ? `"${MODELS[m]} ""SPORT"", 5D"` : MODELS[m];
  const cells = [
    plate,
    'Personenauto',
    MAKES[m],
    model,
    '20270314',
    '20210601',
    String(Math.floor(r() * 9000)),
    RDW_BODIES[Math.floor(r() * 5)],
    '5',
    RDW_COLOURS[Math.floor(r() * 6)],
  ];
  cells.push(
    'Niet geregistreerd',
    '4',
    cc,
    String(900 + Math.floor(r() * 900)),
    '1800',
    '1350',
    '600',
    '1300',
    date,
    date,
  );
  cells.push(
    'Geen verstrekking in Open Data',
    String(15000 + Math.floor(r() * 60000)),
    'Ja',
    '',
    '',
    '',
    '',
    '',
    '',
    '5',
  );
  cells.push('4', '0', '0', '', '420', '180', 'M1', '', '', 'r. in motorruimte');
  const fuel =
    `${plate},1,${r() < 0.5 ? 'Benzine' : 'Diesel'},${90 + Math.floor(r() * 100)},,,5.1,66,6,EURO 6 AG\n` +
    (i % 10 === 0 ? `${plate},2,Elektriciteit,,,,,,,\n` : '');
  return { row: cells.join(',') + '\r\n', fuel };
}

export function generateRdw(file: string, fuelFile: string, n: number): void {
  const marker = `${file}.done-${GENERATOR}`;
  if (fs.existsSync(file) && fs.existsSync(fuelFile) && fs.existsSync(marker)) return;
  const fd = fs.openSync(file, 'w');
  const ff = fs.openSync(fuelFile, 'w');
  let buf = '\ufeff' + RDW_TITLES.join(',') + '\r\n';
  let fbuf =
    'kenteken,brandstof_volgnummer,brandstof_omschrijving,co2_uitstoot_gecombineerd,brandstofverbruik_buiten,brandstofverbruik_stad,brandstofverbruik_gecombineerd,geluidsniveau_stationair,emissiecode_omschrijving,uitlaatemissieniveau\n';
  for (let i = 0; i < n; i++) {
    const { row, fuel } = rdwRow(i);
    buf += row;
    fbuf += fuel;
    if (buf.length > 1 << 20) {
      fs.writeSync(fd, buf);
      fs.writeSync(ff, fbuf);
      buf = fbuf = '';
    }
  }
  fs.writeSync(fd, buf);
  fs.writeSync(ff, fbuf);
  fs.closeSync(fd);
  fs.closeSync(ff);
  fs.writeFileSync(marker, '');
  log(
    `generated ${n} RDW rows (${(fs.statSync(file).size / 1e6).toFixed(0)} MB, fuel ${(fs.statSync(fuelFile).size / 1e6).toFixed(0)} MB)`,
  );
}

// ---------------------------------------------------------------- children

// A bare Node pass: read the file in 1 MB chunks, split lines, JSON.parse each. Nothing else.
const BARE = `
const fs = require('fs'); const { StringDecoder } = require('string_decoder');
(async () => {
  const t = performance.now(); const dec = new StringDecoder('utf8'); let rest = ''; let n = 0;
  for await (const chunk of fs.createReadStream(process.argv[1], { highWaterMark: 1 << 20 })) {
    const text = rest + dec.write(chunk); let from = 0, nl;
    while ((nl = text.indexOf('\\n', from)) !== -1) { if (nl > from) { JSON.parse(text.slice(from, nl)); n++; } from = nl + 1; }
    rest = text.slice(from);
  }
  if (rest.trim()) { JSON.parse(rest); n++; }
  console.log(JSON.stringify({ ms: performance.now() - t, records: n, maxRssBytes: process.resourceUsage().maxRSS * 1024 }));
})();
`;

// The import as \`reglookup import\` runs it (without the progress bar), into a fresh store; the time
// runs to the store's close (its log checkpointed into the file), i.e. what a user waits for.
const IMPORT = `
const { SqliteStore } = require(${JSON.stringify(path.join(DIST, 'store', 'sqlite'))});
const { importFile } = require(${JSON.stringify(path.join(DIST, 'data', 'import'))});
(async () => {
  const [file, db] = process.argv.slice(1);
  const t = performance.now();
  const store = new SqliteStore(db);
  const report = await importFile(store, file, { workers: Number(process.argv[3]) });
  const committedMs = performance.now() - t;
  await store.close();
  const cpu = process.cpuUsage();
  console.log(JSON.stringify({ ms: performance.now() - t, committedMs, cpuMs: (cpu.user + cpu.system) / 1000, imported: report.imported, committed: report.committed, errors: report.errors.slice(0, 3), maxRssBytes: process.resourceUsage().maxRSS * 1024 }));
})();
`;

// The RDW CSV import as \`reglookup import --format rdw --fuel FUEL FILE\` runs it: the fuel file read
// first, then the vehicles; the clock covers both.
const IMPORT_RDW = `
const { SqliteStore } = require(${JSON.stringify(path.join(DIST, 'store', 'sqlite'))});
const { importFile, readFuelFile } = require(${JSON.stringify(path.join(DIST, 'data', 'import'))});
(async () => {
  const [file, fuelFile, db, workers] = process.argv.slice(1);
  const t = performance.now();
  const fuel = await readFuelFile(fuelFile);
  const fuelMs = performance.now() - t;
  const store = new SqliteStore(db);
  const report = await importFile(store, file, { workers: Number(workers), format: 'rdw', fuel });
  const committedMs = performance.now() - t;
  await store.close();
  const cpu = process.cpuUsage();
  console.log(JSON.stringify({ ms: performance.now() - t, fuelMs, committedMs, cpuMs: (cpu.user + cpu.system) / 1000, imported: report.imported, committed: report.committed, errors: report.errors.slice(0, 3), maxRssBytes: process.resourceUsage().maxRSS * 1024 }));
})();
`;

// Lookups as the service makes them: the store read and the answer's bytes (transport/answers.ts),
// over random keys, one event-loop turn per 50 lookups (the service shares a read per turn).
const LOOKUP = `
const { SqliteStore } = require(${JSON.stringify(path.join(DIST, 'store', 'sqlite'))});
const { resultInner } = require(${JSON.stringify(path.join(DIST, 'transport', 'answers'))});
const { findOperation } = require(${JSON.stringify(path.join(DIST, 'contract', 'operations'))});
const keys = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'));
(async () => {
  const store = new SqliteStore(process.argv[1]);
  const times = [];
  const t = performance.now();
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    const s = performance.now();
    const found = await store.get(k);
    if (!found) throw new Error('not found: ' + JSON.stringify(k));
    const bytes = resultInner({ kind: findOperation(k.operation).result, payload: found.payload }, i % 2 ? 'soap' : 'http');
    if (bytes.length === 0) throw new Error('empty answer');
    times.push(performance.now() - s);
    if (i % 50 === 49) await new Promise((r) => setImmediate(r));
  }
  await store.close();
  const warm = times.slice(Math.floor(times.length / 5)).sort((a, b) => a - b);
  const q = (p) => warm[Math.min(warm.length - 1, Math.floor(p * warm.length))];
  console.log(JSON.stringify({ ms: performance.now() - t, p50us: q(0.5) * 1000, p99us: q(0.99) * 1000, maxRssBytes: process.resourceUsage().maxRSS * 1024 }));
})();
`;

// The same import into PostgreSQL, into a schema dropped first (and after: the bench keeps nothing).
const IMPORT_PG = `
const pg = require('pg');
const { openStore } = require(${JSON.stringify(path.join(DIST, 'store', 'open'))});
const { importFile } = require(${JSON.stringify(path.join(DIST, 'data', 'import'))});
(async () => {
  const [file, base, schema, workers] = process.argv.slice(1);
  const drop = async () => { const c = new pg.Client(base); await c.connect(); await c.query('DROP SCHEMA IF EXISTS ' + schema + ' CASCADE'); await c.end(); };
  await drop();
  const u = new URL(base); u.searchParams.set('schema', schema);
  const store = openStore(u.toString());
  await store.isEmpty(); // migrations, before the clock starts
  const t = performance.now();
  const report = await importFile(store, file, { workers: Number(workers) });
  const committedMs = performance.now() - t;
  const count = await store.count();
  await store.close();
  await drop();
  console.log(JSON.stringify({ ms: committedMs, committedMs, count, imported: report.imported, committed: report.committed, errors: report.errors.slice(0, 3), maxRssBytes: process.resourceUsage().maxRSS * 1024 }));
})();
`;

function mainPostgres(): void {
  fs.mkdirSync(WORK, { recursive: true });
  const file = path.join(WORK, `import-${RECORDS}.ndjson`);
  generate(file, RECORDS);
  const fileBytes = fs.statSync(file).size;
  const load = () =>
    os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(', ');
  const loadBefore = load();
  log(`bare read-and-parse pass over ${RECORDS} records`);
  const bare1 = child(BARE, [file]);
  log(`import of ${RECORDS} records into PostgreSQL (schema ${PG_SCHEMA})`);
  const imp = child(IMPORT_PG, [file, PG_URL, PG_SCHEMA, String(WORKERS)]);
  if (!imp.committed || imp.imported !== RECORDS || imp.count !== RECORDS)
    throw new Error(`import did not complete: ${JSON.stringify(imp)}`);
  log('bare pass again');
  const bare2 = child(BARE, [file]);
  const bareMs = (bare1.ms + bare2.ms) / 2;
  const rate = (RECORDS / imp.ms) * 1000;
  const bareRate = (RECORDS / bareMs) * 1000;
  const mb = (b: number) => (b / 1024 / 1024).toFixed(0);
  const cpu = os.cpus();
  process.stdout.write(
    [
      `${new Date().toISOString().slice(0, 10)}, ${cpu.length} cores (${cpu[0]?.model.trim() ?? '?'}), Node ${process.version}; load average ${loadBefore} before, ${load()} after.`,
      `Reproduce with \`BENCH_IMPORT_RECORDS=${RECORDS} npm run bench:import -- --store postgres\`. ${RECORDS.toLocaleString('en-US')} generated records (${(fileBytes / 1e6).toFixed(0)} MB of NDJSON).`,
      '',
      '| measure | value | target |',
      '|---|---|---|',
      `| import into PostgreSQL, records/s (to the commit) | ${Math.round(rate).toLocaleString('en-US')} (${(imp.ms / 1000).toFixed(1)} s) | >= 50,000 |`,
      `| bare read-and-JSON.parse pass, records/s (mean of one before and one after) | ${Math.round(bareRate).toLocaleString('en-US')} (${(bare1.ms / 1000).toFixed(1)} s, ${(bare2.ms / 1000).toFixed(1)} s) | |`,
      `| import as a share of the bare pass | ${((rate / bareRate) * 100).toFixed(0)} % | |`,
      `| peak RSS of the import | ${mb(imp.maxRssBytes)} MB (bare pass: ${mb(Math.max(bare1.maxRssBytes, bare2.maxRssBytes))} MB) | < 250 MB |`,
      '',
    ].join('\n'),
  );
}

function storeBytes(db: string): number {
  return [db, `${db}-wal`].reduce((sum, f) => sum + (fs.existsSync(f) ? fs.statSync(f).size : 0), 0);
}

function lookups(db: string, n: number, tag: string): ChildResult {
  const r = rng(12345);
  const keys = Array.from({ length: LOOKUPS }, () => keyOf(Math.floor(r() * n)));
  const keysFile = path.join(WORK, `import-keys-${tag}.json`);
  fs.writeFileSync(keysFile, JSON.stringify(keys));
  return child(LOOKUP, [db, keysFile]);
}

// ---------------------------------------------------------------- run

function main(): void {
  fs.mkdirSync(WORK, { recursive: true });
  const file = path.join(WORK, `import-${RECORDS}.ndjson`);
  const small = path.join(WORK, `import-${SMALL}.ndjson`);
  generate(file, RECORDS);
  generate(small, SMALL);
  const fileBytes = fs.statSync(file).size;
  const load = () =>
    os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(', ');
  const loadBefore = load();

  log(`bare read-and-parse pass over ${RECORDS} records`);
  const bare1 = child(BARE, [file]);
  log(`import of ${RECORDS} records into a fresh store`);
  const db = freshDb(`import-${RECORDS}.db`);
  const imp = child(IMPORT, [file, db, String(WORKERS)]);
  if (!imp.committed || imp.imported !== RECORDS) throw new Error(`import did not complete: ${JSON.stringify(imp)}`);
  log('bare pass again');
  const bare2 = child(BARE, [file]);
  const bytes = storeBytes(db);

  const rdwFile = path.join(WORK, `import-${RECORDS}.rdw.csv`);
  const rdwFuel = path.join(WORK, `import-${RECORDS}.rdw-fuel.csv`);
  generateRdw(rdwFile, rdwFuel, RECORDS);
  log(`RDW CSV import (--format rdw --fuel) of ${RECORDS} rows into a fresh store`);
  const rdwDb = freshDb(`import-${RECORDS}-rdw.db`);
  const rdw = child(IMPORT_RDW, [rdwFile, rdwFuel, rdwDb, String(WORKERS)]);
  if (!rdw.committed || rdw.imported !== RECORDS)
    throw new Error(`RDW import did not complete: ${JSON.stringify(rdw)}`);
  const rdwRate = (RECORDS / rdw.ms) * 1000;
  // The same records as NDJSON: what the CSV, its mapping and the fuel join cost beside an NDJSON import of what they
  // make.
  const rdwNdjson = path.join(WORK, `import-${RECORDS}.rdw.ndjson`);
  child(EXPORT, [rdwDb, rdwNdjson]);
  log(`NDJSON import of the same ${RECORDS} RDW records`);
  const sameDb = freshDb(`import-${RECORDS}-rdw-ndjson.db`);
  const same = child(IMPORT, [rdwNdjson, sameDb, String(WORKERS)]);
  if (!same.committed || same.imported !== RECORDS)
    throw new Error(`NDJSON import of the RDW records did not complete: ${JSON.stringify(same)}`);
  const sameRate = (RECORDS / same.ms) * 1000;
  const rdwNdjsonBytes = fs.statSync(rdwNdjson).size;
  fs.rmSync(rdwNdjson, { force: true });

  log(`import of ${SMALL} records, and lookups at both sizes`);
  const smallDb = freshDb(`import-${SMALL}.db`);
  const impSmall = child(IMPORT, [small, smallDb, String(WORKERS)]);
  if (!impSmall.committed) throw new Error(`small import did not complete: ${JSON.stringify(impSmall)}`);
  // Alternated, twice, so that neither size has the machine to itself.
  const smallRuns = [lookups(smallDb, SMALL, 'small')];
  const bigRuns = [lookups(db, RECORDS, 'big')];
  smallRuns.push(lookups(smallDb, SMALL, 'small'));
  bigRuns.push(lookups(db, RECORDS, 'big'));
  const loadAfter = load();

  const bareMs = (bare1.ms + bare2.ms) / 2;
  const rate = (RECORDS / imp.ms) * 1000;
  const bareRate = (RECORDS / bareMs) * 1000;
  const best = (runs: ChildResult[], k: 'p50us' | 'p99us') => Math.min(...runs.map((x) => x[k] as number));
  const p50Small = best(smallRuns, 'p50us');
  const p50Big = best(bigRuns, 'p50us');
  const mb = (b: number) => (b / 1024 / 1024).toFixed(0);

  const cpu = os.cpus();
  const lines = [
    `${new Date().toISOString().slice(0, 10)}, ${cpu.length} cores (${cpu[0]?.model.trim() ?? '?'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; load average ${loadBefore} before, ${loadAfter} after.`,
    `Reproduce with \`npm run bench:import\`. ${RECORDS.toLocaleString('en-US')} generated records (${(fileBytes / 1e6).toFixed(0)} MB of NDJSON, ${Math.round(fileBytes / RECORDS)} bytes a record; 70 % Check, 15 % UKMOT with 1-5 tests, 15 % the other 29 operations).`,
    '',
    '| measure | value | target |',
    '|---|---|---|',
    `| import, records/s (to the store closed) | ${Math.round(rate).toLocaleString('en-US')} (${(imp.ms / 1000).toFixed(1)} s; committed at ${((imp.committedMs as number) / 1000).toFixed(1)} s) | >= 100,000 |`,
    `| bare read-and-JSON.parse pass, records/s (mean of one before and one after the import) | ${Math.round(bareRate).toLocaleString('en-US')} (${(bare1.ms / 1000).toFixed(1)} s, ${(bare2.ms / 1000).toFixed(1)} s) | |`,
    `| import as a share of the bare pass | ${((rate / bareRate) * 100).toFixed(0)} % | >= 50 % |`,
    `| peak RSS of the import | ${mb(imp.maxRssBytes)} MB (bare pass: ${mb(Math.max(bare1.maxRssBytes, bare2.maxRssBytes))} MB) | < 250 MB |`,
    `| RDW CSV import with --fuel, records/s (fuel read included) | ${Math.round(rdwRate).toLocaleString('en-US')} (${(rdw.ms / 1000).toFixed(1)} s, of which fuel ${((rdw.fuelMs as number) / 1000).toFixed(1)} s; ${(fs.statSync(rdwFile).size / 1e6).toFixed(0)} MB + ${(fs.statSync(rdwFuel).size / 1e6).toFixed(0)} MB of CSV) | |`,
    `| NDJSON import of the same RDW records (${Math.round(rdwNdjsonBytes / RECORDS)} bytes a record), records/s | ${Math.round(sameRate).toLocaleString('en-US')} (${(same.ms / 1000).toFixed(1)} s) | |`,
    `| RDW CSV import as a share of the NDJSON import of the same records: wall / CPU time | ${((rdwRate / sameRate) * 100).toFixed(0)} % / ${(((same.cpuMs as number) / (rdw.cpuMs as number)) * 100).toFixed(0)} % | >= 80 % |`,
    `| RDW CSV import as a share of the generated NDJSON import above (${Math.round(fileBytes / RECORDS)} bytes a record): wall / CPU time | ${((rdwRate / rate) * 100).toFixed(0)} % / ${(((imp.cpuMs as number) / (rdw.cpuMs as number)) * 100).toFixed(0)} % | |`,
    `| peak RSS of the RDW CSV import | ${mb(rdw.maxRssBytes)} MB | |`,
    `| store size | ${mb(bytes)} MB, ${Math.round(bytes / RECORDS)} bytes a record, ${(bytes / fileBytes).toFixed(2)} x the NDJSON | <= 1.5 x |`,
    `| lookup p50 / p99 at ${SMALL.toLocaleString('en-US')} records (us, best of 2 runs of ${LOOKUPS.toLocaleString('en-US')}) | ${p50Small.toFixed(1)} / ${best(smallRuns, 'p99us').toFixed(1)} | |`,
    `| lookup p50 / p99 at ${RECORDS.toLocaleString('en-US')} records (us) | ${p50Big.toFixed(1)} / ${best(bigRuns, 'p99us').toFixed(1)} | |`,
    `| lookup p50 at ${RECORDS.toLocaleString('en-US')} against ${SMALL.toLocaleString('en-US')} | ${(p50Big / p50Small).toFixed(2)} x | <= 1.3 x |`,
    '',
    `A lookup here is the store read and the answer's bytes (\`resultInner\`), in one process, 50 a turn, the first fifth of each run left out as warm-up.`,
  ];
  const table = lines.join('\n');
  process.stdout.write(table + '\n');
  if (!SHORT && RECORDS === 1_000_000) {
    const md = path.join(ROOT, 'bench', 'IMPORT.md');
    const head = '# Import benchmark\n\n';
    const notes = fs.existsSync(md)
      ? fs
          .readFileSync(md, 'utf8')
          .split('\n## ')
          .slice(1)
          .map((s) => '\n## ' + s)
          .join('')
      : '';
    fs.writeFileSync(
      md,
      head + '## Latest run\n\n' + table + '\n' + notes.replace(/^\n## Latest run[\s\S]*?(?=\n## |$)/, ''),
    );
    log('wrote bench/IMPORT.md');
  }
  if (process.env.BENCH_KEEP !== '1')
    for (const f of [db, smallDb, rdwDb, sameDb])
      for (const x of [f, `${f}-wal`, `${f}-shm`]) fs.rmSync(x, { force: true });
}

// bench/refresh.ts imports the RDW generator from here without running this bench.
if (require.main === module) {
  if (STORE === 'postgres') mainPostgres();
  else main();
}
