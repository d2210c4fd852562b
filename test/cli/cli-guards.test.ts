// The command line's guards, from an operator's issue of ways to break the service on purpose: a
// --replace-all that would empty or gut the store, --dry-run, stores and variables that are
// mistyped, and what import, export, backup and users say when the disk is full, the file is not a
// database, a directory, gzip data, Ctrl-C, a line with several problems, or a file already there.
// Every command runs as its own process, as an operator runs it; expectations are written here by hand.

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { runCli, serve } from '../helpers/cli';
import { CLI } from '../helpers/cli';
import { describePostgres, describeSqlite, testSchema, type TestSchema } from '../helpers/postgres';

jest.setTimeout(120_000);

const SAMPLE = path.resolve(__dirname, '../../data/sample.ndjson');
/** The bundled sample: 153 records (wc -l data/sample.ndjson). */
const SAMPLE_RECORDS = 153;
const SAMPLE_LINES = fs
  .readFileSync(SAMPLE, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '');

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-guards-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** A fresh path in the test folder. */
function fresh(name: string): string {
  return path.join(dir, `${++n}-${name}`);
}

function write(name: string, lines: readonly string[]): string {
  const file = fresh(name);
  fs.writeFileSync(file, lines.map((l) => l + '\n').join(''));
  return file;
}

/** A store holding the sample's 153 records (imported as real data: SAMPLE_DATA off). */
function seeded(url = `sqlite:${fresh('store.db')}`): Record<string, string> {
  const env = { DATABASE_URL: url, SAMPLE_DATA: 'off' };
  const r = runCli(['import', '-q', SAMPLE], env);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return env;
}

/** How many records the store holds, as export counts them. */
function count(env: Record<string, string>): number {
  const r = runCli(['export', '-q'], env);
  expect(r.status).toBe(0);
  return r.stdout.split('\n').filter((l) => l !== '').length;
}

/** A Check record for a registration the sample does not have. */
function check(registration: string): string {
  return JSON.stringify({ operation: 'Check', registration, vehicle: { Description: 'TEST CAR' } });
}

/** stderr without the progress lines (a pipe gets one each 10 %). */
function messages(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l !== '' && !/^import(?: \(dry run\))?: \d+ %/.test(l));
}

describeSqlite('import --replace-all refuses to gut the store (SQLite)', () => {
  test('an empty file: refused in one line naming both counts and the flag, exit 1, the store untouched', () => {
    const env = seeded();
    const r = runCli(['import', '--replace-all', write('empty.ndjson', [])], env);
    expect(r.status).toBe(1);
    const lines = messages(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^reglookup: refused: --replace-all would leave 0 record\(s\) where the store holds 153 now .*nothing was imported.*--allow-shrink/,
    );
    expect(count(env)).toBe(SAMPLE_RECORDS);
  });

  test('a cut-short file (3 of 153 records) is refused; --min-keep 0 and --allow-shrink let it through', () => {
    const env = seeded();
    const three = write('three.ndjson', SAMPLE_LINES.slice(0, 3));
    const refused = runCli(['import', '--replace-all', three], env);
    expect(refused.status).toBe(1);
    expect(messages(refused.stderr).join('\n')).toMatch(
      /would leave 3 record\(s\) where the store holds 153 now \(less than --min-keep 50 %\)/,
    );
    expect(count(env)).toBe(SAMPLE_RECORDS);

    const minKeep0 = runCli(['import', '-q', '--replace-all', '--min-keep', '0', three], env);
    expect(minKeep0.status).toBe(0);
    expect(count(env)).toBe(3);

    const env2 = seeded();
    const allowed = runCli(['import', '-q', '--replace-all', '--allow-shrink', three], env2);
    expect(allowed.status).toBe(0);
    expect(count(env2)).toBe(3);
  });

  test('a file keeping more than half (100 of 153) replaces the store by default; --min-keep 80 refuses it', () => {
    const env = seeded();
    const most = write('most.ndjson', SAMPLE_LINES.slice(0, 100));
    const strict = runCli(['import', '--replace-all', '--min-keep', '80', most], env);
    expect(strict.status).toBe(1);
    expect(count(env)).toBe(SAMPLE_RECORDS);
    const ok = runCli(['import', '-q', '--replace-all', most], env);
    expect(ok.status).toBe(0);
    expect(count(env)).toBe(100);
  });

  test("a store holding only the bundled sample is replaced by any file: the sample is no one's data", async () => {
    const env = { DATABASE_URL: `sqlite:${fresh('sample-only.db')}` };
    // serve loads the sample into a new store (SAMPLE_DATA defaults to on).
    const srv = await serve(env);
    await srv.stop();
    expect(count(env)).toBe(SAMPLE_RECORDS);
    const r = runCli(['import', '-q', '--replace-all', write('first.ndjson', [check('FIRST1')])], env);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(count(env)).toBe(1);
  });

  test('--min-keep takes a per cent from 0 to 100', () => {
    const r = runCli(['import', '--replace-all', '--min-keep', '150', SAMPLE], seeded());
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/--min-keep must be a whole per cent from 0 to 100/);
  });
});

describeSqlite('import --dry-run', () => {
  test('says what would be added, replaced and removed, and writes nothing', () => {
    const env = seeded();
    const before = runCli(['export', '-q'], env).stdout;
    const file = write('changes.ndjson', [
      SAMPLE_LINES[0],
      SAMPLE_LINES[1],
      check('DRY1'),
      JSON.stringify({ ...JSON.parse(SAMPLE_LINES[2]), vehicle: undefined, mot: undefined, delete: true }),
    ]);
    const r = runCli(['import', '--dry-run', file], env);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^dry run: nothing was written$/m);
    expect(r.stdout).toMatch(/would add 1 new record\(s\) and replace 2 /);
    expect(r.stdout).toMatch(/would remove 1 record\(s\)/);
    expect(runCli(['export', '-q'], env).stdout).toBe(before);

    const all = runCli(['import', '--dry-run', '--replace-all', '--allow-shrink', file], env);
    expect(all.status).toBe(0);
    // 153 held; the file keeps 2 of them (the third it deletes): 151 would go.
    expect(all.stdout).toMatch(/would remove 151 record\(s\)/);
    expect(runCli(['export', '-q'], env).stdout).toBe(before);
  });

  test('on a SQLite path with no file, compares against an empty store and creates no file', () => {
    const file = fresh('never-made.db');
    const r = runCli(['import', '--dry-run', '-q', write('new.ndjson', [check('DRY4')])], {
      DATABASE_URL: `sqlite:${file}`,
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/would add 1 new record\(s\) and replace 0 /);
    expect(r.stdout).toMatch(/the store holds 0 record\(s\) now/);
    expect(fs.existsSync(file)).toBe(false);
  });

  test('reports invalid lines and the refusal a real run would meet, exit 1, nothing written', () => {
    const env = seeded();
    const bad = runCli(['import', '--dry-run', write('bad.ndjson', [check('DRY2'), '{"operation":"Check"'])], env);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/:2: not valid JSON/);
    expect(bad.stderr).toMatch(/1 invalid line\(s\) of 2; the import would fail/);
    const shrink = runCli(['import', '--dry-run', '--replace-all', write('one.ndjson', [check('DRY3')])], env);
    expect(shrink.status).toBe(1);
    expect(shrink.stderr).toMatch(/would leave 1 record\(s\) where the store holds 153 now/);
    expect(count(env)).toBe(SAMPLE_RECORDS);
  });
});

describePostgres('import --replace-all and --dry-run on PostgreSQL', () => {
  let schema: TestSchema;
  beforeAll(() => {
    schema = testSchema();
  });
  afterAll(async () => {
    await schema.drop();
  });

  test('an empty file is refused with the store untouched; a dry run writes nothing; --allow-shrink replaces', () => {
    const env = seeded(schema.url);
    const empty = runCli(['import', '--replace-all', write('pg-empty.ndjson', [])], env);
    expect(empty.status).toBe(1);
    expect(messages(empty.stderr)[0]).toMatch(
      /refused: --replace-all would leave 0 record\(s\) where the store holds 153 now/,
    );
    expect(count(env)).toBe(SAMPLE_RECORDS);

    const dry = runCli(['import', '--dry-run', write('pg-dry.ndjson', [SAMPLE_LINES[0], check('PGDRY1')])], env);
    expect(dry.status).toBe(0);
    expect(dry.stdout).toMatch(/would add 1 new record\(s\) and replace 1 /);
    expect(count(env)).toBe(SAMPLE_RECORDS);

    const three = write('pg-three.ndjson', SAMPLE_LINES.slice(0, 3));
    expect(runCli(['import', '--replace-all', three], env).status).toBe(1);
    expect(count(env)).toBe(SAMPLE_RECORDS);
    expect(runCli(['import', '-q', '--replace-all', '--allow-shrink', three], env).status).toBe(0);
    expect(count(env)).toBe(3);
  });
});

describeSqlite('a mistyped store or variable is not taken silently', () => {
  test('users list, usage, set and credit refuse a SQLite file that is not there, and create none', () => {
    const store = fresh('reglookp.db');
    const env = { DATABASE_URL: `sqlite:${store}` };
    for (const args of [
      ['users', 'list'],
      ['users', 'usage', 'alice'],
      ['users', 'set', 'alice', '--credits', '5'],
      ['users', 'credit', 'alice', '5'],
    ]) {
      const r = runCli(args, env);
      expect({ args, status: r.status }).toEqual({ args, status: 2 });
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(new RegExp(`no store at ${store.replace(/[.]/g, '\\.')}`));
      expect(fs.existsSync(store)).toBe(false);
    }
  });

  test('users add and users import on a path that is not there make the store (callers before the first start) and say so on stderr; on the next run, nothing is said', () => {
    const store = fresh('callers-first.db');
    const env = { DATABASE_URL: `sqlite:${store}` };
    const said = `reglookup: created a new store at ${store}: no file was there (check DATABASE_URL if you meant an existing store)\n`;
    const add = runCli(['users', 'add', 'alice', '--username', 'alice', '--credits', '5'], env);
    expect(add.status).toBe(0);
    expect(add.stderr).toBe(said);
    expect(fs.existsSync(store)).toBe(true);
    const again = runCli(['users', 'add', 'bob', '--username', 'bob'], env);
    expect(again.status).toBe(0);
    expect(again.stderr).toBe('');

    const other = fresh('callers-import.db');
    const file = path.join(path.dirname(other), 'callers.ndjson');
    fs.writeFileSync(
      file,
      '{"caller":{"username":"carol","credits":3,"dailyLimit":null,"rate":null,"allow":[],"enabled":true}}\n',
    );
    const imported = runCli(['users', 'import', file], { DATABASE_URL: `sqlite:${other}` });
    expect(imported.status).toBe(0);
    expect(imported.stderr).toBe(
      `reglookup: created a new store at ${other}: no file was there (check DATABASE_URL if you meant an existing store)\n`,
    );
  });

  test('serve on a path that is not there warns, naming the file it creates', async () => {
    const store = path.join(fresh('new-folder'), 'sub', 'reglookup.db');
    const srv = await serve({ DATABASE_URL: `sqlite:${store}`, SAMPLE_DATA: 'off' });
    try {
      expect(srv.output()).toMatch(/created a new store at [^"]*reglookup\.db/);
      expect(srv.output()).toContain(store);
    } finally {
      await srv.stop();
    }
    // An existing store: no such warning.
    const again = await serve({ DATABASE_URL: `sqlite:${store}`, SAMPLE_DATA: 'off' });
    try {
      expect(again.output()).not.toMatch(/created a new/);
    } finally {
      await again.stop();
    }
  });

  test('a variable that looks like a misspelt one of ours is reported; other variables are not', () => {
    const env = {
      ...seeded(),
      DATABSE_URL: 'sqlite:elsewhere.db',
      LOG_LEVL: 'debug',
      HOME: '/root',
      MY_OWN_SETTING: 'x',
    };
    const r = runCli(['users', 'list'], env);
    expect(r.status).toBe(0);
    const warnings = r.stderr.split('\n').filter((l) => /warning/.test(l));
    expect(warnings.sort()).toEqual([
      'reglookup: warning: DATABSE_URL is set but not read; did you mean DATABASE_URL?',
      'reglookup: warning: LOG_LEVL is set but not read; did you mean LOG_LEVEL?',
    ]);
  });

  test('the misspelt variable is reported when start-up fails on a configuration error too, before that error', () => {
    // ADMIN_TOKEN for ADMIN_TOKENS: the misspelling is why ADMIN_PORT finds no token.
    const admin = runCli(['serve'], {
      DATABASE_URL: 'sqlite::memory:',
      ADMIN_PORT: '0',
      ADMIN_TOKEN: 'ops:0123456789abcdef0123456789abcdef',
    });
    expect(admin.status).toBe(2);
    const lines = admin.stderr.split('\n').filter((l) => l !== '');
    expect(lines[0]).toBe('reglookup: warning: ADMIN_TOKEN is set but not read; did you mean ADMIN_TOKENS?');
    expect(lines[lines.length - 1]).toMatch(/^reglookup: ADMIN_PORT is set but no admin token is/);

    // An error of another variable: the warning is still given, once.
    const port = runCli(['users', 'list'], { ...seeded(), DATABSE_URL: 'sqlite:elsewhere.db', PORT: 'eighty' });
    expect(port.status).toBe(2);
    expect(port.stderr.split('\n').filter((l) => /warning/.test(l))).toEqual([
      'reglookup: warning: DATABSE_URL is set but not read; did you mean DATABASE_URL?',
    ]);
    expect(port.stderr).toMatch(/PORT/);
  });
});

describeSqlite('messages', () => {
  const hasMount = (() => {
    if (process.platform !== 'linux') return false;
    const probe = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-mount-'));
    const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe]);
    const ok = r.status === 0;
    if (ok) spawnSync('umount', [probe]);
    fs.rmSync(probe, { recursive: true, force: true });
    if (!ok && process.env.CI !== 'true')
      process.stderr.write('disk-full test skipped: cannot mount a small tmpfs here (needs root)\n');
    return ok || process.env.CI === 'true';
  })();

  (hasMount ? test : test.skip)('a full disk during import says so, and that nothing was imported', () => {
    const mnt = fresh('small-disk');
    fs.mkdirSync(mnt);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mnt]);
    try {
      const store = path.join(mnt, 'store.db');
      const base = JSON.parse(SAMPLE_LINES[0]) as Record<string, unknown>;
      // About 8 MB of records for a 2 MB disk.
      const lines = Array.from({ length: 8000 }, (_, i) =>
        JSON.stringify({ ...base, registration: `ZZ${String(i).padStart(5, '0')}` }),
      );
      const r = runCli(['import', '-q', '--workers', '0', write('big.ndjson', lines)], {
        DATABASE_URL: `sqlite:${store}`,
        SAMPLE_DATA: 'off',
      });
      expect(r.status).toBe(1);
      expect(r.stderr).toBe(`reglookup: import failed: the disk holding ${store} is full; nothing was imported\n`);
    } finally {
      execFileSync('umount', [mnt]);
    }
  });

  test('a file that is not a database: users list, import and export say what serve says, exit 2', async () => {
    const file = fresh('not-a-db.db');
    fs.writeFileSync(file, 'this is not a database, it is text\n'.repeat(200));
    const env = { DATABASE_URL: `sqlite:${file}`, SAMPLE_DATA: 'off' };
    const expected = `reglookup: DATABASE_URL 'sqlite:${file}' cannot be opened: file is not a database\n`;
    const served = spawnSync(process.execPath, [CLI, 'serve'], {
      env: { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(served.status).toBe(2);
    expect(served.stderr).toBe(expected);
    for (const args of [['users', 'list'], ['import', SAMPLE], ['export']]) {
      const r = runCli(args, env);
      expect({ args, status: r.status, stderr: r.stderr }).toEqual({ args, status: 2, stderr: expected });
    }
  });

  test('importing a directory: one line, exit 1, no EISDIR', () => {
    const folder = fresh('folder');
    fs.mkdirSync(folder);
    const r = runCli(['import', folder], seeded());
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      `reglookup: cannot read ${folder}: it is a directory; give an NDJSON file (plain or gzip-compressed)\n`,
    );
  });

  test('gzip files are read as what they hold, named .gz or not; a damaged one is one line and imports nothing', () => {
    const env = { DATABASE_URL: `sqlite:${fresh('gz.db')}`, SAMPLE_DATA: 'off' };
    const gz = fresh('sample.ndjson.gz');
    fs.writeFileSync(gz, zlib.gzipSync(fs.readFileSync(SAMPLE)));
    const r = runCli(['import', gz], env);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^imported 153 record\(s\) from 153 line\(s\)/);
    expect(count(env)).toBe(SAMPLE_RECORDS);

    // The same bytes without the extension: recognised by their first two bytes (1f 8b).
    const env2 = { DATABASE_URL: `sqlite:${fresh('gz2.db')}`, SAMPLE_DATA: 'off' };
    const unnamed = fresh('download.ndjson');
    fs.copyFileSync(gz, unnamed);
    expect(runCli(['import', '-q', unnamed], env2).status).toBe(0);
    expect(count(env2)).toBe(SAMPLE_RECORDS);

    const cut = fresh('cut.ndjson.gz');
    const whole = zlib.gzipSync(Buffer.from(SAMPLE_LINES.slice(0, 2).concat(check('GZCUT')).join('\n') + '\n'));
    fs.writeFileSync(cut, whole.subarray(0, whole.length - 12));
    const bad = runCli(['import', cut], env);
    expect(bad.status).toBe(1);
    expect(messages(bad.stderr)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^reglookup: cannot read ${cut.replace(/[.]/g, '\\.')}: the gzip data is damaged or cut short .*; nothing was imported$`,
        ),
      ),
    ]);
    expect(count(env)).toBe(SAMPLE_RECORDS);
  });

  test('Ctrl-C during an import: it says nothing was imported, rolls back, exit 130', async () => {
    const env = seeded();
    const fifo = fresh('feed.fifo');
    execFileSync('mkfifo', [fifo]);
    const child = spawn(process.execPath, [CLI, 'import', '--workers', '0', fifo], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    // Opening the FIFO for writing returns once the import has opened it for reading (O_RDWR would
    // not wait; a child that exits first would leave a write-only open waiting for ever).
    const early = exited.then((code) => Promise.reject(new Error(`import exited ${code} before it read: ${err}`)));
    early.catch(() => undefined);
    const feed = await Promise.race([fs.promises.open(fifo, 'w'), early]);
    try {
      await feed.write(Array.from({ length: 50 }, (_, i) => check(`INT${i}`) + '\n').join(''));
      // The lines are in the pipe; the import waits for more. The operator presses Ctrl-C.
      await new Promise((r) => setTimeout(r, 500));
      child.kill('SIGINT');
      // Ctrl-C in a terminal reaches the writer too, which then closes its end: once the import
      // has answered the signal (before that, an end of file could be taken for the file's end).
      for (let i = 0; i < 600 && !/interrupted/.test(err) && child.exitCode === null; i++)
        await new Promise((r) => setTimeout(r, 100));
    } finally {
      await feed.close();
    }
    expect(await exited).toBe(130);
    expect(err).toBe('reglookup: interrupted (SIGINT); nothing was imported\n');
    expect(count(env)).toBe(SAMPLE_RECORDS);
  });

  test('an invalid line reports every problem it has, the first as before', () => {
    const line = JSON.stringify({
      operation: 'Check',
      registration: 5,
      vehicle: { ABICode: 'x', RegistrationYear: 'nineteen' },
    });
    const file = write('several.ndjson', [line]);
    const r = runCli(['import', file], seeded());
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      `${file}:1: "registration" must be a string; vehicle.ABICode must be an integer; vehicle.RegistrationYear must be an integer\n`,
    );
  });

  test('export to a file that exists is refused as backup refuses it; --force overwrites for both', () => {
    const env = seeded();
    const there = write('there.ndjson', ['keep me']);
    const exp = runCli(['export', there], env);
    expect(exp.status).toBe(1);
    expect(exp.stderr).toBe(`reglookup: ${there} already exists; give a new file name, or --force to overwrite it\n`);
    expect(fs.readFileSync(there, 'utf8')).toBe('keep me\n');
    const bak = runCli(['backup', there], env);
    expect(bak.status).toBe(1);
    expect(bak.stderr).toBe(exp.stderr);

    expect(runCli(['export', '-q', '--force', there], env).status).toBe(0);
    expect(
      fs
        .readFileSync(there, 'utf8')
        .split('\n')
        .filter((l) => l !== ''),
    ).toHaveLength(SAMPLE_RECORDS);
    const copy = write('backup.db', ['keep me']);
    expect(runCli(['backup', '-q', '--force', copy], env).status).toBe(0);
    expect(count({ DATABASE_URL: `sqlite:${copy}` })).toBe(SAMPLE_RECORDS);
  });
});
