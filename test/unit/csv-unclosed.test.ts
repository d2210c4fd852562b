// A quote opened in a CSV and never closed (RFC 4180: a quoted field ends at a quote not followed
// by another). In a short file the rest of the file then reads as one field, and the row it ends
// reported a field count that said nothing of the quote; the import names the quote and the line
// where it opens. The files are written by hand here.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { importStream, readFuelFile } from '../../src/data/import';
import { SqliteStore } from '../../src/store/sqlite';

let store: SqliteStore;
beforeEach(() => {
  store = new SqliteStore(':memory:');
});
afterEach(async () => {
  await store.close();
});

const RDW = ['Kenteken,Merk,Handelsbenaming', 'AB123C,FORD,FOCUS', 'CD456E,"OPEL,ASTRA', 'EF789G,FORD,KA', ''].join(
  '\n',
);

test('RDW CSV: the row whose quote never closes is reported as an unclosed quote on its line (3), not a field count', async () => {
  const report = await importStream(store, Readable.from([RDW]), { format: 'rdw' });
  expect(report.committed).toBe(false);
  expect(report.errors).toHaveLength(1);
  expect(report.errors[0].line).toBe(3);
  expect(report.errors[0].reason).toMatch(/^unclosed quote/);
  expect(report.errors[0].reason).not.toMatch(/field\(s\)/);
  expect(await store.count()).toBe(0);
});

test('RDW CSV: the same on worker threads, and a quoted field that closes on a later line is still one field', async () => {
  const report = await importStream(store, Readable.from([RDW]), { format: 'rdw', workers: 2 });
  expect(report.errors.map((e) => [e.line, /^unclosed quote/.test(e.reason)])).toEqual([[3, true]]);
  const closed = 'Kenteken,Merk,Handelsbenaming\nAB123C,FORD,"FOCUS\nWAGON"\n';
  const ok = await importStream(store, Readable.from([closed]), { format: 'rdw' });
  expect([ok.committed, ok.imported, ok.errors]).toEqual([true, 1, []]);
});

test("Ukraine's register: an unclosed quote on line 3 of a ';'-separated file", async () => {
  const header = 'person;d_reg;brand;model;n_reg_new';
  const text = [header, 'P;2016-01-05;FORD;FOCUS;AA1234BB', 'P;2016-01-06;"OPEL;ASTRA;AA1235BB', ''].join('\n');
  const report = await importStream(store, Readable.from([text]), { format: 'ua-mvs' });
  expect(report.committed).toBe(false);
  expect(report.errors.map((e) => [e.line, /^unclosed quote/.test(e.reason)])).toEqual([[3, true]]);
});

test('RDW fuel CSV (--fuel): refused naming the row where the quote opens', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-unclosed-'));
  try {
    const file = path.join(dir, 'fuel.csv');
    fs.writeFileSync(file, 'Kenteken,Brandstof omschrijving\nAB123C,Benzine\nCD456E,"Diesel\n');
    await expect(readFuelFile(file)).rejects.toThrow(/row 3: unclosed quote/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
