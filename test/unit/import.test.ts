import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { Readable } from 'node:stream';
import { importStream, parseLine } from '../../src/data/import';
import { SqliteStore } from '../../src/store/sqlite';

const car = { Description: 'TEST CAR', RegistrationYear: 2019, CarMake: { CurrentValue: null, CurrentTextValue: 'FORD' }, FuelType: 'Petrol', ImageUrl: 'x' };
const line = (o: unknown) => JSON.stringify(o);
const ndjson = (...lines: string[]) => Readable.from([lines.join('\n') + '\n']);

describe('import: one line', () => {
  test('a vehicle record is keyed by operation, normalised registration and state', () => {
    const r = parseLine(line({ operation: 'CheckUSA', registration: '7abc 123', state: 'california', vehicle: car }));
    expect(r).toMatchObject({ ok: true, delete: false, record: { operation: 'CheckUSA', registration: '7ABC123', state: 'CA', payload: JSON.stringify(car) } });
  });

  test.each([
    ['not json', '{oops', /not valid JSON/],
    ['no operation', line({ registration: 'A1', vehicle: car }), /"operation" is missing/],
    ['unknown operation', line({ operation: 'CheckMars', registration: 'A1', vehicle: car }), /unknown operation "CheckMars"/],
    ['no registration', line({ operation: 'Check', vehicle: car }), /"registration" must be a string/],
    ['overlong registration', line({ operation: 'Check', registration: 'A'.repeat(40), vehicle: car }), /longer than 32/],
    ['state missing', line({ operation: 'CheckUSA', registration: 'A1', vehicle: car }), /"state" is required for CheckUSA/],
    ['bad state', line({ operation: 'CheckCanada', registration: 'A1', state: 'Texas', vehicle: car }), /"state" is not a known subdivision/],
    ['state where none belongs', line({ operation: 'Check', registration: 'A1', state: 'CA', vehicle: car }), /only for CheckUSA/],
    ['vehicle not an object', line({ operation: 'Check', registration: 'A1', vehicle: 'car' }), /"vehicle" must be a JSON object/],
    ['integer field not an integer', line({ operation: 'Check', registration: 'A1', vehicle: { RegistrationYear: 'nineteen' } }), /RegistrationYear must be an integer/],
    ['composite with a stray key', line({ operation: 'Check', registration: 'A1', vehicle: { CarMake: { Text: 'FORD' } } }), /unknown key "Text"/],
    ['CurrentValue not an integer', line({ operation: 'Check', registration: 'A1', vehicle: { FuelType: { CurrentValue: 'x' } } }), /CurrentValue must be an integer or null/],
    ['a character XML cannot carry', line({ operation: 'Check', registration: 'A1', vehicle: { Description: 'bad\u0001' } }), /XML cannot carry/],
    ['mot on a vehicle operation', line({ operation: 'Check', registration: 'A1', mot: {} }), /holds "vehicle", not "mot"/],
    ['tests not an array', line({ operation: 'UKMOT', registration: 'A1', mot: { tests: {} } }), /mot.tests must be an array/],
    ['failure reasons not strings', line({ operation: 'UKMOT', registration: 'A1', mot: { tests: [{ FailureReasons: [1, {}] }] } }), /FailureReasons\[1\]/],
    ['extended information not rows', line({ operation: 'UKMOT', registration: 'A1', mot: { extendedInformation: ['Colour'] } }), /extendedInformation\[0\] must be an array/],
  ])('refuses %s, saying why', (_name, text, reason) => {
    const r = parseLine(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(reason);
  });
});

describe('import: a file', () => {
  let store: SqliteStore;
  beforeEach(() => {
    store = new SqliteStore(':memory:');
  });
  afterEach(() => store.close());

  test('a valid file is written, counted per operation, and replaces records with the same key', async () => {
    const report = await importStream(
      store,
      ndjson(
        line({ operation: 'Check', registration: 'AB12 CDE', vehicle: car }),
        '',
        line({ operation: 'UKMOT', registration: 'AB12CDE', mot: { make: 'FORD', tests: [] } }),
        line({ operation: 'Check', registration: 'ab-12-cde', vehicle: { ...car, Description: 'REPLACED' } }),
      ),
    );
    expect(report).toMatchObject({ committed: true, imported: 3, invalid: 0, byOperation: { Check: 2, UKMOT: 1 } });
    expect(await store.count()).toBe(2);
    const found = await store.get({ operation: 'Check', registration: 'AB12CDE', state: '' });
    expect(JSON.parse(found!.payload).Description).toBe('REPLACED');
  });

  test('one invalid line anywhere imports nothing, and every bad line is reported by number', async () => {
    await importStream(store, ndjson(line({ operation: 'Check', registration: 'KEEP1', vehicle: car })));
    const report = await importStream(
      store,
      ndjson(
        line({ operation: 'Check', registration: 'NEW1', vehicle: car }),
        line({ operation: 'Check', registration: 'KEEP1', vehicle: { ...car, Description: 'OVERWRITTEN' } }),
        '{broken',
        line({ operation: 'CheckUSA', registration: 'X', vehicle: car }),
      ),
    );
    expect(report.committed).toBe(false);
    expect(report.errors.map((e) => e.line)).toEqual([3, 4]);
    expect(await store.count()).toBe(1);
    expect(await store.get({ operation: 'Check', registration: 'NEW1', state: '' })).toBeNull();
    expect(JSON.parse((await store.get({ operation: 'Check', registration: 'KEEP1', state: '' }))!.payload).Description).toBe('TEST CAR');
  });
});

describe('reglookup import (the command)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-import-'));
  const db = path.join(dir, 'test.db');
  const cli = path.resolve(__dirname, '../../src/cli.ts');
  const run = (file: string) =>
    spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', cli, 'import', file], {
      env: { ...process.env, DATABASE_URL: `sqlite:${db}` },
      encoding: 'utf8',
    });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('prints counts on success and exits 0; prints line numbers and exits non-zero on a bad file, changing nothing', () => {
    const good = path.join(dir, 'good.ndjson');
    fs.writeFileSync(good, [line({ operation: 'Check', registration: 'CLI1', vehicle: car }), line({ operation: 'CheckUSA', registration: 'CLI2', state: 'TX', vehicle: car })].join('\n'));
    const ok = run(good);
    expect(ok.status).toBe(0);
    expect(ok.stdout).toMatch(/imported 2 record\(s\) from 2 line\(s\): Check 1, CheckUSA 1/);

    const bad = path.join(dir, 'bad.ndjson');
    fs.writeFileSync(bad, [line({ operation: 'Check', registration: 'CLI3', vehicle: car }), line({ operation: 'Nope', registration: 'X', vehicle: car })].join('\n'));
    const failed = run(bad);
    expect(failed.status).not.toBe(0);
    expect(failed.stderr).toContain('bad.ndjson:2: unknown operation "Nope"');
    expect(failed.stderr).toMatch(/nothing was imported/);
    const count = execFileSync(process.execPath, ['-e', `const D=require('better-sqlite3');console.log(new D(${JSON.stringify(db)}).prepare('select count(*) n from records').get().n)`], { encoding: 'utf8' });
    expect(count.trim()).toBe('2');
  });
});

describe('reglookup import --replace-all, export, backup (the commands)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-cli-'));
  const db = path.join(dir, 'cli.db');
  const cli = path.resolve(__dirname, '../../src/cli.ts');
  const run = (...args: string[]) =>
    spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', cli, ...args], {
      env: { ...process.env, DATABASE_URL: `sqlite:${db}` },
      encoding: 'utf8',
    });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('a full refresh reports repeats and what it replaced, with a plain progress line when not on a terminal; export and backup give back the same records', () => {
    const file = path.join(dir, 'refresh.ndjson');
    const usa = { operation: 'CheckUSA', registration: '7ABC123', state: 'CA', vehicle: car };
    fs.writeFileSync(file, [line({ operation: 'Check', registration: 'R1', vehicle: car }), line(usa), line({ operation: 'Check', registration: 'r 1', vehicle: car })].join('\n') + '\n');
    const imported = run('import', '--replace-all', file);
    expect(imported.status).toBe(0);
    expect(imported.stdout).toMatch(/imported 3 record\(s\) from 3 line\(s\)/);
    expect(imported.stdout).toMatch(/1 line\(s\) repeated the key of an earlier line; the later line won/);
    expect(imported.stdout).toMatch(/replaced every operation/);
    expect(imported.stderr).toMatch(/^import: 100 %/m);

    const exported = run('export');
    expect(exported.status).toBe(0);
    expect(exported.stdout).toBe(
      '{"operation":"Check","registration":"R1","vehicle":' + JSON.stringify(car) + '}\n' +
        '{"operation":"CheckUSA","registration":"7ABC123","state":"CA","vehicle":' + JSON.stringify(car) + '}\n',
    );
    expect(exported.stderr).toMatch(/exported 2 record\(s\)/);

    const backup = path.join(dir, 'copy.db');
    const quiet = run('backup', '--quiet', backup);
    expect(quiet.status).toBe(0);
    expect(quiet.stdout + quiet.stderr).toBe('');
    const count = execFileSync(process.execPath, ['-e', `const D=require('better-sqlite3');console.log(new D(${JSON.stringify(backup)}).prepare('select count(*) n from records').get().n)`], { encoding: 'utf8' });
    expect(count.trim()).toBe('2');
    expect(run('backup', backup).status).not.toBe(0);
  }, 120_000); // five command-line runs, each compiling the sources on a shared machine
});
