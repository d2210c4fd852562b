// Moving data in and out, as the README's "Importing your own vehicles", "Full refresh", "Export"
// and "Backup" sections describe it: strict records, deletions, repeated keys, replacing imports
// while a server answers from the same file, the bundled sample giving way to real data, export
// round trips and a backup taken while serving.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import Database from 'better-sqlite3';
import { loadSampleIfEmpty, SAMPLE_FILE } from '../../src/app';
import { backupStore } from '../../src/data/backup';
import { exportLine, exportRecords } from '../../src/data/export';
import { importFile, importStream } from '../../src/data/import';
import { createLogger } from '../../src/ops/logger';
import { SqliteStore } from '../../src/store/sqlite';
import { call } from '../helpers/call';
import { startServer, type TestServer } from '../helpers/server';
import { car, check, description, run, usa } from '../helpers/import-lines';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-data-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('strict records', () => {
  let store: SqliteStore;
  beforeEach(() => {
    store = new SqliteStore(':memory:');
  });
  afterEach(() => store.close());

  test('a misspelt key in mot, in an MOT test or at the top level is an error on its line, with the right spelling when only the case differs', async () => {
    const report = await run(
      store,
      {},
      check('OK1', 'FINE'),
      JSON.stringify({ operation: 'UKMOT', registration: 'M1', mot: { make: 'FORD', taxdate: '2026-01-01' } }),
      JSON.stringify({
        operation: 'UKMOT',
        registration: 'M2',
        mot: { tests: [{ testDate: '2025-01-01', Result: 'Pass' }] },
      }),
      JSON.stringify({ operation: 'Check', registration: 'V1', vehicel: car('TYPO') }),
      JSON.stringify({ operation: 'Check', Registration: 'V2', vehicle: car('CASE') }),
    );
    expect(report.committed).toBe(false);
    expect(report.errors).toEqual([
      { line: 2, reason: expect.stringMatching(/"taxdate".*did you mean "taxDate"/) },
      { line: 3, reason: expect.stringMatching(/"testDate".*did you mean "TestDate"/) },
      { line: 4, reason: expect.stringContaining('"vehicel"') },
      { line: 5, reason: expect.stringMatching(/"Registration".*did you mean "registration"/) },
    ]);
    expect(await store.isEmpty()).toBe(true);
  });

  test('extra keys inside vehicle are kept in vehicleJson', async () => {
    const report = await run(
      store,
      {},
      JSON.stringify({
        operation: 'Check',
        registration: 'X1',
        vehicle: { Description: 'D', Colour: 'Blue', nested: { any: 1 } },
      }),
    );
    expect(report.committed).toBe(true);
    expect(JSON.parse((await store.get({ operation: 'Check', registration: 'X1', state: '' }))!.payload)).toEqual({
      Description: 'D',
      Colour: 'Blue',
      nested: { any: 1 },
    });
  });

  test('two lines with the same key: the last wins, and the report counts the repeat', async () => {
    const report = await run(
      store,
      {},
      check('AB12 CDE', 'FIRST'),
      check('ab-12-cde', 'SECOND'),
      check('OTHER1', 'X'),
      check('AB12CDE', 'THIRD'),
    );
    expect(report).toMatchObject({ committed: true, imported: 4, repeated: 2 });
    expect(await store.count()).toBe(2);
    expect(await description(store, 'Check', 'AB12CDE')).toBe('THIRD');
  });
});

describe('deletions', () => {
  test('a deletion line removes its record; one for a key not there is counted, not an error; it holds nothing else', async () => {
    const store = new SqliteStore(':memory:');
    await run(store, {}, check('DEL1', 'GOES'), check('KEEP1', 'STAYS'), usa('7ABC123', 'US CAR'));
    const report = await run(
      store,
      {},
      JSON.stringify({ operation: 'Check', registration: 'del 1', delete: true }),
      JSON.stringify({ operation: 'Check', registration: 'NEVERTHERE', delete: true }),
      JSON.stringify({ operation: 'CheckUSA', registration: '7ABC123', state: 'California', delete: true }),
    );
    expect(report).toMatchObject({ committed: true, deleted: 3, imported: 0 });
    expect(await description(store, 'Check', 'DEL1')).toBeNull();
    expect(await description(store, 'CheckUSA', '7ABC123', 'CA')).toBeNull();
    expect(await description(store, 'Check', 'KEEP1')).toBe('STAYS');

    const bad = await run(
      store,
      {},
      JSON.stringify({ operation: 'Check', registration: 'KEEP1', delete: true, vehicle: car('X') }),
      JSON.stringify({ operation: 'Check', registration: 'KEEP1', delete: false }),
    );
    expect(bad.committed).toBe(false);
    expect(bad.errors.map((e) => e.line)).toEqual([1, 2]);
    expect(await description(store, 'Check', 'KEEP1')).toBe('STAYS');
    await store.close();
  });
});

describe('full refresh', () => {
  let store: SqliteStore;
  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    await run(store, {}, check('A1', 'OLD A'), check('B1', 'OLD B'), usa('X1', 'OLD X'));
  });
  afterEach(() => store.close());

  test('--replace: the operations the file names hold exactly its records; the others are untouched', async () => {
    const report = await run(store, { replace: 'named' }, check('B1', 'NEW B'), check('C1', 'NEW C'));
    expect(report).toMatchObject({ committed: true, replaced: ['Check'] });
    expect(await description(store, 'Check', 'A1')).toBeNull();
    expect(await description(store, 'Check', 'B1')).toBe('NEW B');
    expect(await description(store, 'Check', 'C1')).toBe('NEW C');
    expect(await description(store, 'CheckUSA', 'X1', 'CA')).toBe('OLD X');
  });

  test('--replace-all: the store holds exactly the file', async () => {
    const report = await run(store, { replace: 'all' }, check('C1', 'NEW C'));
    expect(report).toMatchObject({ committed: true, replaced: 'all' });
    expect(await store.count()).toBe(1);
    expect(await description(store, 'Check', 'C1')).toBe('NEW C');
  });

  test('an invalid file changes nothing, whatever it would have replaced', async () => {
    for (const replace of ['all', 'named'] as const) {
      const report = await run(
        store,
        { replace },
        check('C1', 'NEW C'),
        '{"operation":"Check","registration":"D1","vehicle":{},"colour":"x"}',
      );
      expect(report.committed).toBe(false);
      expect(report.errors[0].line).toBe(2);
      expect(await store.count()).toBe(3);
      expect(await description(store, 'Check', 'A1')).toBe('OLD A');
      expect(await description(store, 'Check', 'C1')).toBeNull();
    }
  });
});

describe('the bundled sample', () => {
  test('the first import of real data removes the sample and says so; later imports add to the real data', async () => {
    const store = new SqliteStore(':memory:');
    await loadSampleIfEmpty(store, createLogger('silent', 'json'));
    expect(await store.holdsOnlySample()).toBe(true);
    // RG11 ABC is the README's demo plate for Check.
    expect(await store.get({ operation: 'Check', registration: 'RG11ABC', state: '' })).not.toBeNull();
    const sampleSize = await store.count();

    const first = await run(store, {}, check('REAL1', 'REAL ONE'));
    expect(first.sampleRemoved).toBe(sampleSize);
    expect(await store.holdsOnlySample()).toBe(false);
    expect(await store.get({ operation: 'Check', registration: 'RG11ABC', state: '' })).toBeNull();
    expect(await store.count()).toBe(1);

    const second = await run(store, {}, check('REAL2', 'REAL TWO'));
    expect(second.sampleRemoved).toBe(0);
    expect(await store.count()).toBe(2);
    await store.close();
  });
});

describe('a replacing import while a server answers from the same file', () => {
  let srv: TestServer;
  let db: string;
  beforeAll(async () => {
    db = path.join(dir, 'serving.db');
    const seed = new SqliteStore(db);
    await run(seed, {}, check('LIVE1', 'OLD LIVE'), check('GONE1', 'OLD GONE'));
    await seed.close();
    srv = await startServer({ DATABASE_URL: `sqlite:${db}` }, { sample: false });
  });
  afterAll(() => srv.close());

  const lookup = (reg: string) => call(srv.url, 'get', 'Check', { RegistrationNumber: reg, username: 'refresh' });

  test('during the import lookups answer the old data set, after the commit the new one, never an error', async () => {
    const importer = new SqliteStore(db); // its own connection, as `reglookup import` in another process
    const input = new PassThrough();
    let read = 0;
    const done = importStream(importer, input, { replace: 'all', onBytes: (b) => (read = b) });
    input.write(check('LIVE1', 'NEW LIVE') + '\n');
    for (let i = 0; i < 2000; i++) input.write(check(`NEW${i}`, `NEW ${i}`) + '\n');
    // Let the importer write what it has been given, with the batch still open.
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(read).toBeGreaterThan(0);
    const during = await Promise.all([lookup('LIVE1'), lookup('GONE1'), lookup('NEW5'), lookup('LIVE1')]);
    expect(during.map((a) => a.status)).toEqual([200, 200, 404, 200]);
    expect(during[0].body).toContain('OLD LIVE');
    expect(during[1].body).toContain('OLD GONE');
    expect(during[2].headers.get('x-error-code')).toBe('VEHICLE_NOT_FOUND');

    // Lookups keep coming while the rest arrives and commits.
    const statuses: number[] = [];
    let stop = false;
    const poller = (async () => {
      while (!stop) statuses.push((await lookup('LIVE1')).status);
    })();
    input.end(check('NEW_LAST', 'NEW LAST') + '\n');
    const report = await done;
    stop = true;
    await poller;
    await importer.close();
    expect(report).toMatchObject({ committed: true, imported: 2002 });
    expect(statuses.every((s) => s === 200)).toBe(true);

    const after = await Promise.all([lookup('LIVE1'), lookup('GONE1'), lookup('NEW5')]);
    expect(after.map((a) => a.status)).toEqual([200, 404, 200]);
    expect(after[0].body).toContain('NEW LIVE');
  });
});

describe('export', () => {
  test('a record is written as the import line that stores it', () => {
    expect(
      exportLine({ operation: 'CheckUSA', registration: '7ABC123', state: 'CA', payload: '{"Description":"X"}' }),
    ).toBe('{"operation":"CheckUSA","registration":"7ABC123","state":"CA","vehicle":{"Description":"X"}}');
    expect(exportLine({ operation: 'UKMOT', registration: 'AB12CDE', state: '', payload: '{"make":"FORD"}' })).toBe(
      '{"operation":"UKMOT","registration":"AB12CDE","mot":{"make":"FORD"}}',
    );
  });

  test('export, import --replace-all into an empty store, export again: the same bytes', async () => {
    const a = new SqliteStore(path.join(dir, 'export-a.db'));
    expect((await importFile(a, SAMPLE_FILE, {})).committed).toBe(true);
    // Over two worker threads, as `reglookup import` runs here, and over several runs of lines: a
    // key repeated in a later run must still win.
    const many = Array.from({ length: 1500 }, (_, i) => check(`MANY${i}`, `MANY ${i}`));
    many[1400] = check('MANY10', 'MANY 10, LATER');
    const report0 = await run(
      a,
      { workers: 2 },
      check('ÜNÏCÖDE 1', 'Ünïcödé & <tags> "quotes"'),
      usa('9XYZ999', 'TX CAR'),
      ...many,
    );
    expect(report0).toMatchObject({ committed: true, repeated: 1 });
    expect(await description(a, 'Check', 'MANY10')).toBe('MANY 10, LATER');
    const first = path.join(dir, 'first.ndjson');
    const n = await exportRecords(a, fs.createWriteStream(first));
    await new Promise((r) => setTimeout(r, 50));
    expect(n).toBe(await a.count());
    await a.close();

    const b = new SqliteStore(path.join(dir, 'export-b.db'));
    const report = await importFile(b, first, { replace: 'all', workers: 2 });
    expect(report).toMatchObject({ committed: true, imported: n, repeated: 0 });
    const chunks: Buffer[] = [];
    const out = new PassThrough();
    out.on('data', (c: Buffer) => chunks.push(c));
    await exportRecords(b, out);
    await b.close();
    const firstBytes = fs.readFileSync(first);
    expect(firstBytes.length).toBeGreaterThan(1000);
    expect(Buffer.concat(chunks).equals(firstBytes)).toBe(true);
  });
});

describe('backup while serving', () => {
  test('a backup taken while lookups and account writes go on holds every record and account, and lookups never fail', async () => {
    const db = path.join(dir, 'backup-src.db');
    const srv = await startServer({ DATABASE_URL: `sqlite:${db}` });
    try {
      await srv.store.accounts.putAccount({ username: 'alice', credits: 5 });
      const records = await srv.store.count();
      const backer = new SqliteStore(db); // the backup command's own connection
      const dest = path.join(dir, 'backup.db');
      const statuses: number[] = [];
      let stop = false;
      const load = (async () => {
        for (let i = 0; !stop; i++) {
          statuses.push(
            (await call(srv.url, 'get', 'Check', { RegistrationNumber: 'RG11 ABC', username: 'demo' })).status,
          );
          if (i % 5 === 0) await srv.store.accounts.putAccount({ username: `writer${i}`, credits: i });
        }
      })();
      await backupStore(backer, dest, () => undefined);
      stop = true;
      await load;
      await backer.close();
      expect(statuses.length).toBeGreaterThan(0);
      expect(statuses.every((s) => s === 200)).toBe(true);

      // docs/data.md: a backup is two files, the records at the name given and the accounts beside it.
      const copy = new Database(dest, { readonly: true });
      expect((copy.prepare('SELECT COUNT(*) AS n FROM records').get() as { n: number }).n).toBe(records);
      expect((copy.pragma('integrity_check') as { integrity_check: string }[])[0].integrity_check).toBe('ok');
      copy.close();
      const accounts = new Database(path.join(dir, 'backup.accounts.db'), { readonly: true });
      expect(accounts.prepare("SELECT credits FROM accounts WHERE username = 'alice'").get()).toEqual({ credits: 5 });
      expect((accounts.pragma('integrity_check') as { integrity_check: string }[])[0].integrity_check).toBe('ok');
      accounts.close();
      await expect(backupStore(new SqliteStore(db), dest)).rejects.toThrow(/already exists/);
    } finally {
      await srv.close();
    }
  });
});
