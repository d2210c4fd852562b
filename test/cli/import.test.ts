// The data commands as an operator runs them: `reglookup import` (a file, standard input), export
// and backup, with their counts, their refusals and their exit statuses. (Reading and checking the
// lines in-process: test/unit/import.test.ts.)

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { runCli } from '../helpers/cli';

const car = {
  Description: 'TEST CAR',
  RegistrationYear: 2019,
  CarMake: { CurrentValue: null, CurrentTextValue: 'FORD' },
  FuelType: 'Petrol',
  ImageUrl: 'x',
};
const line = (o: unknown) => JSON.stringify(o);

describe('reglookup import (the command)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-import-'));
  const db = path.join(dir, 'test.db');
  const run = (file: string) => runCli(['import', file], { DATABASE_URL: `sqlite:${db}` });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('prints counts on success and exits 0; prints line numbers and exits non-zero on a bad file, changing nothing', () => {
    const good = path.join(dir, 'good.ndjson');
    fs.writeFileSync(
      good,
      [
        line({ operation: 'Check', registration: 'CLI1', vehicle: car }),
        line({ operation: 'CheckUSA', registration: 'CLI2', state: 'TX', vehicle: car }),
      ].join('\n'),
    );
    const ok = run(good);
    expect(ok.status).toBe(0);
    expect(ok.stdout).toMatch(/imported 2 record\(s\) from 2 line\(s\): Check 1, CheckUSA 1/);

    const bad = path.join(dir, 'bad.ndjson');
    fs.writeFileSync(
      bad,
      [
        line({ operation: 'Check', registration: 'CLI3', vehicle: car }),
        line({ operation: 'Nope', registration: 'X', vehicle: car }),
      ].join('\n'),
    );
    const failed = run(bad);
    expect(failed.status).not.toBe(0);
    expect(failed.stderr).toContain('bad.ndjson:2: unknown operation "Nope"');
    expect(failed.stderr).toMatch(/nothing was imported/);
    const count = execFileSync(
      process.execPath,
      [
        '-e',
        `const D=require('better-sqlite3');console.log(new D(${JSON.stringify(db)}).prepare('select count(*) n from records').get().n)`,
      ],
      {
        encoding: 'utf8',
      },
    );
    expect(count.trim()).toBe('2');
  });
});

describe('reglookup import of a register export without its --format', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-import-hint-'));
  const db = path.join(dir, 'test.db');
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const importOf = (name: string, text: string, input?: string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, text);
    return runCli(['import', input === undefined ? file : '-'], { DATABASE_URL: `sqlite:${db}` }, input);
  };

  // The first columns of RDW's registered-vehicles CSV (opendata.rdw.nl, m9d7-ebf2), written by hand.
  const rdw = 'Kenteken,Voertuigsoort,Merk,Handelsbenaming\r\n' + 'AB123C,Personenauto,FORD,FOCUS\r\n'.repeat(3);
  // A yearly file of Ukraine's register (data.gov.ua): ';'-separated, quoted, the plate in N_REG_NEW.
  const mvs =
    '\uFEFF"PERSON";"REG_ADDR_KOATUU";"OPER_CODE";"OPER_NAME";"D_REG";"BRAND";"MODEL";"MAKE_YEAR";"N_REG_NEW"\n' +
    '"P";"8036100000";"70";"REGISTRATION";"2024-01-02";"FORD";"FOCUS";"2010";"AA1234BB"\n';

  test('an RDW CSV: one line saying to use --format rdw, exit 1, nothing imported, not a JSON error a line', () => {
    const r = importOf('vehicles.csv', rdw);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /vehicles\.csv: this looks like the RDW export .*: use --format rdw; nothing was imported/,
    );
    expect(r.stderr).not.toMatch(/not valid JSON/);
  });

  test("Ukraine's register CSV: the hint names --format ua-mvs, on standard input too", () => {
    for (const r of [importOf('reestrtz2024.csv', mvs), importOf('stdin.csv', '', mvs)]) {
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/this looks like Ukraine's register .*: use --format ua-mvs; nothing was imported/);
      expect(r.stderr).not.toMatch(/not valid JSON/);
    }
  });

  test("a ZIP archive (a local file header's signature, PK 3 4, first) is how Ukraine's register comes", () => {
    const r = importOf('reestrtz2024.zip', 'PK\u0003\u0004\u0014\u0000\u0000\u0000\u0008\u0000junk\n');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/reestrtz2024\.zip: this is a ZIP archive.*: use --format ua-mvs; nothing was imported/);
  });

  test('a line of NDJSON that is not JSON, with no export header, is still reported as not JSON', () => {
    const r = importOf('broken.ndjson', 'Kentekens and more\n');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/broken\.ndjson:1: not valid JSON/);
    expect(r.stderr).not.toMatch(/--format/);
  });
});

describe('reglookup import - and the refusals of the data commands', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-stdin-'));
  const run = (db: string, args: string[], input?: string) =>
    runCli(args, { DATABASE_URL: `sqlite:${path.join(dir, db)}` }, input);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('export | import --replace-all - into an empty store: its export is byte-identical', () => {
    const file = path.join(dir, 'in.ndjson');
    fs.writeFileSync(
      file,
      [
        line({ operation: 'CheckUSA', registration: '7abc 123', state: 'Texas', vehicle: car }),
        line({ operation: 'UKMOT', registration: 'M1', mot: { make: 'FORD', tests: [] } }),
      ].join('\n') + '\n',
    );
    expect(run('a.db', ['import', '--quiet', file]).status).toBe(0);
    const first = run('a.db', ['export', '--quiet']);
    expect(first.stdout.split('\n').filter(Boolean)).toHaveLength(2);
    const piped = run('b.db', ['import', '--replace-all', '-'], first.stdout);
    expect(piped.status).toBe(0);
    expect(piped.stdout).toMatch(/imported 2 record\(s\) from 2 line\(s\)/);
    expect(run('b.db', ['export', '--quiet']).stdout).toBe(first.stdout);
    const bad = run('b.db', ['import', '-'], '{"operation":"Nope","registration":"AB12CDE"}\n');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/^\(stdin\):1: unknown operation "Nope"$/m);
  });

  test('a missing file to import, and a backup into a folder that does not exist: one clear line each, exit 1', () => {
    const missing = run('c.db', ['import', path.join(dir, 'nope.ndjson')]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toBe(`reglookup: cannot read ${path.join(dir, 'nope.ndjson')}: no such file\n`);
    expect(
      run(
        'c.db',
        ['import', '--quiet', '-'],
        line({ operation: 'UKMOT', registration: 'M1', mot: { make: 'FORD', tests: [] } }) + '\n',
      ).status,
    ).toBe(0);
    const backup = run('c.db', ['backup', path.join(dir, 'no-such-folder', 'x.db')]);
    expect(backup.status).toBe(1);
    expect(backup.stderr).toBe(
      `reglookup: the folder ${path.join(dir, 'no-such-folder')} does not exist; create it first (mkdir -p ${path.join(dir, 'no-such-folder')})\n`,
    );
  });

  // README, Export: export and backup refuse a SQLite path with no store (exit 2, one line naming
  // DATABASE_URL) and do not create one; a store that cannot be reached names DATABASE_URL too.
  test('export and backup of a SQLite path with no store: refused, exit 2, and no file created there', () => {
    const where = path.join(dir, 'typo.db');
    for (const args of [['export'], ['export', path.join(dir, 'out.ndjson')], ['backup', path.join(dir, 'copy.db')]]) {
      const r = run('typo.db', args);
      expect(r.status).toBe(2);
      expect(r.stderr).toBe(
        `reglookup: DATABASE_URL 'sqlite:${where}': no store at ${where} (nothing to read; check the path, or import into it first)\n`,
      );
      expect(r.stdout).toBe('');
    }
    expect(fs.existsSync(where)).toBe(false);
    expect(fs.existsSync(path.join(dir, 'copy.db'))).toBe(false);
  });

  test('a PostgreSQL that cannot be reached: one line naming DATABASE_URL (password hidden), exit 2, for data and users commands', () => {
    const url = 'postgres://reg:secret@127.0.0.1:1/test';
    for (const args of [['export'], ['users', 'list'], ['import', '-']]) {
      const r = runCli(args, { DATABASE_URL: url }, '');
      expect(r.status).toBe(2);
      expect(r.stderr).toBe(
        "reglookup: DATABASE_URL 'postgres://reg:***@127.0.0.1:1/test' cannot be opened: connect ECONNREFUSED 127.0.0.1:1\n",
      );
    }
  });
});

describe('reglookup import --replace-all, export, backup (the commands)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-cli-'));
  const db = path.join(dir, 'cli.db');
  const run = (...args: string[]) => runCli(args, { DATABASE_URL: `sqlite:${db}` });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('a full refresh reports repeats and what it replaced, with a plain progress line when not on a terminal; export and backup give back the same records', () => {
    const file = path.join(dir, 'refresh.ndjson');
    const usa = { operation: 'CheckUSA', registration: '7ABC123', state: 'CA', vehicle: car };
    fs.writeFileSync(
      file,
      [
        line({ operation: 'Check', registration: 'R1', vehicle: car }),
        line(usa),
        line({ operation: 'Check', registration: 'r 1', vehicle: car }),
      ].join('\n') + '\n',
    );
    const imported = run('import', '--replace-all', file);
    expect(imported.status).toBe(0);
    expect(imported.stdout).toMatch(/imported 3 record\(s\) from 3 line\(s\)/);
    expect(imported.stdout).toMatch(/1 line\(s\) repeated the key of an earlier line; the later line won/);
    expect(imported.stdout).toMatch(/replaced every operation/);
    expect(imported.stderr).toMatch(/^import: 100 %/m);

    const exported = run('export');
    expect(exported.status).toBe(0);
    expect(exported.stdout).toBe(
      '{"operation":"Check","registration":"R1","vehicle":' +
        JSON.stringify(car) +
        '}\n' +
        '{"operation":"CheckUSA","registration":"7ABC123","state":"CA","vehicle":' +
        JSON.stringify(car) +
        '}\n',
    );
    expect(exported.stderr).toMatch(/exported 2 record\(s\)/);

    const backup = path.join(dir, 'copy.db');
    const quiet = run('backup', '--quiet', backup);
    expect(quiet.status).toBe(0);
    expect(quiet.stdout + quiet.stderr).toBe('');
    const count = execFileSync(
      process.execPath,
      [
        '-e',
        `const D=require('better-sqlite3');console.log(new D(${JSON.stringify(backup)}).prepare('select count(*) n from records').get().n)`,
      ],
      {
        encoding: 'utf8',
      },
    );
    expect(count.trim()).toBe('2');
    expect(run('backup', backup).status).not.toBe(0);
  }, 120_000); // five command-line runs on a shared machine
});
