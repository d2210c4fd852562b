// `reglookup import --format ua-mvs FILE...` (issue 44, deliverable 2; docs/data.md, "Ukraine's
// register"): the Ministry of Internal Affairs' yearly files as published (test/helpers/mvs.ts says
// where each header and row comes from), one CheckUkraine record a plate holding its newest
// operation, whatever the order of the files and of their rows; what a caller of CheckUkraine then
// gets; what the import leaves out and says it left out; the owner's columns never stored.
// The records expected are written by hand from the mapping table in docs/data.md.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { Readable } from 'node:stream';
import { importFiles, importStream } from '../../src/data/import';
import { SqliteStore } from '../../src/store/sqlite';
import { runCli } from '../helpers/cli';
import {
  csvOf,
  HEADER_2013,
  HEADER_2019,
  HEADER_2025,
  HEADER_2026,
  pythonEncode,
  pythonZip,
  ROWS_2016,
  ROWS_2019,
  ROWS_2025,
  ROWS_2026,
} from '../helpers/mvs';
import { startServer } from '../helpers/server';

let dir: string;
let store: SqliteStore;
let zips: { y2016: string; y2019: string; y2025: string; y2026: string };
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-mvs-'));
  zips = {
    y2016: path.join(dir, 'tz_opendata_z01012016_po31122016.zip'),
    y2019: path.join(dir, 'tz_opendata_z01012019_po01012020.zip'),
    y2025: path.join(dir, 'reestrtz2025.zip'),
    y2026: path.join(dir, 'reestrtz2026.zip'),
  };
  pythonZip(zips.y2016, 'tz_opendata_z01012016_po31122016.csv', csvOf(HEADER_2013, ROWS_2016));
  // The 2019 file's published name ends in `.сsv`, a Cyrillic с.
  pythonZip(zips.y2019, 'tz_opendata_z01012019_po01012020.сsv', csvOf(HEADER_2019, ROWS_2019), 'utf-8-sig');
  pythonZip(zips.y2025, 'reestrtz2025.csv', csvOf(HEADER_2025, ROWS_2025));
  pythonZip(zips.y2026, 'reestrtz2026.csv', csvOf(HEADER_2026, ROWS_2026));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
beforeEach(() => {
  store = new SqliteStore(':memory:');
});
afterEach(async () => {
  await store.close();
});

const get = async (s: SqliteStore, reg: string) => {
  const r = await s.get({ operation: 'CheckUkraine', registration: reg, state: '' });
  return r ? (JSON.parse(r.payload) as Record<string, unknown>) : null;
};

/** The Tesla АА9359РС as of its newest operation (2025), by docs/data.md's mapping table. */
const TESLA_2025 = {
  Description: 'TESLA MODEL X',
  RegistrationYear: 2016,
  CarMake: { CurrentTextValue: 'TESLA' },
  CarModel: { CurrentTextValue: 'MODEL X' },
  BodyStyle: { CurrentValue: null, CurrentTextValue: 'УНІВЕРСАЛ-B' },
  FuelType: { CurrentValue: null, CurrentTextValue: 'ЕЛЕКТРО' },
  MakeDescription: { CurrentValue: null, CurrentTextValue: 'TESLA' },
  ModelDescription: { CurrentValue: null, CurrentTextValue: 'MODEL X' },
  Colour: 'СІРИЙ',
  VehicleType: 'ЛЕГКОВИЙ',
  Purpose: 'ЗАГАЛЬНИЙ',
  VehicleIdentificationNumber: '5YJXCCE40GF010543',
  MassEmpty: 2485,
  MassMaximum: 3021,
  OperationDate: '2025-06-02',
  OperationCode: 410,
  Operation: 'ЗАМІНА НОМЕРНОГО ЗНАКУ',
  ServiceCentre: 'ТСЦ 8045',
  ServiceCentreCode: '12290',
};

test("a caller of CheckUkraine gets a plate's newest operation, typed in Latin letters, from the yearly ZIPs", async () => {
  const report = await importFiles(store, [zips.y2025, zips.y2016, zips.y2019, zips.y2026], { workers: 1 });
  expect(report.errors).toEqual([]);
  expect(report.committed).toBe(true);
  const srv = await startServer({}, { store, sample: false });
  try {
    // АА9359РС is stored as the service normalises it: Cyrillic look-alikes read as Latin.
    const res = await fetch(`${srv.url}/api/reg.asmx/CheckUkraine?RegistrationNumber=aa%209359%20pc&username=demo`);
    expect(res.status).toBe(200);
    const body = await res.text();
    const json = /<vehicleJson>([^<]*)<\/vehicleJson>/.exec(body)?.[1] ?? '';
    // With where it came from and as of when (the archives' time: see the tests of the import time below).
    expect(JSON.parse(json.replace(/&quot;/g, '"').replace(/&amp;/g, '&'))).toEqual({
      ...TESLA_2025,
      AnswerSource: 'import',
      AnswerAsOf: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
    expect(body).toContain('<Description>TESLA MODEL X</Description>');
    expect(body).toContain('<RegistrationYear>2016</RegistrationYear>');
  } finally {
    await srv.close();
  }
});

test('the newest operation wins whatever the order of the files and of the rows in them', async () => {
  const orders = [
    [zips.y2016, zips.y2019, zips.y2025],
    [zips.y2025, zips.y2019, zips.y2016],
    [zips.y2019, zips.y2025, zips.y2016],
  ];
  for (const files of orders) {
    const s = new SqliteStore(':memory:');
    try {
      const report = await importFiles(s, files);
      expect(report.committed).toBe(true);
      expect(await get(s, 'AA9359PC')).toEqual(TESLA_2025);
      // The LEXUS's rows are not in date order in its file: 15.03.25 (its newest) comes first.
      const lexus = await get(s, 'AX1312KK');
      expect([lexus?.OperationDate, lexus?.OperationCode, lexus?.Description]).toEqual([
        '2025-03-15',
        254,
        'LEXUS IS 250 2499cc',
      ]);
      expect(lexus?.EngineSize).toEqual({ CurrentValue: 2499, CurrentTextValue: '2499cc' });
      // Four rows of plates read in another row, the newest kept: Tesla 2016 and 2019, LEXUS 01.01.25.
      expect((report.superseded ?? 0) + report.repeated).toBe(3);
      expect(await s.count()).toBe(3);
    } finally {
      await s.close();
    }
  }
});

test('2013-2018 rows: the lower-case header, ISO dates, the brand without the model twice, the code not twice', async () => {
  const report = await importFiles(store, [zips.y2016]);
  expect(report.committed).toBe(true);
  const tesla = await get(store, 'AA9359PC');
  expect(tesla).toMatchObject({
    Description: 'TESLA MODEL X',
    CarMake: { CurrentTextValue: 'TESLA' },
    CarModel: { CurrentTextValue: 'MODEL X' },
    Colour: 'ЧОРНИЙ',
    OperationDate: '2016-10-13',
    OperationCode: 70,
    Operation: 'РЕЄСТРАЦІЯ ТЗ ПРИВЕЗЕНОГО З-ЗА КОРДОНУ ПО ВМД',
    ServiceCentre: 'Центр 8044',
  });
  expect(tesla).not.toHaveProperty('EngineSize'); // an electric car: no capacity
  expect(tesla).not.toHaveProperty('VehicleIdentificationNumber'); // no VIN before 2021
  expect(await get(store, 'KA0001AA')).toMatchObject({ Description: 'BMW 320 1998cc', RegistrationYear: 2013 });
});

test('rows without a plate are skipped and counted; a file without the plate column (2026) is named', async () => {
  const report = await importFiles(store, [zips.y2016, zips.y2026]);
  expect(report.committed).toBe(true);
  expect(report.skipped).toBe(1 + ROWS_2026.length);
  expect(report.withoutPlates).toEqual([zips.y2026]);
  expect(report.byOperation).toEqual({ CheckUkraine: 2 });
  const cli = runCli(['import', '--format', 'ua-mvs', zips.y2016, zips.y2026], {
    DATABASE_URL: `sqlite:${path.join(dir, 'skip.db')}`,
    SAMPLE_DATA: 'false',
  });
  expect(cli.status).toBe(0);
  expect(cli.stdout).toContain('imported 2 record(s) from 7 line(s): CheckUkraine 2\n');
  expect(cli.stdout).toContain('3 row(s) have no plate (N_REG_NEW): skipped\n');
  expect(cli.stdout).toContain(
    `${zips.y2026} has no N_REG_NEW column: none of its rows has a plate, so none of them was imported\n`,
  );
});

test("the owner's columns (PERSON, REG_ADDR_KOATUU) are in no record", async () => {
  await importFiles(store, [zips.y2016, zips.y2019, zips.y2025]);
  let records = 0;
  for await (const r of store.records()) {
    records++;
    for (const koatuu of ['8036600000', '0510137000', '6310138200']) expect(r.payload).not.toContain(koatuu);
    expect(r.payload).not.toMatch(/person|koatuu|"[PJ]"/i);
  }
  expect(records).toBe(3);
});

test('the same records from a plain, a gzip-compressed and a Windows-1251 CSV, and from a `,`-separated one', async () => {
  const text = csvOf(HEADER_2025, ROWS_2025);
  const plain = path.join(dir, 'reestrtz2025.csv');
  fs.writeFileSync(plain, text);
  const gz = path.join(dir, 'reestrtz2025.csv.gz');
  fs.writeFileSync(gz, zlib.gzipSync(text));
  const cp1251 = path.join(dir, 'reestrtz2025-cp1251.csv');
  fs.writeFileSync(cp1251, pythonEncode(text, 'cp1251'));
  const commas = path.join(dir, 'reestrtz2025-commas.csv');
  fs.writeFileSync(commas, text.replace(/";"/g, '","'));
  const want = await (async () => {
    await importFiles(store, [zips.y2025]);
    return [await get(store, 'AA9359PC'), await get(store, 'AX1312KK')];
  })();
  expect(want[0]).toEqual(TESLA_2025);
  for (const file of [plain, gz, cp1251, commas]) {
    const s = new SqliteStore(':memory:');
    try {
      const report = await importFiles(s, [file]);
      expect([file, report.committed, report.invalid]).toEqual([file, true, 0]);
      expect([await get(s, 'AA9359PC'), await get(s, 'AX1312KK')]).toEqual(want);
    } finally {
      await s.close();
    }
  }
  // Standard input: a CSV, not a ZIP (whose directory is at its end).
  const other = new SqliteStore(':memory:');
  const fromStdin = await importStream(other, Readable.from([text]), { format: 'ua-mvs' });
  await other.close();
  // Applied: the Tesla and the LEXUS's newest; its older row read after is left out.
  expect([fromStdin.imported, fromStdin.superseded]).toEqual([2, 1]);
  await expect(importStream(store, Readable.from([fs.readFileSync(zips.y2025)]), { format: 'ua-mvs' })).rejects.toThrow(
    'a ZIP archive is read from a file, not from standard input',
  );
});

test('a row that cannot be read is reported with its file and line, and nothing is imported', async () => {
  const bad = path.join(dir, 'bad.zip');
  const rows = [
    ROWS_2025[0],
    ROWS_2025[1].replace('"01.01.25"', '"31.02.25"'),
    ROWS_2025[2].replace(';"АА9359РС"', ''),
  ];
  pythonZip(bad, 'bad.csv', csvOf(HEADER_2025, rows));
  const report = await importFiles(store, [zips.y2016, bad]);
  expect(report.committed).toBe(false);
  expect(report.errors).toEqual([
    { file: bad, line: 3, reason: 'D_REG "31.02.25" is not a date (DD.MM.YY, DD.MM.YYYY or YYYY-MM-DD)' },
    { file: bad, line: 4, reason: 'the row has 19 field(s) where the header has 20' },
  ]);
  expect(await store.count()).toBe(0);
  const notRegister = path.join(dir, 'vehicles.csv');
  fs.writeFileSync(notRegister, 'Kenteken,Merk\nXX999X,VOLKSWAGEN\n');
  const cli = runCli(['import', '--quiet', '--format', 'ua-mvs', zips.y2016, notRegister], {
    DATABASE_URL: `sqlite:${path.join(dir, 'bad.db')}`,
  });
  expect([cli.status, cli.stderr.trim()]).toEqual([
    1,
    `reglookup: cannot read ${notRegister}: its header has no D_REG and BRAND columns: is it the Ministry of Internal Affairs' register of vehicle registrations (data.gov.ua)? It begins: Kenteken,Merk; nothing was imported`,
  ]);
});

describe('a refresh of CheckUkraine beside other records', () => {
  const seed = async (s: SqliteStore) => {
    const lines = [
      { operation: 'CheckNetherlands', registration: 'XX999X', vehicle: { Description: 'VOLKSWAGEN GOLF' } },
      { operation: 'CheckUkraine', registration: 'ZZ0000ZZ', vehicle: { Description: 'GONE' } },
    ];
    await importStream(s, Readable.from([lines.map((l) => JSON.stringify(l)).join('\n') + '\n']));
    // Held already: the Tesla as of 2019 (2025 changes it), the BMW of 2016, and the LEXUS as 2025 leaves it.
    await importFiles(s, [zips.y2016, zips.y2019]);
    const lexus = new SqliteStore(':memory:');
    await importFiles(lexus, [zips.y2025]);
    const payload = (await lexus.get({ operation: 'CheckUkraine', registration: 'AX1312KK', state: '' }))?.payload;
    await lexus.close();
    const batch = await s.beginImport();
    await batch.put({ operation: 'CheckUkraine', registration: 'AX1312KK', state: '', payload: payload as string });
    await batch.commit();
  };

  test('--dry-run says, per operation, what would be added, changed, unchanged and removed, and writes nothing', async () => {
    await seed(store);
    const before = await store.count();
    const report = await importFiles(store, [zips.y2016, zips.y2019, zips.y2025], { replace: 'named', dryRun: true });
    expect(report.committed).toBe(false);
    expect(report.dryRun?.operations).toEqual({
      // The Tesla changed (its 2025 operation); the BMW and the LEXUS as held; ZZ0000ZZ is not in the files.
      CheckUkraine: { added: 0, changed: 1, unchanged: 2, removed: 1 },
    });
    expect(await store.count()).toBe(before);
    const all = await importFiles(store, [zips.y2025], { replace: 'all', dryRun: true, minKeep: 0 });
    expect(all.dryRun?.operations).toEqual({
      CheckNetherlands: { added: 0, changed: 0, unchanged: 0, removed: 1 },
      CheckUkraine: { added: 0, changed: 1, unchanged: 1, removed: 2 },
    });
  });

  test('--replace with the shrink guard: a file that would leave CheckUkraine under --min-keep is refused; other operations are never touched', async () => {
    await seed(store);
    const lexusOnly = path.join(dir, 'lexus.zip');
    pythonZip(lexusOnly, 'lexus.csv', csvOf(HEADER_2025, ROWS_2025.slice(0, 2)));
    const refused = await importFiles(store, [lexusOnly], { replace: 'named', minKeep: 50 });
    expect(refused.committed).toBe(false);
    expect(refused.shrinkRefused).toEqual({ operation: 'CheckUkraine', before: 4, after: 1, minKeep: 50 });
    expect(await store.count()).toBe(5);
    const kept = await importFiles(store, [zips.y2016, zips.y2019, zips.y2025], { replace: 'named', minKeep: 50 });
    expect(kept.committed).toBe(true);
    expect(await get(store, 'ZZ0000ZZ')).toBeNull();
    expect(await store.count()).toBe(4);
    expect(await store.get({ operation: 'CheckNetherlands', registration: 'XX999X', state: '' })).not.toBeNull();
  });
});

test("docs/data.md's --dry-run example is what the command prints for those files", () => {
  const doc = fs.readFileSync(path.join(__dirname, '../../docs/data.md'), 'utf8');
  const block = /```text\n\$ npx reglookup (import --dry-run [^\n]+)\n([\s\S]*?)```/.exec(doc);
  expect(block).not.toBeNull();
  const [, command, printed] = block as RegExpExecArray;
  const env = { DATABASE_URL: `sqlite:${path.join(dir, 'doc.db')}`, SAMPLE_DATA: 'false' };
  const byName = (name: string) => Object.values(zips).find((z) => path.basename(z) === name) ?? name;
  // The store holds the first two years, imported before.
  const seeded = runCli(['import', '--quiet', '--format', 'ua-mvs', zips.y2016, zips.y2019], env);
  expect(seeded.status).toBe(0);
  const args = command.split(' ').map(byName);
  const r = runCli([...args.slice(0, 1), '--quiet', ...args.slice(1)], env);
  expect([r.status, r.stdout]).toEqual([0, printed]);
});

test('a damaged ZIP stops the import with its reason, nothing imported, the store as it was', async () => {
  await importFiles(store, [zips.y2016]);
  const bytes = fs.readFileSync(zips.y2025);
  // The entry's CRC-32 in its central directory record (APPNOTE.TXT 4.3.12: 16 bytes in).
  const central = bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
  bytes.writeUInt32LE((bytes.readUInt32LE(central + 16) ^ 0xff) >>> 0, central + 16);
  const damaged = path.join(dir, 'damaged.zip');
  fs.writeFileSync(damaged, bytes);
  await expect(importFiles(store, [damaged, zips.y2019], { replace: 'all', minKeep: 0 })).rejects.toThrow(
    'reestrtz2025.csv is damaged (its CRC-32 does not match)',
  );
  expect(await store.countByOperation()).toEqual({ CheckUkraine: 2 });
});

describe("a record's import time: when the archive says its file was written (docs/data.md)", () => {
  const zipAt = (name: string, written: { dateTime: readonly number[]; utcSeconds?: number }) => {
    const file = path.join(dir, name);
    pythonZip(file, 'reestrtz2025.csv', csvOf(HEADER_2025, ROWS_2025), 'utf-8', written);
    return file;
  };

  test("an MS-DOS time is Kyiv's wall clock: summer (UTC+3) and winter (UTC+2); several files: the newest", async () => {
    const summer = zipAt('summer.zip', { dateTime: [2025, 6, 30, 14, 5, 0] });
    const winter = zipAt('winter.zip', { dateTime: [2025, 1, 15, 9, 0, 0] });
    await importFiles(store, [winter]);
    // 15 January 2025, 09:00 in Kyiv (EET) is 07:00 UTC.
    expect(await store.importTimes()).toEqual(new Map([['CheckUkraine', Date.UTC(2025, 0, 15, 7, 0, 0)]]));
    await importFiles(store, [winter, summer], { replace: 'named' });
    // 30 June 2025, 14:05 in Kyiv (EEST) is 11:05 UTC.
    expect(await store.importTimes()).toEqual(new Map([['CheckUkraine', Date.UTC(2025, 5, 30, 11, 5, 0)]]));
  });

  test('an extended timestamp (UTC) is taken over the MS-DOS time; a caller sees it as Last-Modified', async () => {
    // 1 July 2025, 00:00:00 UTC.
    const file = zipAt('stamped.zip', { dateTime: [2025, 7, 1, 3, 0, 0], utcSeconds: 1751328000 });
    await importFiles(store, [file]);
    const srv = await startServer({}, { store, sample: false });
    try {
      const res = await fetch(`${srv.url}/api/json.aspx/CheckUkraine/AX1312KK?username=demo`);
      expect(res.status).toBe(200);
      expect(res.headers.get('last-modified')).toBe('Tue, 01 Jul 2025 00:00:00 GMT');
      expect(await res.json()).toMatchObject({ AnswerSource: 'import', AnswerAsOf: '2025-07-01T00:00:00Z' });
    } finally {
      // It closes the store too; afterEach's second close does nothing.
      await srv.close();
    }
  });

  test('a plain CSV gives no time: the records are as of the import', async () => {
    const csv = path.join(dir, 'plain2025.csv');
    fs.writeFileSync(csv, csvOf(HEADER_2025, ROWS_2025));
    const before = Date.now();
    await importFiles(store, [csv]);
    const at = (await store.importTimes()).get('CheckUkraine') ?? 0;
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(Date.now());
  });
});
