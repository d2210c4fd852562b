// The SQLite store's two files (docs/data.md, "Two files"), with other processes: a process of the
// earlier release (0.3) holding the one-file store open while this release would move its callers
// out, a move killed at any moment, and docs/data.md's shell examples (backup, restore, going back
// to 0.3) run as written. The in-process cases are in test/store/sqlite-layout.test.ts.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteStore } from '../../src/store/sqlite';
import { CLI } from '../helpers/cli';
import {
  accountRows,
  accountsOf,
  oldLayoutStore as oldLayoutAt,
  query,
  tablesIn,
  versionOf,
  keyed,
} from '../helpers/sqlite-layout';

jest.setTimeout(120_000);

const ROOT = path.resolve(__dirname, '../..');
/** The compiled store (test/helpers/build.js builds dist-test/ before the project runs). */
const COMPILED_STORE = path.join(path.dirname(CLI), 'store', 'sqlite');

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-layout-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

let n = 0;
const newPath = () => path.join(dir, `store-${++n}.db`);
const oldLayoutStore = (usageRows = 0) => oldLayoutAt(newPath(), usageRows);

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

describe('the SQLite store in two files, with other processes', () => {
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
    expect(await store.accounts.getAccount(createHash('sha256').update('alice').digest('hex'))).toMatchObject({
      credits: 40,
    });
    await store.close();
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
          `const { SqliteStore } = require(${JSON.stringify(COMPILED_STORE)}); console.log('opening'); new SqliteStore(${JSON.stringify(file)}); console.log('moved');`,
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
        // Moved, then keyed by the accounts file's step 2 (a transaction of its own), or not yet.
        expect([before, keyed(before)]).toContain(accountRows(accountsOf(file)));
      } else {
        expect(accountRows(file)).toBe(before);
      }
      const store = new SqliteStore(file);
      await store.close();
      expect(accountRows(accountsOf(file))).toBe(keyed(before));
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

/** The line of docs/data.md that holds `part`, whole (a message the docs quote). */
function docsLine(part: string): string {
  const line = fs
    .readFileSync(path.join(ROOT, 'docs/data.md'), 'utf8')
    .split('\n')
    .find((l) => l.includes(part));
  if (line === undefined) throw new Error(`docs/data.md has no line holding ${part}`);
  return line;
}

/** A block run by bash in `cwd`, `npx reglookup` being this checkout's command (compiled for the tests); its output. */
function runBlock(block: string, cwd: string): { status: number | null; stdout: string; stderr: string } {
  const npx = `npx() { shift; node ${JSON.stringify(CLI)} "$@"; }`;
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
    (JSON.parse(cli('users', 'list', '--json').stdout) as { name: string; credits: number | null }[]).map(
      (a) => `${a.name}:${a.credits}`,
    );
  const records = () => cli('export').stdout;

  test('a backup, then the restore, brings both files back: the records and the callers of the backup', () => {
    expect(cli('import', '-q', 'one.ndjson').status).toBe(0);
    expect(cli('users', 'add', 'alice', '--username', 'alice', '--credits', '5').status).toBe(0);
    const taken = runBlock(docsBlock('mkdir -p backups'), cwd);
    expect(taken.status).toBe(0);
    expect(fs.readdirSync(path.join(cwd, 'backups')).sort()).toEqual([
      'reglookup-2026-11-23.accounts.db',
      'reglookup-2026-11-23.db',
    ]);
    // After the backup: other records, another caller.
    expect(cli('import', '-q', '--replace-all', '--allow-shrink', 'two.ndjson').status).toBe(0);
    expect(cli('users', 'add', 'bob', '--username', 'bob').status).toBe(0);
    expect(records()).toMatch(/XY99ZZZ/);
    const restored = runBlock(docsBlock('rm -f data/reglookup.db-wal'), cwd);
    expect(restored.status).toBe(0);
    expect(callers()).toEqual(['alice:5']);
    expect(records()).toMatch(/^\{"operation":"Check","registration":"AB12CDE",.*\}\n$/);
  });

  test('going back to 0.3 is refused once the callers are keyed by a hash, changing nothing: a backup taken before is the way back', () => {
    expect(cli('import', '-q', 'one.ndjson').status).toBe(0);
    expect(cli('users', 'add', 'alice', '--username', 'alice-username-7f3e2a9c', '--credits', '5').status).toBe(0);
    const back = cli('migrate', '--to', '6');
    expect(back.status).toBe(1);
    expect(back.stderr.trim()).toBe(docsLine('keys its callers by a hash of their usernames, which'));
    const file = path.join(cwd, 'data/reglookup.db');
    expect(versionOf(file)).toBe(7);
    expect(fs.existsSync(accountsOf(file))).toBe(true);
    expect(callers()).toEqual(['alice:5']);
  });

  test('going back waits for every other process to close the store, then refuses, changing nothing', async () => {
    expect(cli('users', 'add', 'alice', '--username', 'alice', '--credits', '5').status).toBe(0);
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
