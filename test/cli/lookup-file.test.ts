// `reglookup lookup --file` (docs/calling.md, "Batch jobs"): a CSV of rows in, the results CSV out, one row per
// input row in input order, run as a batch job by a running service and charged as the caller's own lookups. The
// caller is given in REGLOOKUP_USERNAME (docs/configuration.md), so that the credential is in no argument list.
// Expectations are written by hand from the sample data (RG11 ABC is held, ZZ99 ZZZ is not) and the docs' columns.

import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli, serve, type Served } from '../helpers/cli';

jest.setTimeout(120_000);

let dir: string;
let server: Served | undefined;
const username = randomBytes(30).toString('base64url').slice(0, 40);

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-lookup-file-'));
});
afterAll(async () => {
  await server?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a CSV in, the results CSV out in input order; found rows charged; the username in no argument', async () => {
  const env = { DATABASE_URL: `sqlite:${path.join(dir, 'store.db')}` };
  expect(runCli(['users', 'add', 'fleet', '--username', username, '--credits', '10'], env).status).toBe(0);
  server = await serve({ ...env, USERNAME_POLICY: 'registered' });
  const base = server.url.replace(/\/api\/reg\.asmx$/, '');
  const input = path.join(dir, 'plates.csv');
  // Row 3 is longer than a parameter may be (docs/security.md: at most 256 characters).
  const long = 'X'.repeat(300);
  fs.writeFileSync(input, `operation,registration\nCheck,RG11 ABC\nCheck,ZZ99 ZZZ\nCheck,${long}\nCheck,RG11ABC\n`);
  const out = path.join(dir, 'results.csv');

  const r = runCli(['lookup', '--file', input, '--out', out, '--url', base, '--quiet'], {
    ...env,
    REGLOOKUP_USERNAME: username,
  });
  expect(r.stderr).not.toContain(username);
  expect(r.stdout).not.toContain(username);
  expect(r.status).toBe(0);
  const rows = fs
    .readFileSync(out, 'utf8')
    .trim()
    .split(/\r?\n/)
    .map((l) => l.split(','));
  expect(rows[0].slice(0, 5)).toEqual(['row', 'operation', 'registration', 'state', 'code']);
  expect(rows.slice(1).map((c) => [c[0], c[2], c[4]])).toEqual([
    ['1', 'RG11 ABC', ''],
    ['2', 'ZZ99 ZZZ', 'VEHICLE_NOT_FOUND'],
    ['3', long, 'INVALID_PARAMETER'],
    ['4', 'RG11ABC', ''],
  ]);
  // Two found rows, two credits; nothing for the others.
  const list = JSON.parse(runCli(['users', 'list', '--json'], env).stdout) as { name: string; credits: number }[];
  expect(list.find((a) => a.name === 'fleet')?.credits).toBe(8);
});

test('without a username: refused before anything is sent, saying where to give it', () => {
  const input = path.join(dir, 'one.csv');
  fs.writeFileSync(input, 'operation,registration\nCheck,RG11 ABC\n');
  const r = runCli(['lookup', '--file', input, '--url', 'http://127.0.0.1:9', '--quiet'], {});
  expect(r.status).not.toBe(0);
  expect(r.stderr).toMatch(/REGLOOKUP_USERNAME/);
  expect(r.stderr).not.toMatch(/\n\s+at /);
});
