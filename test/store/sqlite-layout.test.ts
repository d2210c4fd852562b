// The SQLite store's two files (docs/data.md, "Two files"): the records in DATABASE_URL's file, the
// callers and everything written while serving in the accounts file beside it, so that an import's
// open transaction never holds up a charge. A store of the earlier layout (one file, schema version
// 6, as 0.3 leaves it) has its accounts moved out once, on first open, only when no other process
// has it open, and safely against a kill at any moment of the move.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SqliteStore } from '../../src/store/sqlite';
import { migrateSqlite, SQLITE_MIGRATIONS } from '../../src/store/migrations/sqlite';

jest.setTimeout(120_000);

const ROOT = path.resolve(__dirname, '../..');
const ACCOUNT_TABLES = ['accounts', 'usage', 'audit', 'idempotency', 'upstream_cache'];

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-layout-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

let n = 0;
const newPath = () => path.join(dir, `store-${++n}.db`);
/** docs/data.md: the accounts file is the store's name with `.accounts` before its extension. */
const accountsOf = (file: string) => file.replace(/\.db$/, '.accounts.db');

function query<T>(file: string, text: string): T[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(text).all() as T[];
  } finally {
    db.close();
  }
}

const tablesIn = (file: string) =>
  query<{ name: string }>(
    file,
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
  ).map((r) => r.name);
const versionOf = (file: string) => query<{ v: number }>(file, 'SELECT MAX(version) AS v FROM schema_version')[0].v;

/**
 * A store as 0.3 leaves it: one file at schema version 6, in WAL mode, holding records and every
 * account table, filled as that release fills them. `usageRows` pads the usage table (a long-lived store).
 */
function oldLayoutStore(usageRows = 0): string {
  const file = newPath();
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  migrateSqlite(db, 6);
  db.exec(`
INSERT INTO records (operation, registration, state, payload) VALUES ('Check', 'OLD1', '', '{"Description":"kept"}');
INSERT INTO accounts (username, credits, daily_limit, allow) VALUES ('alice', 40, 5, '10.0.0.0/8'), ('bob', NULL, NULL, '');
UPDATE accounts SET day = '2026-11-20', day_count = 3 WHERE username = 'alice';
INSERT INTO usage (username, day, operation, found, not_found) VALUES ('alice', '2026-11-20', 'Check', 3, 1);
INSERT INTO audit (at, actor, action, target, before, after) VALUES
  ('2026-11-01T00:00:00Z', 'cli:root', 'add', 'gone', NULL, '{}'),
  ('2026-11-19T10:00:00Z', 'ops', 'add', 'alice', NULL, '{"credits":40}'),
  ('2026-11-20T10:00:00Z', 'ops', 'credit', 'alice', '{"credits":40}', '{"credits":50,"amount":10}');
DELETE FROM audit WHERE target = 'gone';
INSERT INTO idempotency (key, fingerprint, result, created_at) VALUES ('k-1', 'fp-1', '{"balance":50}', '2026-11-20');
INSERT INTO upstream_cache (operation, registration, state, provider, fetched_at, payload) VALUES ('Check', 'UP1', '', 'dvla', 1700000000000, '{"Description":"fetched"}');
`);
  const pad = db.prepare(
    "INSERT INTO usage (username, day, operation, found, not_found) VALUES ('bob', ?, 'Check', 1, 0)",
  );
  db.transaction(() => {
    for (let i = 0; i < usageRows; i++) pad.run(`d${String(i).padStart(8, '0')}`);
  })();
  db.close();
  return file;
}

/** Every row of the account tables, as text: what a move must carry over whole. */
function accountRows(file: string): string {
  return ACCOUNT_TABLES.map((t) =>
    JSON.stringify(
      t === 'usage'
        ? query(
            file,
            "SELECT COUNT(*) AS n, SUM(found) AS found, MIN(day) AS first, MAX(day) AS last, SUM(username = 'bob') AS bob FROM usage",
          )
        : query(file, `SELECT * FROM ${t} ORDER BY 1, 2, 3`),
    ),
  ).join('\n');
}

/** A process of its own holding the file open (as a server of the earlier release does) until killed. */
function holdOpen(file: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const db = new (require('better-sqlite3'))(${JSON.stringify(file)}); db.prepare('SELECT COUNT(*) FROM records').get(); console.log('open'); setInterval(() => {}, 1000);`,
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve) => child.stdout.once('data', () => resolve(child)));
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('close', () => resolve());
    child.kill('SIGKILL');
  });

describe('the SQLite store in two files', () => {
  test('a new store is two files: records in the one DATABASE_URL names, the callers beside it', async () => {
    const file = newPath();
    const store = new SqliteStore(file);
    await store.accounts.putAccount({ username: 'ann', credits: 2 });
    await store.close();
    expect(tablesIn(file)).toEqual(['meta', 'records', 'schema_version']);
    expect(tablesIn(accountsOf(file))).toEqual(expect.arrayContaining(ACCOUNT_TABLES));
    expect(query(accountsOf(file), 'SELECT username, credits FROM accounts')).toEqual([
      { username: 'ann', credits: 2 },
    ]);
  });

  test('while an import holds the records file open in a transaction, charges, top-ups, audit entries and cached answers are written at once', async () => {
    const file = newPath();
    const server = new SqliteStore(file);
    const importer = new SqliteStore(file); // `reglookup import`, its own connection
    try {
      await server.accounts.putAccount({ username: 'payer', credits: 3 });
      const batch = await importer.beginImport({ replace: 'all' });
      await batch.put({ operation: 'Check', registration: 'NEW1', state: '', payload: '{"v":1}' });
      // Without the second file each of these waited for the import's lock, 5 s, and then failed.
      const t0 = Date.now();
      expect(await server.accounts.charge('payer', '2026-11-23', 'Check')).toEqual({
        ok: true,
        credits: 2,
        usedToday: 1,
      });
      expect(
        await server.admin.creditOnce({
          username: 'payer',
          delta: 5,
          key: 'top-up-1',
          fingerprint: 'f',
          actor: 'ops',
          at: '2026-11-23T10:00:00Z',
        }),
      ).toEqual({ result: { balance: 7 }, replayed: false });
      await server.cachePut({
        operation: 'Check',
        registration: 'UP2',
        state: '',
        provider: 'dvla',
        fetchedAt: 1,
        payload: '{}',
      });
      expect(Date.now() - t0).toBeLessThan(4000);
      // The import is not seen until it commits, and then whole.
      expect(await server.get({ operation: 'Check', registration: 'NEW1', state: '' })).toBeNull();
      await batch.commit();
      await new Promise((r) => setImmediate(r));
      expect(await server.get({ operation: 'Check', registration: 'NEW1', state: '' })).toEqual({ payload: '{"v":1}' });
      expect(await server.accounts.getAccount('payer')).toMatchObject({ credits: 7 });
    } finally {
      await importer.close();
      await server.close();
    }
  });

  test('a store of the one-file layout (0.3) has its accounts moved out on first open, every row and counter kept', async () => {
    const file = oldLayoutStore();
    const before = accountRows(file);
    const store = new SqliteStore(file);
    try {
      expect((await store.migrate()).applied.map((m) => m.version)).toEqual([7]);
      expect(accountRows(accountsOf(file))).toBe(before);
      expect(await store.get({ operation: 'Check', registration: 'OLD1', state: '' })).toEqual({
        payload: '{"Description":"kept"}',
      });
      expect(await store.accounts.getAccount('alice')).toEqual({
        username: 'alice',
        credits: 40,
        dailyLimit: 5,
        rate: null,
        allow: ['10.0.0.0/8'],
        enabled: true,
      });
      expect(await store.accounts.usage('alice', '2026-11-01')).toEqual([
        { username: 'alice', day: '2026-11-20', operation: 'Check', found: 3, notFound: 1 },
      ]);
      // The same Idempotency-Key is still a replay, not a second top-up.
      expect(
        await store.admin.creditOnce({
          username: 'alice',
          delta: 10,
          key: 'k-1',
          fingerprint: 'fp-1',
          actor: 'ops',
          at: '2026-11-23T00:00:00Z',
        }),
      ).toEqual({ result: { balance: 50 }, replayed: true });
      expect(await store.cacheGet({ operation: 'Check', registration: 'UP1', state: '' })).toMatchObject({
        provider: 'dvla',
        payload: '{"Description":"fetched"}',
      });
      // Audit ids keep growing past the pruned entry's (id 1): a new entry is 4, not 3.
      await store.admin.addAudit({
        at: '2026-11-23T00:00:00Z',
        actor: 'ops',
        action: 'disable',
        target: 'bob',
        before: null,
        after: null,
      });
      expect((await store.admin.audit(0, 10)).map((e) => e.id)).toEqual([4, 3, 2]);
    } finally {
      await store.close();
    }
    expect(tablesIn(file)).toEqual(['meta', 'records', 'schema_version']);
    expect(versionOf(file)).toBe(7);
    expect(versionOf(accountsOf(file))).toBe(1);
    // The moved file has the schema of a new store's accounts file.
    const fresh = newPath();
    await new SqliteStore(fresh).close();
    const schema = (f: string) =>
      query(f, "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name");
    expect(schema(accountsOf(file))).toEqual(schema(accountsOf(fresh)));
  });

  test('the move waits for a process of the earlier release holding the file, then refuses, changing nothing; once it is gone the move runs', async () => {
    const file = oldLayoutStore();
    const before = accountRows(file);
    const old = await holdOpen(file);
    try {
      const t0 = Date.now();
      expect(() => new SqliteStore(file)).toThrow(
        new RegExp(
          `cannot move the callers to their own file .*another process has ${file.replace(/[.]/g, '\\.')} open`,
        ),
      );
      expect(Date.now() - t0).toBeGreaterThanOrEqual(9000);
      expect(fs.existsSync(accountsOf(file))).toBe(false);
      expect(versionOf(file)).toBe(6);
      expect(accountRows(file)).toBe(before);
    } finally {
      await stop(old);
    }
    const store = new SqliteStore(file);
    expect(await store.accounts.getAccount('alice')).toMatchObject({ credits: 40 });
    await store.close();
  });

  test('a process of the earlier release started after the move refuses the file instead of serving it without callers', async () => {
    const file = oldLayoutStore();
    await new SqliteStore(file).close();
    // 0.3 opens a file by bringing it to its six steps, and refuses a newer one.
    const db = new Database(file);
    try {
      expect(() => migrateSqlite(db, Infinity, SQLITE_MIGRATIONS.slice(0, 6))).toThrow(
        /schema version 7, newer than this release knows \(6\)/,
      );
    } finally {
      db.close();
    }
  });

  test("copies left by a move that was stopped (a partial file, an accounts file beside an old-layout store) are replaced by the records file's tables", async () => {
    const file = oldLayoutStore();
    const before = accountRows(file);
    // An accounts file holding something else (older accounts) and a partial copy of a stopped move.
    const otherFile = newPath();
    const other = new SqliteStore(otherFile);
    await other.accounts.putAccount({ username: 'stale', credits: 1 });
    await other.close();
    fs.copyFileSync(accountsOf(otherFile), accountsOf(file));
    fs.writeFileSync(`${accountsOf(file)}.partial-999999`, 'not a database');
    const store = new SqliteStore(file);
    try {
      expect(await store.accounts.getAccount('stale')).toBeNull();
      expect(await store.accounts.getAccount('alice')).toMatchObject({ credits: 40 });
    } finally {
      await store.close();
    }
    expect(accountRows(accountsOf(file))).toBe(before);
  });

  test('a new records file beside an accounts file keeps the callers (the records were removed to start again)', async () => {
    const file = newPath();
    const first = new SqliteStore(file);
    await first.accounts.putAccount({ username: 'stays', credits: 9 });
    await first.close();
    for (const s of ['', '-wal', '-shm']) fs.rmSync(`${file}${s}`, { force: true });
    const store = new SqliteStore(file);
    try {
      expect(await store.isEmpty()).toBe(true);
      expect(await store.accounts.getAccount('stays')).toMatchObject({ credits: 9 });
    } finally {
      await store.close();
    }
  });

  test('a records file without its accounts file is refused, saying which file is missing and what to do', async () => {
    const file = newPath();
    await new SqliteStore(file).close();
    fs.rmSync(accountsOf(file));
    expect(() => new SqliteStore(file)).toThrow(
      new RegExp(
        `the accounts file ${accountsOf(file).replace(/[.]/g, '\\.')} is missing .*put back the one from your backup`,
      ),
    );
    expect(fs.existsSync(accountsOf(file))).toBe(false);
  });

  test('killed at any moment of the move, the store is whole in one layout or the other, and the next open finishes it', async () => {
    const template = oldLayoutStore(200_000);
    const before = accountRows(template);
    // A process opening the store, saying when it begins: the kills are timed from there.
    const openIn = (file: string) => {
      const child = spawn(
        process.execPath,
        [
          '-e',
          `const { SqliteStore } = require('./dist/store/sqlite'); console.log('opening'); new SqliteStore(${JSON.stringify(file)}); console.log('moved');`,
        ],
        { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const opening = new Promise<number>((resolve) => child.stdout.once('data', () => resolve(Date.now())));
      return { child, opening };
    };
    // How long a whole move takes here, to spread the kills over it.
    const timing = path.join(dir, 'timing.db');
    fs.copyFileSync(template, timing);
    const measured = openIn(timing);
    const closed = new Promise((resolve) => measured.child.once('close', resolve));
    const began = await measured.opening;
    await closed;
    const whole = Date.now() - began;
    for (const share of [0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99]) {
      const file = newPath();
      fs.copyFileSync(template, file);
      const { child, opening } = openIn(file);
      await opening;
      await new Promise((r) => setTimeout(r, whole * share));
      await stop(child);
      const moved = versionOf(file) === 7;
      if (moved) {
        expect(tablesIn(file)).not.toContain('accounts');
        expect(accountRows(accountsOf(file))).toBe(before);
      } else {
        expect(accountRows(file)).toBe(before);
      }
      const store = new SqliteStore(file);
      await store.close();
      expect(accountRows(accountsOf(file))).toBe(before);
      expect(query(file, 'SELECT registration FROM records')).toEqual([{ registration: 'OLD1' }]);
    }
  });
});

/** The shell block of docs/data.md that begins with `first`, as written there. */
function docsBlock(first: string): string {
  const text = fs.readFileSync(path.join(ROOT, 'docs/data.md'), 'utf8');
  const block = [...text.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((m) => m[1]).find((b) => b.startsWith(first));
  if (block === undefined) throw new Error(`docs/data.md has no sh block beginning ${first}`);
  return block;
}

/** A block run by bash in `cwd`, `npx reglookup` being this checkout's command (its dist/); its output. */
function runBlock(block: string, cwd: string): { status: number | null; stdout: string; stderr: string } {
  const npx = `npx() { shift; node ${JSON.stringify(path.join(ROOT, 'bin/reglookup.js'))} "$@"; }`;
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  const r = spawnSync('bash', ['-ec', `${npx}\n${block}`], { cwd, env, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("docs/data.md's examples for the two files, on the default DATABASE_URL (sqlite:data/reglookup.db)", () => {
  let cwd: string;
  const cli = (...args: string[]) => runBlock(`npx reglookup ${args.map((a) => `'${a}'`).join(' ')}`, cwd);
  beforeEach(() => {
    cwd = fs.mkdtempSync(path.join(dir, 'docs-'));
    fs.writeFileSync(
      path.join(cwd, 'one.ndjson'),
      '{"operation":"Check","registration":"AB12CDE","vehicle":{"Description":"FORD FOCUS"}}\n',
    );
    fs.writeFileSync(
      path.join(cwd, 'two.ndjson'),
      '{"operation":"Check","registration":"XY99ZZZ","vehicle":{"Description":"VW GOLF"}}\n',
    );
  });
  const callers = () =>
    (JSON.parse(cli('users', 'list', '--json').stdout) as { username: string; credits: number | null }[]).map(
      (a) => `${a.username}:${a.credits}`,
    );
  const records = () => cli('export').stdout;

  test('a backup, then the restore, brings both files back: the records and the callers of the backup', () => {
    expect(cli('import', '-q', 'one.ndjson').status).toBe(0);
    expect(cli('users', 'add', 'alice', '--credits', '5').status).toBe(0);
    const taken = runBlock(docsBlock('mkdir -p backups'), cwd);
    expect(taken.status).toBe(0);
    expect(fs.readdirSync(path.join(cwd, 'backups')).sort()).toEqual([
      'reglookup-2026-11-23.accounts.db',
      'reglookup-2026-11-23.db',
    ]);
    // After the backup: other records, another caller.
    expect(cli('import', '-q', '--replace-all', '--allow-shrink', 'two.ndjson').status).toBe(0);
    expect(cli('users', 'add', 'bob').status).toBe(0);
    expect(records()).toMatch(/XY99ZZZ/);
    const restored = runBlock(docsBlock('rm -f data/reglookup.db-wal'), cwd);
    expect(restored.status).toBe(0);
    expect(callers()).toEqual(['alice:5']);
    expect(records()).toMatch(/^\{"operation":"Check","registration":"AB12CDE",.*\}\n$/);
  });

  test('going back to 0.3: the callers back in the one file, which the six steps of 0.3 open as theirs; this release moves them out again', () => {
    expect(cli('import', '-q', 'one.ndjson').status).toBe(0);
    expect(cli('users', 'add', 'alice', '--credits', '5').status).toBe(0);
    const block = docsBlock('npx reglookup migrate --to 6');
    const said = block
      .split('\n')
      .filter((l) => l.startsWith('# '))
      .map((l) => l.slice(2));
    const back = runBlock(block, cwd);
    expect(back.stderr).toBe('');
    expect(back.stdout.trim().split('\n')).toEqual(said);
    const file = path.join(cwd, 'data/reglookup.db');
    expect(fs.existsSync(accountsOf(file))).toBe(false);
    expect(versionOf(file)).toBe(6);
    const db = new Database(file);
    try {
      expect(migrateSqlite(db, Infinity, SQLITE_MIGRATIONS.slice(0, 6))).toEqual({ applied: [], version: 6 });
      expect(db.prepare('SELECT username, credits FROM accounts').all()).toEqual([{ username: 'alice', credits: 5 }]);
    } finally {
      db.close();
    }
    expect(runBlock(block, cwd).stdout).toMatch(/schema version 6, nothing to take back/);
    // This release again: the callers move out once more, with their credits.
    expect(callers()).toEqual(['alice:5']);
    expect(fs.existsSync(accountsOf(file))).toBe(true);
  });

  test('going back waits for every other process to close the store, then refuses, changing nothing', async () => {
    expect(cli('users', 'add', 'alice', '--credits', '5').status).toBe(0);
    const file = path.join(cwd, 'data/reglookup.db');
    const server = await holdOpen(file);
    try {
      const back = cli('migrate', '--to', '6');
      expect(back.status).toBe(1);
      expect(back.stderr).toMatch(
        /^reglookup: cannot move the callers back into data\/reglookup\.db: another process has data\/reglookup\.db open \(the service, or one of its commands\); stop it, then run this again \(nothing was changed\)\n$/,
      );
    } finally {
      await stop(server);
    }
    expect(versionOf(file)).toBe(7);
    expect(callers()).toEqual(['alice:5']);
  });
});
