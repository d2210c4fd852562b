// `reglookup import --format rdw FILE [--fuel FILE]` (issue 28, deliverable 5; docs/data.md, RDW
// bulk download): RDW's registered-vehicles CSV under either header form, its fuel CSV joined by
// kenteken, CSV as RFC 4180 writes it (quotes, commas, line breaks and quotes inside quotes, a BOM,
// CRLF), read however the bytes arrive, and the NDJSON import's checks, atomicity and options.
// The CSV files and the records expected from them are written by hand here.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { Readable } from 'node:stream';
import { importStream, readFuelFile } from '../../src/data/import';
import { SqliteStore } from '../../src/store/sqlite';
import { API_HEADER, csv, FUEL, PORTAL_HEADER, ROWS } from '../helpers/rdw';
import { RDW_EXPORT_HEADER, RDW_EXPORT_ROWS } from '../fixtures/rdw-export';

const GOLF = {
  Description: 'VOLKSWAGEN GOLF 1498cc',
  RegistrationYear: 2019,
  CarMake: { CurrentTextValue: 'VOLKSWAGEN' },
  CarModel: { CurrentTextValue: 'GOLF' },
  BodyStyle: { CurrentValue: null, CurrentTextValue: 'hatchback' },
  EngineSize: { CurrentValue: 1498, CurrentTextValue: '1498cc' },
  NumberOfDoors: { CurrentValue: 4, CurrentTextValue: '4' },
  MakeDescription: { CurrentValue: null, CurrentTextValue: 'VOLKSWAGEN' },
  ModelDescription: { CurrentValue: null, CurrentTextValue: 'GOLF' },
  NumberOfSeats: { CurrentValue: 5, CurrentTextValue: '5' },
  Colour: 'GRIJS',
  VehicleType: 'Personenauto',
  FirstRegistrationDate: '2019-03-15',
  rdw: {
    kenteken: 'XX999X',
    voertuigsoort: 'Personenauto',
    merk: 'VOLKSWAGEN',
    handelsbenaming: 'GOLF',
    eerste_kleur: 'GRIJS',
    datum_eerste_toelating: '20190315',
    cilinderinhoud: '1498',
    aantal_deuren: '4',
    aantal_zitplaatsen: '5',
    inrichting: 'hatchback',
  },
};

let dir: string;
let store: SqliteStore;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-rdw-'));
  store = new SqliteStore(':memory:');
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const get = async (s: SqliteStore, reg: string) => {
  const r = await s.get({ operation: 'CheckNetherlands', registration: reg, state: '' });
  return r ? (JSON.parse(r.payload) as Record<string, unknown>) : null;
};
const fuelOf = async (text: string) => {
  const file = path.join(dir, 'fuel.csv');
  fs.writeFileSync(file, text);
  return readFuelFile(file);
};

test.each([
  ['API field names', API_HEADER],
  ["the portal's column titles", PORTAL_HEADER],
])('either header form (%s): one CheckNetherlands record a row, mapped as the provider maps', async (_name, header) => {
  const report = await importStream(store, Readable.from([csv(header)]), { format: 'rdw' });
  expect([report.committed, report.imported, report.byOperation]).toEqual([true, 3, { CheckNetherlands: 3 }]);
  expect(await get(store, 'XX999X')).toEqual(GOLF);
  const merc = await get(store, 'AB123C');
  expect([merc?.CarModel, merc?.BodyStyle]).toEqual([
    { CurrentTextValue: 'E 200 "AVANTGARDE", LANG' },
    { CurrentValue: null, CurrentTextValue: 'sedan\r\nlang' },
  ]);
  const trailer = await get(store, 'WX12AB');
  expect(trailer).not.toHaveProperty('Colour');
  expect(trailer).not.toHaveProperty('EngineSize');
  expect(trailer?.rdw).toEqual({
    kenteken: 'WX12AB',
    voertuigsoort: 'Aanhangwagen',
    merk: 'HUMBAUR',
    handelsbenaming: 'HA 132513',
    datum_eerste_toelating: '20150102',
    inrichting: 'open wagen',
  });
});

test('--fuel: each plate gets its fuel rows (in fuel-number order, wherever they stand in the file); a plate with none an empty list', async () => {
  const fuel = await fuelOf(FUEL);
  await importStream(store, Readable.from([csv(API_HEADER, false)]), { format: 'rdw', fuel });
  expect(await get(store, 'XX999X')).toEqual({
    ...GOLF,
    FuelType: { CurrentValue: null, CurrentTextValue: 'Benzine' },
    Co2Emissions: 112,
    Co2TestCycle: 'NEDC',
    rdwFuel: [
      {
        kenteken: 'XX999X',
        brandstof_volgnummer: '1',
        brandstof_omschrijving: 'Benzine',
        co2_uitstoot_gecombineerd: '112',
      },
    ],
  });
  const merc = await get(store, 'AB123C');
  expect([merc?.FuelType, merc?.Co2Emissions, (merc?.rdwFuel as unknown[]).length]).toEqual([
    { CurrentValue: null, CurrentTextValue: 'Benzine/Elektriciteit' },
    150,
    2,
  ]);
  const trailer = await get(store, 'WX12AB');
  expect([trailer?.FuelType, trailer?.rdwFuel]).toEqual([undefined, []]);
});

test('the same records however the bytes arrive (a quoted line break, a BOM, a CRLF cut across reads)', async () => {
  const whole = csv(PORTAL_HEADER);
  const bytes = Buffer.from(whole, 'utf8');
  for (const size of [1, 2, 3, 7, 64]) {
    const pieces: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += size) pieces.push(bytes.subarray(i, i + size));
    const s = new SqliteStore(':memory:');
    const report = await importStream(s, Readable.from(pieces), { format: 'rdw' });
    expect([size, report.imported, report.invalid]).toEqual([size, 3, 0]);
    expect(await get(s, 'XX999X')).toEqual(GOLF);
    expect((await get(s, 'AB123C'))?.BodyStyle).toEqual({ CurrentValue: null, CurrentTextValue: 'sedan\r\nlang' });
    await s.close();
  }
});

test('on worker threads as on one: the same records', async () => {
  const report = await importStream(store, Readable.from([csv(PORTAL_HEADER)]), { format: 'rdw', workers: 2 });
  expect(report.imported).toBe(3);
  expect(await get(store, 'XX999X')).toEqual(GOLF);
});

test('a bad row: its line and reason reported, nothing imported', async () => {
  const bad = `${API_HEADER}\nXX999X,Personenauto,VOLKSWAGEN,GOLF,GRIJS,20190315,1498,4,5,hatchback\nYY111Y,Personenauto,FORD,FOCUS\n,Personenauto,FORD,FOCUS,ROOD,20200101,999,5,5,sedan\n`;
  const report = await importStream(store, Readable.from([bad]), { format: 'rdw' });
  expect(report.committed).toBe(false);
  expect(report.errors).toEqual([
    { line: 3, reason: 'the row has 4 field(s) where the header has 10' },
    { line: 4, reason: 'kenteken holds no letters or digits' },
  ]);
  expect(await store.count()).toBe(0);
});

test('gzip-compressed CSV, and --replace: CheckNetherlands then holds exactly the file', async () => {
  await importStream(
    store,
    Readable.from([
      JSON.stringify({ operation: 'CheckNetherlands', registration: 'OLD1', vehicle: { Description: 'OLD' } }) + '\n',
    ]),
  );
  const report = await importStream(store, Readable.from([zlib.gzipSync(csv(PORTAL_HEADER))]), {
    format: 'rdw',
    replace: 'named',
  });
  expect([report.committed, report.imported, report.replaced]).toEqual([true, 3, ['CheckNetherlands']]);
  expect(await get(store, 'OLD1')).toBeNull();
  expect(await store.count()).toBe(3);
});

test('a header that is not the vehicles file: the fuel file given in its place, or no kenteken', async () => {
  await expect(importStream(store, Readable.from([FUEL]), { format: 'rdw' })).rejects.toThrow(
    /fuel data set \(8ys7-d773\): give it with --fuel/,
  );
  await expect(importStream(store, Readable.from(['a,b\n1,2\n']), { format: 'rdw' })).rejects.toThrow(
    /no Kenteken \(kenteken\) column/,
  );
  await expect(fuelOf(csv(API_HEADER))).rejects.toThrow(/is it RDW's fuel CSV/);
});

test('a quote never closed: refused, not read to the end of memory', async () => {
  const open = `${API_HEADER}\nXX999X,"Personenauto${'x'.repeat(5 << 20)}\n`;
  await expect(importStream(store, Readable.from([open]), { format: 'rdw' })).rejects.toThrow(
    /a row is longer than .* bytes \(is a quoted field never closed\?\)/,
  );
});

test('LF line ends and no line break after the last row (a quoted field last): the same records', async () => {
  const text = `${API_HEADER}\n${ROWS.join('\n').replace('"sedan\r\nlang"', '"sedan\nlang"')}`.replace(
    /open wagen$/,
    '"open wagen"',
  );
  const report = await importStream(store, Readable.from([text]), { format: 'rdw' });
  expect([report.imported, report.invalid]).toEqual([3, 0]);
  expect((await get(store, 'WX12AB'))?.BodyStyle).toEqual({ CurrentValue: null, CurrentTextValue: 'open wagen' });
  expect((await get(store, 'AB123C'))?.BodyStyle).toEqual({ CurrentValue: null, CurrentTextValue: 'sedan\nlang' });
});

test('--dry-run: says what it would add, writes nothing', async () => {
  const report = await importStream(store, Readable.from([csv(PORTAL_HEADER)]), { format: 'rdw', dryRun: true });
  expect([report.committed, report.dryRun?.added]).toEqual([false, 3]);
  expect(await store.count()).toBe(0);
});

// RDW's real bulk export (test/fixtures/rdw-export.ts names its source): the 92-column header and
// three rows. Issue 42, point 5: dates read from the `... DT` columns as RDW writes them there
// (month first, with a time), a 0 that means "not registered" left out, the make not doubled.
describe("the bulk export's real 92-column header", () => {
  const exportCsv = (rows: string[]) => `${RDW_EXPORT_HEADER}\r\n${rows.join('\r\n')}\r\n`;
  /** The rows with the YYYYMMDD date columns emptied: only the `... DT` twins hold the dates then. */
  const dtOnly = RDW_EXPORT_ROWS.map((r) => {
    const cols = RDW_EXPORT_HEADER.split(',');
    const f = r.split(',');
    for (const name of ['Vervaldatum APK', 'Datum eerste toelating', 'Datum eerste tenaamstelling in Nederland'])
      f[cols.indexOf(name)] = '';
    return f.join(',');
  });

  test('92 columns; every row imported', async () => {
    expect(RDW_EXPORT_HEADER.split(',')).toHaveLength(92);
    const report = await importStream(store, Readable.from([exportCsv(RDW_EXPORT_ROWS)]), { format: 'rdw' });
    expect([report.committed, report.imported, report.invalid]).toEqual([true, 3, 0]);
  });

  test('NISSAN and "NISSAN MURANO": the model MURANO, the description NISSAN MURANO 3498cc', async () => {
    await importStream(store, Readable.from([exportCsv(RDW_EXPORT_ROWS)]), { format: 'rdw' });
    const nissan = await get(store, '85XXXN');
    expect(nissan).toMatchObject({
      Description: 'NISSAN MURANO 3498cc',
      CarModel: { CurrentTextValue: 'MURANO' },
      ModelDescription: { CurrentValue: null, CurrentTextValue: 'MURANO' },
      NumberOfDoors: { CurrentValue: 4, CurrentTextValue: '4' },
      RegistrationYear: 2008,
      FirstRegistrationDate: '2008-12-06',
      MotExpiryDate: '2024-01-06',
    });
    expect((nissan?.rdw as Record<string, string>).handelsbenaming).toBe('NISSAN MURANO');
  });

  test('a camper with "Aantal deuren" 0 and no seat count: neither NumberOfDoors nor NumberOfSeats', async () => {
    await importStream(store, Readable.from([exportCsv(RDW_EXPORT_ROWS)]), { format: 'rdw' });
    const camper = await get(store, '85XXXA');
    expect(camper).not.toHaveProperty('NumberOfDoors');
    expect(camper).not.toHaveProperty('NumberOfSeats');
    expect(camper?.Description).toBe('VOLKSWAGEN CALIFORNIA 2461cc');
  });

  test('the dates from the `... DT` columns alone, month first with their time, are the same dates', async () => {
    const report = await importStream(store, Readable.from([exportCsv(dtOnly)]), { format: 'rdw' });
    expect(report.imported).toBe(3);
    // "07/02/2023 12:00:00 AM" is 2 July 2023, as the row's own Vervaldatum APK 20230702 says.
    expect(await get(store, '85XXXA')).toMatchObject({
      MotExpiryDate: '2023-07-02',
      FirstRegistrationDate: '2001-06-26',
      FirstRegistrationDateNL: '2001-06-26',
      RegistrationYear: 2001,
    });
    expect(await get(store, '85XXXN')).toMatchObject({ MotExpiryDate: '2024-01-06', RegistrationYear: 2008 });
  });
});

test('--fuel, an electric car and a WLTP figure: the power from netto_max_vermogen_elektrisch, CO2 named by its cycle', async () => {
  const fuel = await fuelOf(
    [
      'Kenteken,Brandstof volgnummer,Brandstof omschrijving,Nettomaximumvermogen,Netto max vermogen elektrisch,CO2 uitstoot gecombineerd,Emissie co2 gecombineerd wltp',
      'XX999X,1,Benzine,110.00,,112,128',
      'AB123C,1,Elektriciteit,,220.00,,',
    ].join('\n'),
  );
  await importStream(store, Readable.from([csv(API_HEADER, false)]), { format: 'rdw', fuel });
  expect(await get(store, 'XX999X')).toMatchObject({ PowerKw: '110.00', Co2Emissions: 128, Co2TestCycle: 'WLTP' });
  const ev = await get(store, 'AB123C');
  expect(ev).toMatchObject({ PowerKw: '220.00', FuelType: { CurrentValue: null, CurrentTextValue: 'Elektriciteit' } });
  expect(ev).not.toHaveProperty('Co2Emissions');
});
