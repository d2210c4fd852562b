// Moving house (issue 27, 8): `reglookup users export` then `users import` carries every caller's
// settings, credits, allow-list, enabled flag and usage from SQLite to PostgreSQL (and to another
// SQLite file); importing the file again counts no usage twice.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../../src/store/open';
import { runCli } from '../helpers/cli';
import { describeSqlite } from '../helpers/postgres';
import { describeStores } from '../helpers/stores';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

// Each command is a process of its own: slow on a busy machine.
jest.setTimeout(180_000);

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-move-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describeStores('SQLite -> %s', (kind) => {
  test('callers and usage arrive whole, by key and name; a second import adds no usage', async () => {
    const from = `sqlite:${path.join(dir, `old-${kind.name}.db`)}`;
    const old = openStore(from);
    await old.accounts.addAccount({
      username: key('acme-live-7f3e2a9c1d4b'),
      name: 'acme',
      prefix: 'acme-l',
      credits: 42,
      dailyLimit: 100,
      rate: 0.5,
      allow: ['10.0.0.0/8', '2001:db8::/32'],
      enabled: false,
    });
    await old.accounts.addAccount({ username: key('free-caller-0a1b2c3d4e'), name: 'free', prefix: 'free-c' });
    await old.accounts.addUsage([
      { username: key('acme-live-7f3e2a9c1d4b'), day: '2026-01-02', operation: 'Check', found: 7, notFound: 2 },
      { username: key('free-caller-0a1b2c3d4e'), day: '2026-01-03', operation: 'CheckUSA', found: 1, notFound: 0 },
    ]);
    await old.close();
    const file = path.join(dir, 'callers.ndjson');
    const exported = runCli(['users', 'export', file], { DATABASE_URL: from });
    expect(exported).toMatchObject({ status: 0, stderr: 'exported 2 caller(s), 2 usage row(s)\n' });

    const to = kind.url();
    expect(runCli(['users', 'import', file], { DATABASE_URL: to })).toMatchObject({
      status: 0,
      stdout: 'imported 2 caller(s) (2 new), 2 usage row(s)\n',
    });
    expect(runCli(['users', 'import', file], { DATABASE_URL: to })).toMatchObject({
      status: 0,
      stdout: 'imported 2 caller(s) (0 new), 0 usage row(s)\n',
    });
    const moved = openStore(to);
    try {
      expect(await moved.accounts.getAccount(key('acme-live-7f3e2a9c1d4b'))).toEqual({
        username: key('acme-live-7f3e2a9c1d4b'),
        name: 'acme',
        prefix: 'acme-l',
        keyUntil: null,
        weak: null,
        credits: 42,
        dailyLimit: 100,
        rate: 0.5,
        allow: ['10.0.0.0/8', '2001:db8::/32'],
        enabled: false,
      });
      expect(await moved.accounts.getAccountByName('free')).toMatchObject({
        username: key('free-caller-0a1b2c3d4e'),
        credits: null,
        enabled: true,
      });
      expect(await moved.accounts.usage(key('acme-live-7f3e2a9c1d4b'), '2026-01-01')).toEqual([
        {
          username: key('acme-live-7f3e2a9c1d4b'),
          day: '2026-01-02',
          operation: 'Check',
          found: 7,
          notFound: 2,
        },
      ]);
    } finally {
      await moved.close();
    }
  });

  test('a file of the release before keys (usernames in clear) is imported hashed: the usernames kept nowhere', async () => {
    const file = path.join(dir, `clear-${kind.name}.ndjson`);
    fs.writeFileSync(
      file,
      [
        '{"caller":{"username":"acme-live-7f3e2a9c1d4b","credits":5,"dailyLimit":null,"rate":null,"allow":[],"enabled":true}}',
        '{"usage":{"username":"acme-live-7f3e2a9c1d4b","day":"2026-01-02","operation":"Check","found":3,"notFound":0}}',
      ].join('\n') + '\n',
    );
    const to = kind.url();
    expect(runCli(['users', 'import', file], { DATABASE_URL: to })).toMatchObject({
      status: 0,
      stdout: 'imported 1 caller(s) (1 new), 1 usage row(s)\n',
    });
    // Named as the store's upgrade names them (docs/callers.md): the prefix (a quarter of 22 characters: 5) and the
    // key's start.
    const k = key('acme-live-7f3e2a9c1d4b');
    const listed = runCli(['users', 'list', '--json'], { DATABASE_URL: to });
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ name: `acme--${k.slice(0, 12)}`, prefix: 'acme-', credits: 5 }),
    ]);
    const exported = runCli(['users', 'export', '-'], { DATABASE_URL: to });
    expect(exported.stdout).toContain(`"key":"${k}"`);
    for (const out of [listed.stdout, exported.stdout, runCli(['audit', '--json'], { DATABASE_URL: to }).stdout])
      expect(out).not.toContain('acme-live-7f3e2a9c1d4b');
  });
});

describeSqlite('users export and import', () => {
  test('`-` is standard output for export and standard input for import, as for records; no file named "-" is written', async () => {
    // The commands run in this process's working folder: a file named "-" would land there.
    const dash = path.resolve('-');
    expect(fs.existsSync(dash)).toBe(false);
    const from = `sqlite:${path.join(dir, 'dash-from.db')}`;
    const to = `sqlite:${path.join(dir, 'dash-to.db')}`;
    expect(
      runCli(['users', 'add', 'dash', '--username', 'dash', '--credits', '7'], { DATABASE_URL: from }).status,
    ).toBe(0);
    try {
      const users = runCli(['users', 'export', '-'], { DATABASE_URL: from });
      expect(users).toMatchObject({ status: 0, stderr: 'exported 1 caller(s), 0 usage row(s)\n' });
      expect(users.stdout).toContain('"name":"dash"');
      expect(runCli(['users', 'import', '-'], { DATABASE_URL: to }, users.stdout)).toMatchObject({
        status: 0,
        stdout: 'imported 1 caller(s) (1 new), 0 usage row(s)\n',
      });
      const moved = openStore(to);
      expect(await moved.accounts.getAccountByName('dash')).toMatchObject({ username: key('dash'), credits: 7 });
      await moved.close();
      // Records: one imported, then written to stdout.
      const line = '{"operation":"Check","registration":"DASH1","vehicle":{"Description":"DASH CAR"}}\n';
      expect(runCli(['import', '-', '--quiet'], { DATABASE_URL: from }, line).status).toBe(0);
      const records = runCli(['export', '-', '--quiet'], { DATABASE_URL: from });
      expect(records).toMatchObject({ status: 0, stdout: line });
    } finally {
      expect(fs.existsSync(dash)).toBe(false);
    }
  });

  test('a bad line: every problem named with its line, nothing imported', () => {
    const file = path.join(dir, 'bad.ndjson');
    fs.writeFileSync(
      file,
      '{"caller":{"username":"ok","credits":1,"dailyLimit":null,"rate":null,"allow":[],"enabled":true}}\n{"caller":{"username":"neg","credits":-1,"dailyLimit":null,"rate":null,"allow":[],"enabled":true}}\nnot json\n',
    );
    const to = `sqlite:${path.join(dir, 'bad.db')}`;
    const r = runCli(['users', 'import', file], { DATABASE_URL: to });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/line 2: caller\.credits/);
    expect(r.stderr).toMatch(/line 3: not JSON/);
    expect(fs.existsSync(path.join(dir, 'bad.db'))).toBe(false);
  });
});
