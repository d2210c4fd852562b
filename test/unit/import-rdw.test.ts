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
import { runCli } from '../helpers/cli';

const API_HEADER =
  'kenteken,voertuigsoort,merk,handelsbenaming,eerste_kleur,datum_eerste_toelating,cilinderinhoud,aantal_deuren,aantal_zitplaatsen,inrichting';
const PORTAL_HEADER =
  'Kenteken,Voertuigsoort,Merk,Handelsbenaming,Eerste kleur,Datum eerste toelating,Cilinderinhoud,Aantal deuren,Aantal zitplaatsen,Inrichting';
const ROWS = [
  'XX999X,Personenauto,VOLKSWAGEN,GOLF,GRIJS,20190315,1498,4,5,hatchback',
  // Quoted: a comma and doubled quotes in the trade name; a line break (CRLF) inside the body style.
  'AB123C,Personenauto,MERCEDES-BENZ,"E 200 ""AVANTGARDE"", LANG",ZWART,20200101,1991,4,5,"sedan\r\nlang"',
  // A trailer: empty fields.
  'WX12AB,Aanhangwagen,HUMBAUR,HA 132513,,20150102,,,,open wagen',
];
const FUEL = [
  'kenteken,brandstof_volgnummer,brandstof_omschrijving,co2_uitstoot_gecombineerd',
  'AB123C,2,Elektriciteit,',
  'XX999X,1,Benzine,112',
  // The plate's other row, not next to its first.
  'AB123C,1,Benzine,150',
].join('\n');

const csv = (header: string, bom = true) => `${bom ? '\ufeff' : ''}${header}\r\n${ROWS.join('\r\n')}\r\n`;

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

describe('the command line', () => {
  test('import --format rdw --fuel FILE FILE.csv.gz', () => {
    const vehicles = path.join(dir, 'vehicles.csv.gz');
    fs.writeFileSync(vehicles, zlib.gzipSync(csv(PORTAL_HEADER)));
    fs.writeFileSync(path.join(dir, 'fuel.csv'), FUEL);
    const env = { DATABASE_URL: `sqlite:${path.join(dir, 'r.db')}`, SAMPLE_DATA: 'false' };
    const r = runCli(['import', '--quiet', '--format', 'rdw', '--fuel', path.join(dir, 'fuel.csv'), vehicles], env);
    expect([r.status, r.stderr]).toEqual([0, '']);
    const exported = runCli(['export', '--quiet'], env);
    const lines = exported.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { registration: string; vehicle: Record<string, unknown> });
    expect(
      lines.map((l) => [
        l.registration,
        (l.vehicle.FuelType as { CurrentTextValue?: string } | undefined)?.CurrentTextValue,
      ]),
    ).toEqual([
      ['AB123C', 'Benzine/Elektriciteit'],
      ['WX12AB', undefined],
      ['XX999X', 'Benzine'],
    ]);
  });

  test('--fuel without --format rdw, and an unknown format, are refused in one line', () => {
    const env = { DATABASE_URL: `sqlite:${path.join(dir, 'r.db')}` };
    const a = runCli(['import', '--fuel', 'f.csv', 'v.csv'], env);
    expect([a.status, a.stderr.trim()]).toEqual([
      1,
      'reglookup: --fuel joins RDW fuel data to --format rdw; give --format rdw too',
    ]);
    const b = runCli(['import', '--format', 'xml', 'v.csv'], env);
    expect([b.status, b.stderr.trim()]).toEqual([1, "reglookup: --format must be ndjson, rdw or ua-mvs, not 'xml'"]);
  });
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
