// `reglookup users ...`: every subcommand, the bad inputs the issue names, and a running server that
// sees the changes. Accounts are known by name; a username is given (--username) or generated, and
// printed only when it is made (docs/callers.md). Commands run in this process (as src/cli.ts
// registers them) with the exit status captured. (As a process of its own, the status reaching the
// shell: test/cli/cli.test.ts.)

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { registerUsers } from '../../src/cli/users';
import { SqliteStore } from '../../src/store/sqlite';
import { call } from '../helpers/call';
import { startServer } from '../helpers/server';

interface Run {
  code: number;
  out: string;
  err: string;
}

class Exit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

let dir: string;
let db: string;
const savedEnv = { ...process.env };

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-users-'));
  db = path.join(dir, 'users.db');
  process.env.DATABASE_URL = `sqlite:${db}`;
  process.env.RATE_LIMIT = '10';
});
afterAll(() => {
  process.env = savedEnv;
  fs.rmSync(dir, { recursive: true, force: true });
});

async function users(...args: string[]): Promise<Run> {
  let out = '';
  let err = '';
  const write = (sink: 'out' | 'err') => (chunk: string | Uint8Array) => {
    if (sink === 'out') out += String(chunk);
    else err += String(chunk);
    return true;
  };
  const spies = [
    jest.spyOn(process.stdout, 'write').mockImplementation(write('out')),
    jest.spyOn(process.stderr, 'write').mockImplementation(write('err')),
    jest.spyOn(process, 'exit').mockImplementation(((code?: number) => {
      throw new Exit(code ?? 0);
    }) as typeof process.exit),
  ];
  const program = new Command().name('reglookup').exitOverride();
  program.configureOutput({ writeOut: (s) => (out += s), writeErr: (s) => (err += s) });
  registerUsers(program);
  let code = 0;
  try {
    await program.parseAsync(['users', ...args], { from: 'user' });
  } catch (e) {
    if (e instanceof Exit) code = e.code;
    else if (e instanceof CommanderError) code = e.exitCode;
    else throw e;
  } finally {
    for (const s of spies) s.mockRestore();
  }
  return { code, out, err };
}

async function ok(...args: string[]): Promise<string> {
  const r = await users(...args);
  expect({ args, code: r.code, err: r.err }).toEqual({ args, code: 0, err: expect.any(String) });
  return r.out;
}

async function refused(pattern: RegExp, ...args: string[]): Promise<void> {
  const r = await users(...args);
  expect({ args, code: r.code }).toEqual({ args, code: 1 });
  expect(r.err).toMatch(pattern);
}

/** A username for the account `name`: 26 characters, so its prefix is its first 6. */
const secret = (name: string) => `${name}-username-7f3e2a9c1d4b`.slice(-26);

test('add and list: the table and --json show every setting, by name and prefix, never the username', async () => {
  const alice = await users('add', 'alice', '--username', secret('alice'));
  expect(alice.out).toMatch(/added alice/);
  expect(alice.out + alice.err).not.toContain(secret('alice'));
  await ok(
    'add',
    'bob',
    '--username',
    secret('bob'),
    '--credits',
    '1000',
    '--daily-limit',
    '200',
    '--rate',
    '2',
    '--allow',
    '10.0.0.0/8,2001:db8::/32',
  );
  const table = await ok('list');
  expect(table).not.toContain(secret('bob'));
  const lines = table.trimEnd().split('\n');
  expect(lines[0]).toMatch(/^NAME\s+PREFIX\s+ENABLED\s+CREDITS\s+USED TODAY\s+DAILY LIMIT\s+RATE\s+ALLOW$/);
  expect(lines.find((l) => l.startsWith('alice'))).toMatch(
    new RegExp(
      `^alice\\s+${secret('alice').slice(0, 6)}…\\s+yes\\s+unlimited\\s+0\\s+none\\s+default \\(10/s\\)\\s+any$`,
    ),
  );
  expect(lines.find((l) => l.startsWith('bob'))).toMatch(
    /^bob\s+\S+…\s+yes\s+1000\s+0\s+200\s+2\/s\s+10\.0\.0\.0\/8,2001:db8::\/32$/,
  );
  const json = JSON.parse(await ok('list', '--json'));
  expect(json).toContainEqual({
    name: 'bob',
    prefix: secret('bob').slice(0, 6),
    enabled: true,
    credits: 1000,
    usedToday: 0,
    dailyLimit: 200,
    rate: 2,
    allow: ['10.0.0.0/8', '2001:db8::/32'],
  });
});

test('add --generate prints a new 128-bit username, different every time, once', async () => {
  const a = (await ok('add', 'gen-a', '--generate', '--credits', '5')).trim();
  const b = (await ok('add', 'gen-b', '--generate')).trim();
  expect(a).toMatch(/^[0-9a-f]{32}$/);
  expect(b).toMatch(/^[0-9a-f]{32}$/);
  expect(a).not.toBe(b);
  const list = await ok('list', '--json');
  expect(list).not.toContain(a);
  expect(JSON.parse(list)).toContainEqual(
    expect.objectContaining({ name: 'gen-a', prefix: a.slice(0, 6), credits: 5 }),
  );
  await refused(/not both/, 'add', 'carol', '--generate', '--username', secret('carol'));
  await refused(/--generate/, 'add', 'carol');
});

test('set changes only what it is given, and takes unlimited, none, default and any', async () => {
  await ok('add', 'sam', '--generate', '--credits', '10', '--daily-limit', '5', '--rate', '3', '--allow', '10.0.0.1');
  expect(await ok('set', 'sam', '--credits', '20')).toMatch(
    /credits: 20, daily limit: 5, rate: 3\/s, allow: 10\.0\.0\.1/,
  );
  expect(
    await ok('set', 'sam', '--credits', 'unlimited', '--daily-limit', 'none', '--rate', 'none', '--allow', 'any'),
  ).toMatch(/credits: unlimited, daily limit: none, rate: none, allow: any/);
  expect(await ok('set', 'sam', '--rate', 'default')).toMatch(/rate: default/);
  expect(await ok('set', 'sam', '--rate', '0.5')).toMatch(/rate: 0\.5\/s/);
});

test('credit adds, and a negative number takes away but never below 0', async () => {
  await ok('add', 'cred', '--generate', '--credits', '10');
  expect(await ok('credit', 'cred', '5')).toMatch(/cred: 15 credit/);
  expect(await ok('credit', 'cred', '-7')).toMatch(/cred: 8 credit/);
  expect(await ok('credit', 'cred', '-100')).toMatch(/cred: 0 credit/);
  await refused(/unlimited credits/, 'credit', 'alice', '5');
  await refused(/whole number/, 'credit', 'cred', '1.5');
  await refused(/whole number/, 'credit', 'cred', 'ten');
});

test('disable, enable and remove', async () => {
  await ok('add', 'dave', '--generate');
  expect(await ok('disable', 'dave')).toMatch(/disabled dave/);
  expect(JSON.parse(await ok('list', '--json'))).toContainEqual(
    expect.objectContaining({ name: 'dave', enabled: false }),
  );
  expect(await ok('enable', 'dave')).toMatch(/enabled dave/);
  expect(JSON.parse(await ok('list', '--json'))).toContainEqual(
    expect.objectContaining({ name: 'dave', enabled: true }),
  );
  expect(await ok('remove', 'dave')).toMatch(/removed dave/);
  expect(JSON.parse(await ok('list', '--json')).map((a: { name: string }) => a.name)).not.toContain('dave');
});

test('bad usernames and names are refused: empty, tab, 300 characters, spaces around', async () => {
  await refused(/cannot be empty/, 'add', 'u1', '--username', '');
  await refused(/control characters/, 'add', 'u2', '--username', 'tab\tbed');
  await refused(/control characters/, 'add', 'u3', '--username', 'line\nbreak');
  await refused(/at most 256 characters/, 'add', 'u4', '--username', 'x'.repeat(300));
  await refused(/spaces/, 'add', 'u5', '--username', ' padded ');
  await refused(/a name cannot be empty/, 'add', '', '--generate');
  await refused(/a name holds letters, digits/, 'add', 'two words', '--generate');
  await refused(/a name is at most 64 characters/, 'add', 'n'.repeat(65), '--generate');
  await ok('add', 'u6', '--username', 'y'.repeat(256));
  const names = JSON.parse(await ok('list', '--json')).map((a: { name: string }) => a.name);
  for (const n of ['u1', 'u2', 'u3', 'u4', 'u5']) expect(names).not.toContain(n);
  expect(names).toContain('u6');
});

test('bad numbers and addresses, unknown names, existing names, and nothing to set are errors with exit status 1', async () => {
  await ok('add', 'erin', '--username', secret('erin'));
  await refused(/--credits/, 'add', 'f1', '--generate', '--credits', '-5');
  await refused(/--credits/, 'add', 'f2', '--generate', '--credits', 'lots');
  await refused(/--daily-limit/, 'add', 'f3', '--generate', '--daily-limit', '0');
  await refused(/--daily-limit/, 'add', 'f4', '--generate', '--daily-limit', '1e3');
  await refused(/--rate/, 'add', 'f5', '--generate', '--rate', 'fast');
  await refused(/--rate/, 'add', 'f6', '--generate', '--rate', '-1');
  await refused(/--allow/, 'add', 'f7', '--generate', '--allow', '10.0.0.0/33');
  await refused(/--allow/, 'add', 'f8', '--generate', '--allow', 'example.com');
  await refused(/an account named "erin" exists/, 'add', 'erin', '--generate');
  // A username is one account's only, whatever it is named.
  await refused(/another account's/, 'add', 'erin2', '--username', secret('erin'));
  await refused(/nothing to set/, 'set', 'erin');
  for (const args of [
    ['set', 'nobody', '--credits', '1'],
    ['credit', 'nobody', '1'],
    ['disable', 'nobody'],
    ['enable', 'nobody'],
    ['remove', 'nobody'],
    ['usage', 'nobody'],
    ['rotate', 'nobody'],
  ]) {
    await refused(/no account named "?nobody/, ...args);
  }
  await refused(/--days/, 'usage', 'erin', '--days', '0');
  await refused(/unknown command|error/i, 'frobnicate');
  const names = JSON.parse(await ok('list', '--json')).map((a: { name: string }) => a.name);
  for (const n of ['f1', 'f2', 'f3', 'f4', 'f5', 'f6', 'f7', 'f8', 'erin2']) expect(names).not.toContain(n);
});

test('usage shows lookups per day and operation from a running server; a change reaches it within a second', async () => {
  const worker = secret('worker');
  await ok('add', 'worker', '--username', worker, '--credits', '3', '--rate', 'none');
  const store = new SqliteStore(db);
  const srv = await startServer({ DATABASE_URL: `sqlite:${db}` }, { store });
  try {
    for (const reg of ['RG11ABC', 'RG11ABC', 'ZZ99ZZZ'])
      await call(srv.url, 'get', 'Check', { RegistrationNumber: reg, username: worker });
    await call(srv.url, 'soap11', 'UKMOT', { RegistrationNumber: 'RG11ABC', username: worker });
    await srv.flushUsage();
    const text = await ok('usage', 'worker');
    const day = new Date().toISOString().slice(0, 10);
    expect(text).toMatch(new RegExp(`^${day}\\s+Check\\s+2\\s+1$`, 'm'));
    expect(text).toMatch(new RegExp(`^${day}\\s+UKMOT\\s+1\\s+0$`, 'm'));
    expect(JSON.parse(await ok('usage', 'worker', '--json', '--days', '1'))).toEqual([
      { day, operation: 'Check', found: 2, notFound: 1 },
      { day, operation: 'UKMOT', found: 1, notFound: 0 },
    ]);
    expect(JSON.parse(await ok('list', '--json'))).toContainEqual(
      expect.objectContaining({ name: 'worker', credits: 0, usedToday: 3 }),
    );
    expect(
      (await call(srv.url, 'get', 'Check', { RegistrationNumber: 'RG11ABC', username: worker })).headers.get(
        'x-error-code',
      ),
    ).toBe('OUT_OF_CREDIT');
    await ok('credit', 'worker', '2');
    await new Promise((r) => setTimeout(r, 1100));
    expect((await call(srv.url, 'get', 'Check', { RegistrationNumber: 'RG11ABC', username: worker })).status).toBe(200);
    await ok('disable', 'worker');
    await new Promise((r) => setTimeout(r, 1100));
    expect((await call(srv.url, 'get', 'Check', { RegistrationNumber: 'RG11ABC', username: worker })).status).toBe(403);
  } finally {
    await srv.close();
  }
});

test('rotate: a new username printed once; both charge one account, then the old one is unknown after the grace', async () => {
  const old = secret('rotor');
  await ok('add', 'rotor', '--username', old, '--credits', '4', '--rate', 'none');
  process.env.USERNAME_ROTATION_GRACE_S = '2';
  let rotated: Run;
  try {
    rotated = await users('rotate', 'rotor');
  } finally {
    delete process.env.USERNAME_ROTATION_GRACE_S;
  }
  expect(rotated.code).toBe(0);
  const fresh = rotated.out.trim();
  expect(fresh).toMatch(/^[0-9a-f]{32}$/);
  expect(rotated.err).toMatch(/the old one is valid until \d{4}-\d\d-\d\dT/);
  expect(JSON.parse(await ok('list', '--json'))).toContainEqual(
    expect.objectContaining({ name: 'rotor', prefix: fresh.slice(0, 6) }),
  );
  const store = new SqliteStore(db);
  const srv = await startServer({ DATABASE_URL: `sqlite:${db}`, USERNAME_POLICY: 'registered' }, { store });
  try {
    const check = async (username: string) =>
      (await call(srv.url, 'get', 'Check', { RegistrationNumber: 'RG11ABC', username })).headers.get('x-error-code') ??
      'ok';
    expect(await check(old)).toBe('ok');
    expect(await check(fresh)).toBe('ok');
    expect(JSON.parse(await ok('list', '--json'))).toContainEqual(
      expect.objectContaining({ name: 'rotor', credits: 2 }),
    );
    await new Promise((r) => setTimeout(r, 2100));
    expect(await check(old)).toBe('UNKNOWN_USERNAME');
    expect(await check(fresh)).toBe('ok');
    expect(JSON.parse(await ok('list', '--json'))).toContainEqual(
      expect.objectContaining({ name: 'rotor', credits: 1 }),
    );
  } finally {
    await srv.close();
  }
});
