// A caller's username is its only credential (issue 45): `reglookup serve` writes it in no log
// line, whatever the transport and whatever the answer (found, not found, unknown username, rate
// limited, out of credit), and names the caller by its fingerprint instead (docs/operating.md,
// Logs: `sha256:` and the first 12 hex characters of SHA-256 of the username) and its account's
// name (`-` for a username without one). Nor is it in any store file, a backup, the billing CSV,
// a users export, `users list`, or any admin API answer the console draws from (docs/security.md).

import { createHash, randomInt } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { client } from '../helpers/admin';
import { runCli, startServeProcess, type ServeProcess } from '../helpers/cli';
import { callAny, FIVE_TRANSPORTS } from '../helpers/json';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const random40 = () => Array.from({ length: 40 }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
/** The fingerprint as the docs define it, computed here independently of src/. */
const fp = (u: string) => `sha256:${createHash('sha256').update(u, 'utf8').digest('hex').slice(0, 12)}`;

const TOKEN = 'ops-token-5a4b3c2d1e0f9a8b7c6d';
let dir: string;
let served: ServeProcess;
const users = { paying: random40(), unknown: random40(), limited: random40(), broke: random40() };
/** The accounts' names: what logs, the console and the CSV show instead of the usernames. */
const names: Record<string, string> = { paying: 'acme-ltd', limited: 'slow-co', broke: 'broke-co' };
let env: Record<string, string>;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-nouser-'));
  env = { DATABASE_URL: `sqlite:${path.join(dir, 'db.sqlite')}` };
  for (const [who, args] of [
    ['paying', ['--credits', '100']],
    ['limited', ['--credits', '100', '--rate', '0.01']],
    ['broke', ['--credits', '0']],
  ] as const) {
    const r = runCli(['users', 'add', names[who], '--username', users[who], ...args], env);
    expect(r).toMatchObject({ status: 0 });
    expect(r.stdout + r.stderr).not.toContain(users[who]);
  }
  served = await startServeProcess({
    ...env,
    SAMPLE_DATA: 'true',
    USERNAME_POLICY: 'registered',
    RATE_LIMIT_BURST: '0',
    LOG_LEVEL: 'debug',
    ADMIN_PORT: '0',
    ADMIN_TOKENS: `ops:${TOKEN}`,
  });
}, 90_000);

afterAll(async () => {
  await served?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('users fingerprint prints the fingerprint the docs define', () => {
  const r = runCli(['users', 'fingerprint', users.paying], {});
  expect(r).toMatchObject({ status: 0, stdout: `${fp(users.paying)}\n` });
  expect(runCli(['users', 'fingerprint', 'demo'], {}).stdout).toBe('sha256:2a97516c354b\n');
});

test('lookups over the five transports log the fingerprint, never the username', async () => {
  for (const t of FIVE_TRANSPORTS)
    for (const [u, reg] of [
      [users.paying, 'RG11ABC'],
      [users.paying, 'ZZ99ZZZ'],
      [users.unknown, 'RG11ABC'],
      [users.limited, 'RG11ABC'],
      [users.limited, 'RG11ABC'],
      [users.broke, 'RG11ABC'],
    ])
      await callAny(served.base, t, 'Check', { RegistrationNumber: reg, username: u });
  // The operator's side: the admin API names a caller by its account's name, never by its username.
  const adminUrl = /"url":"(http:\/\/[^"]+)\/admin\/"/.exec(served.output())?.[1];
  expect(adminUrl).toBeDefined();
  const admin = client(adminUrl as string, TOKEN);
  expect((await admin('GET', `/admin/api/users/${names.paying}`)).status).toBe(200);
  expect((await admin('GET', `/admin/api/users/${encodeURIComponent(users.paying)}`)).status).toBe(404);
  await new Promise((r) => setTimeout(r, 300));

  const lines = served.output().split('\n');
  for (const u of Object.values(users)) {
    const leaking = lines.filter((l) => l.includes(u));
    expect(leaking).toEqual([]);
  }
  const access = lines.filter((l) => l.includes('"message":"request"')).map((l) => JSON.parse(l));
  for (const t of FIVE_TRANSPORTS) {
    const mine = access.filter((a) => a.transport === t);
    for (const u of Object.values(users)) expect(mine.filter((a) => a.caller === fp(u)).length).toBeGreaterThan(0);
    expect(mine.every((a) => !('username' in a))).toBe(true);
    // Each line names the account, or `-` for a username without one.
    for (const who of ['paying', 'limited', 'broke'] as const)
      expect(new Set(mine.filter((a) => a.caller === fp(users[who])).map((a) => a.account))).toEqual(
        new Set([names[who]]),
      );
    expect(new Set(mine.filter((a) => a.caller === fp(users.unknown)).map((a) => a.account))).toEqual(new Set(['-']));
  }
  const outcomesLogged = new Set(access.map((a) => a.outcome));
  for (const o of ['ok', 'VEHICLE_NOT_FOUND', 'UNKNOWN_USERNAME', 'RATE_LIMITED', 'OUT_OF_CREDIT'])
    expect(outcomesLogged).toContain(o);
  const adminLines = lines.filter((l) => l.includes('"message":"admin request"')).join('\n');
  expect(adminLines).toContain(`/admin/api/users/${fp(names.paying)}`);
}, 60_000);

test('no store file, backup, billing CSV, users export or list, admin API answer or console page holds a username', async () => {
  const adminUrl = /"url":"(http:\/\/[^"]+)\/admin\/"/.exec(served.output())?.[1] as string;
  const admin = client(adminUrl, TOKEN);
  const day = new Date().toISOString().slice(0, 10);
  const answers = [
    await admin('GET', '/admin/api/users'),
    await admin('GET', `/admin/api/users/${names.paying}`),
    await admin('GET', `/admin/api/users/${names.paying}/usage`),
    await admin('GET', `/admin/api/usage?from=${day}&to=${day}`),
    await admin('GET', `/admin/api/usage?from=${day}&to=${day}&format=csv`),
    await admin('GET', '/admin/api/audit'),
    await admin('GET', '/admin/'),
  ];
  for (const a of answers) expect(a.status === 200 ? 200 : a.text.slice(0, 300)).toBe(200);
  const csv = answers[4].text;
  // The billing CSV names the accounts: the paying caller's found lookup is on its name's row.
  expect(csv).toMatch(new RegExp(`^name,day,operation,found,not_found\r\n${names.paying},${day},Check,\\d+,\\d+`));

  const backup = path.join(dir, 'backup.sqlite');
  expect(runCli(['backup', backup], env)).toMatchObject({ status: 0 });
  const cli = [
    runCli(['users', 'list'], env),
    runCli(['users', 'list', '--json'], env),
    runCli(['users', 'export'], env),
    runCli(['users', 'usage', '--all', '--from', day, '--to', day, '--csv'], env),
  ];
  for (const r of cli) expect(r.status).toBe(0);
  expect(cli[0].stdout).toContain(names.paying);

  // The files as bytes: the store's two files with their logs, and every file of the backup.
  const files = fs.readdirSync(dir).map((f) => path.join(dir, f));
  expect(files.filter((f) => f.includes('backup')).length).toBeGreaterThanOrEqual(2);
  const texts = [
    ...answers.map((a) => a.text),
    ...cli.map((r) => r.stdout + r.stderr),
    ...files.filter((f) => fs.statSync(f).isFile()).map((f) => fs.readFileSync(f).toString('latin1')),
  ];
  for (const u of Object.values(users)) for (const t of texts) expect(t.includes(u)).toBe(false);
}, 60_000);
