// The command line beside the admin API (issue 27, 3 and 8): `reglookup users` changes are audited
// as cli:<user>; `reglookup audit` reads the log; `reglookup users usage --all --from --to --csv`
// gives every caller's usage for an invoice run, the same rows as GET /admin/api/usage.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../../src/store/open';
import { runCli } from '../helpers/cli';
import { client, startAdmin, TOKENS } from '../helpers/admin';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

// Each command is a process of its own: slow on a busy machine.
jest.setTimeout(180_000);

let dir: string;
let env: Record<string, string>;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-admin-cli-'));
  env = { DATABASE_URL: `sqlite:${path.join(dir, 'store.db')}` };
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

test('users add / credit / disable are audited as cli:<user>; reglookup audit lists them newest first', () => {
  expect(runCli(['users', 'add', 'carol', '--username', 'carol', '--credits', '5'], env).status).toBe(0);
  expect(runCli(['users', 'credit', 'carol', '10'], env).stdout).toBe('carol: 15 credit(s) left\n');
  expect(runCli(['users', 'disable', 'carol'], env).status).toBe(0);
  const r = runCli(['audit', '--json'], env);
  expect(r.status).toBe(0);
  const entries = JSON.parse(r.stdout) as {
    actor: string;
    action: string;
    target: string;
    before: unknown;
    after: unknown;
  }[];
  expect(entries.map((e) => e.action)).toEqual(['disable', 'credit', 'add']);
  expect(entries[0].actor).toBe(`cli:${os.userInfo().username}`);
  expect(entries[1]).toMatchObject({ target: 'carol', before: { credits: 5 }, after: { credits: 15, amount: 10 } });
  const text = runCli(['audit', '--limit', '1'], env);
  expect(text.stdout.trim().split('\n')).toHaveLength(1);
  expect(text.stdout).toMatch(/disable "carol"/);
  expect(runCli(['audit', '--limit', 'lots'], env)).toMatchObject({
    status: 1,
    stderr: expect.stringContaining('--limit'),
  });
});

test('users usage --all --from --to --csv: every caller, the same rows as the admin API', async () => {
  const store = openStore(env.DATABASE_URL);
  await store.accounts.addAccount({ username: key('dave'), name: 'dave' });
  await store.accounts.addUsage([
    { username: key('carol'), day: '2026-03-01', operation: 'Check', found: 3, notFound: 1 },
    { username: key('dave'), day: '2026-03-02', operation: 'CheckNorway', found: 2, notFound: 0 },
    { username: key('dave'), day: '2026-04-01', operation: 'Check', found: 9, notFound: 9 },
  ]);
  const admin = await startAdmin(store);
  try {
    const csv = runCli(['users', 'usage', '--all', '--from', '2026-03-01', '--to', '2026-03-31', '--csv'], env);
    expect(csv.status).toBe(0);
    expect(csv.stdout).toBe(
      'name,day,operation,found,not_found\r\ncarol,2026-03-01,Check,3,1\r\ndave,2026-03-02,CheckNorway,2,0\r\n',
    );
    const api = await client(admin.url, TOKENS[1].token)(
      'GET',
      '/admin/api/usage?from=2026-03-01&to=2026-03-31&format=csv',
    );
    expect(api.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(api.text).toBe(csv.stdout);
    const json = await client(admin.url, TOKENS[1].token)('GET', '/admin/api/usage?from=2026-03-01&to=2026-03-31');
    expect(json.json.usage).toEqual([
      { name: 'carol', day: '2026-03-01', operation: 'Check', found: 3, notFound: 1 },
      { name: 'dave', day: '2026-03-02', operation: 'CheckNorway', found: 2, notFound: 0 },
    ]);
    const backwards = await client(admin.url, TOKENS[1].token)('GET', '/admin/api/usage?from=2026-03-31&to=2026-03-01');
    expect([backwards.status, backwards.json.message]).toEqual([400, expect.stringContaining('before')]);
    expect(
      (await client(admin.url, TOKENS[1].token)('GET', '/admin/api/usage?from=2026-02-30&to=2026-03-01')).status,
    ).toBe(400);
  } finally {
    await admin.close();
    await store.close();
  }
  expect(runCli(['users', 'usage', '--all', '--from', '2026-03-01'], env)).toMatchObject({
    status: 1,
    stderr: expect.stringContaining('--to'),
  });
  expect(runCli(['users', 'usage', '--all', '--from', '2026-13-01', '--to', '2026-12-01'], env)).toMatchObject({
    status: 1,
    stderr: expect.stringContaining('--from must be a UTC day'),
  });
  expect(runCli(['users', 'usage'], env)).toMatchObject({ status: 1, stderr: expect.stringContaining('--all') });
});

test('a spreadsheet formula in a name stays text in the CSV', async () => {
  // New names hold no = (accounts/username.ts); a name taken from a username by the migration may.
  const store = openStore(env.DATABASE_URL);
  await store.accounts.addAccount({ username: key('formula'), name: '=HYPERLINK("x")' });
  await store.accounts.addUsage([
    { username: key('formula'), day: '2025-01-01', operation: 'Check', found: 1, notFound: 0 },
  ]);
  await store.close();
  const csv = runCli(['users', 'usage', '--all', '--from', '2025-01-01', '--to', '2025-01-01', '--csv'], env);
  expect(csv.stdout.split('\r\n')[1]).toBe(`"'=HYPERLINK(""x"")",2025-01-01,Check,1,0`);
});
