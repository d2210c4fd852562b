// README claims about running the service, checked on the real command line in its own process:
// the first start on a new database, a bad setting, the users commands (their exit status and how
// soon a running server sees them), WORKERS, LOG_FORMAT=text, SAMPLE_DATA=false, and the heap tuning
// the serving process applies to itself.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { claim, readmeSection } from '../helpers/readme';
import { runCli, serve } from '../helpers/cli';
import { startServer } from '../helpers/server';

jest.setTimeout(120_000);

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-cli-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function lookup(base: string, username: string): Promise<{ status: number; code: string | null }> {
  const res = await fetch(`${base}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=${username}`);
  await res.text();
  return { status: res.status, code: res.headers.get('x-error-code') };
}

test('reglookup serve: loads the sample into a new database on first start and serves it', async () => {
  const file = path.join(dir, 'first-start', 'reg.db');
  const served = await serve({ DATABASE_URL: `sqlite:${file}` });
  try {
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/reg\.asmx$/);
    const res = await fetch(
      `${served.url}/CheckChina?RegistrationNumber=${encodeURIComponent('京A12345')}&username=demo`,
    );
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<vehicleJson>');
    expect(fs.existsSync(file)).toBe(true);
  } finally {
    await served.stop();
  }
});

test('a bad setting stops start-up with a message naming the variable', () => {
  const r = runCli(['serve'], { PORT: 'eighty' });
  expect(r.status).not.toBe(0);
  expect(r.stderr).toContain("PORT must be a whole number, got 'eighty'");
});

test('users commands as their own process: output on stdout, errors on stderr, exit status 1 for a bad input', () => {
  const env = { DATABASE_URL: `sqlite:${path.join(dir, 'own-process.db')}` };
  const bad = runCli(['users', 'add', 'long', '--username', 'x'.repeat(300)], env);
  expect(bad.status).toBe(1);
  expect(bad.stderr).toMatch(/at most 256 characters/);
  expect(runCli(['users', 'add', 'long'], env)).toMatchObject({
    status: 1,
    stderr: expect.stringMatching(/--generate/),
  });
  const good = runCli(['users', 'add', 'spawned', '--username', 'spawned', '--credits', '7'], env);
  expect(good.status).toBe(0);
  expect(good.stdout).toMatch(/added spawned/);
});

test('the users commands, and a running server sees each change within a second', async () => {
  // README: "A running server sees a change to the users within a second (it reads each username's
  // row at most once a second)". The server is in this process; the commands run as an operator runs them.
  const [, seconds] = claim(/A running server sees a change to the users within (a|\d+) seconds?/);
  const within = (seconds === 'a' ? 1 : Number(seconds)) * 1000;
  const db = path.join(dir, 'users.db');
  const env = { DATABASE_URL: `sqlite:${db}` };
  const srv = await startServer({ ...env, USERNAME_POLICY: 'registered' });
  try {
    expect(await lookup(srv.url, 'alice')).toEqual({ status: 403, code: 'UNKNOWN_USERNAME' });

    const add = runCli(['users', 'add', 'alice', '--username', 'alice'], env);
    expect(add.status).toBe(0);
    await sleep(within + 100);
    expect((await lookup(srv.url, 'alice')).status).toBe(200);

    expect(runCli(['users', 'add', 'bob', '--username', 'bob', '--credits', '1'], env).status).toBe(0);
    const list = runCli(['users', 'list', '--json'], env);
    expect(list.status).toBe(0);
    expect(
      (JSON.parse(list.stdout) as { name: string; credits: number | null }[]).map((a) => [a.name, a.credits]),
    ).toEqual([
      ['alice', null],
      ['bob', 1],
    ]);
    await sleep(within + 100);
    // README: 1 credit is one successful lookup, then OUT_OF_CREDIT.
    expect((await lookup(srv.url, 'bob')).status).toBe(200);
    expect(await lookup(srv.url, 'bob')).toEqual({ status: 429, code: 'OUT_OF_CREDIT' });

    expect(runCli(['users', 'remove', 'alice'], env).status).toBe(0);
    await sleep(within + 100);
    expect(await lookup(srv.url, 'alice')).toEqual({ status: 403, code: 'UNKNOWN_USERNAME' });
    expect(runCli(['users', 'remove', 'alice'], env).status).not.toBe(0);
  } finally {
    await srv.close();
  }
});

test('SAMPLE_DATA=false starts on an empty store; the default loads the sample', async () => {
  const empty = await serve({ DATABASE_URL: `sqlite:${path.join(dir, 'nosample.db')}`, SAMPLE_DATA: 'false' });
  try {
    const base = empty.url.replace(/\/api\/reg\.asmx$/, '');
    expect(await lookup(base, 'demo')).toEqual({ status: 404, code: 'VEHICLE_NOT_FOUND' });
  } finally {
    await empty.stop();
  }
  const filled = await serve({ DATABASE_URL: `sqlite:${path.join(dir, 'sample.db')}` });
  try {
    const base = filled.url.replace(/\/api\/reg\.asmx$/, '');
    expect((await lookup(base, 'demo')).status).toBe(200);
  } finally {
    await filled.stop();
  }
});

test('WORKERS=2: two processes serve the port', async () => {
  const srv = await serve({ DATABASE_URL: `sqlite:${path.join(dir, 'workers.db')}`, WORKERS: '2' });
  try {
    const base = srv.url.replace(/\/api\/reg\.asmx$/, '');
    // Both workers log their address once they listen.
    for (let i = 0; i < 300 && (srv.output().match(/listening/g) ?? []).length < 2; i++) await sleep(100);
    expect((srv.output().match(/listening/g) ?? []).length).toBe(2);
    const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(srv.child.pid)], { encoding: 'utf8' })
      .trim()
      .split(/\s+/)
      .filter(Boolean);
    expect(children).toHaveLength(2);
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${base}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=demo`, {
        headers: { Connection: 'close' },
      });
      expect(res.status).toBe(200);
      await res.text();
    }
  } finally {
    await srv.stop();
  }
});

test('LOG_FORMAT=text logs lines of text, not JSON', async () => {
  const srv = await serve({ DATABASE_URL: `sqlite:${path.join(dir, 'text.db')}`, LOG_FORMAT: 'text' });
  try {
    const base = srv.url.replace(/\/api\/reg\.asmx$/, '');
    await (await fetch(`${base}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=demo`)).text();
    for (let i = 0; i < 50 && !/RG11ABC|reg\.asmx\/Check/.test(srv.output().split('\n').slice(1).join('\n')); i++)
      await sleep(100);
    const lines = srv
      .output()
      .split('\n')
      .filter((l) => l.trim() !== '');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) {
      expect(line.trim().startsWith('{')).toBe(false);
      expect(line).not.toMatch(/"\w+":/);
    }
  } finally {
    await srv.stop();
  }
});

test('LOG_FORMAT=json (the default) logs one JSON object per line', async () => {
  const srv = await serve({ DATABASE_URL: `sqlite:${path.join(dir, 'json.db')}` });
  try {
    const base = srv.url.replace(/\/api\/reg\.asmx$/, '');
    await (await fetch(`${base}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=demo`)).text();
    for (let i = 0; i < 50 && srv.output().split('\n').filter(Boolean).length < 2; i++) await sleep(100);
    const lines = srv
      .output()
      .split('\n')
      .filter((l) => l.trim() !== '');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect(typeof JSON.parse(line)).toBe('object');
  } finally {
    await srv.stop();
  }
});

test('the serving process sets the V8 heap flag the README names on itself', async () => {
  // README (Performance): "The serving process itself sets V8's `--heap-growing-percent=100` at start-up (whatever
  // started it)".
  const [, flag] = claim(
    /The serving process itself sets V8's `(--[\w-]+=\d+)` at start-up/,
    readmeSection('Performance'),
  );
  const record = path.join(dir, 'flags.txt');
  const srv = await serve({ DATABASE_URL: `sqlite:${path.join(dir, 'heap.db')}`, RECORD_V8_FLAGS: record }, [
    '-r',
    path.resolve(__dirname, '../helpers/record-v8-flags.js'),
  ]);
  try {
    const set = fs.existsSync(record) ? fs.readFileSync(record, 'utf8').split('\n').filter(Boolean) : [];
    expect(set).toContain(flag);
  } finally {
    await srv.stop();
  }
});
