// A caller's username is its only credential (issue 45): `reglookup serve` writes it in no log
// line, whatever the transport and whatever the answer (found, not found, unknown username, rate
// limited, out of credit), and names the caller by its fingerprint instead (docs/operating.md,
// Logs: `sha256:` and the first 12 hex characters of SHA-256 of the username).

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

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-nouser-'));
  const env = { DATABASE_URL: `sqlite:${path.join(dir, 'db.sqlite')}` };
  for (const [u, args] of [
    [users.paying, ['--credits', '100']],
    [users.limited, ['--credits', '100', '--rate', '0.01']],
    [users.broke, ['--credits', '0']],
  ] as const)
    expect(runCli(['users', 'add', u, ...args], env).status).toBe(0);
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
  // The operator's side: the admin API names a caller by its username in the path.
  const adminUrl = /"url":"(http:\/\/[^"]+)\/admin\/"/.exec(served.output())?.[1];
  expect(adminUrl).toBeDefined();
  const admin = client(adminUrl as string, TOKEN);
  expect((await admin('GET', `/admin/api/users/${encodeURIComponent(users.paying)}`)).status).toBe(200);
  expect((await admin('GET', `/admin/api/users/${encodeURIComponent(users.unknown)}`)).status).toBe(404);
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
  }
  const outcomesLogged = new Set(access.map((a) => a.outcome));
  for (const o of ['ok', 'VEHICLE_NOT_FOUND', 'UNKNOWN_USERNAME', 'RATE_LIMITED', 'OUT_OF_CREDIT'])
    expect(outcomesLogged).toContain(o);
  const adminLines = lines.filter((l) => l.includes('"message":"admin request"')).join('\n');
  expect(adminLines).toContain(`/admin/api/users/${fp(users.paying)}`);
  expect(adminLines).toContain(`/admin/api/users/${fp(users.unknown)}`);
}, 60_000);
