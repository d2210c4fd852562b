// The admin listener's security (issue 27, 7): nothing without a valid token, and a refusal says
// nothing about what exists; repeated failures from one address are slowed; every answer carries
// the anti-framing, nosniff and strict CSP headers; tokens appear in no log line and no metric.
// And its configuration: off unless ADMIN_PORT is set, never on PORT, never without a token.

import Database from 'better-sqlite3';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';
import { openStore } from '../../src/store/open';
import type { VehicleStore } from '../../src/store/store';
import { client, startAdmin, TOKENS, type TestAdmin } from '../helpers/admin';
import { runCli, startServeProcess } from '../helpers/cli';
import { migrateSqlite } from '../../src/store/migrations/sqlite';
import { SQLITE_ACCOUNTS_MIGRATIONS } from '../../src/store/migrations/sqlite-accounts';

// One test starts `reglookup serve` as a process, and the slowed refusals wait: slow on a busy machine.
jest.setTimeout(120_000);

let store: VehicleStore;
let admin: TestAdmin;

beforeAll(async () => {
  store = openStore('sqlite::memory:');
  admin = await startAdmin(store);
});
afterAll(async () => {
  await admin.close();
  await store.close();
});

describe('configuration', () => {
  test('off by default; ADMIN_PORT needs a token and a port of its own', () => {
    expect(loadConfig({}).adminPort).toBeNull();
    expect(() => loadConfig({ PORT: '8080', ADMIN_PORT: '8080', ADMIN_TOKENS: 'ops:0123456789abcdef' })).toThrow(
      /ADMIN_PORT must differ from PORT/,
    );
    expect(() => loadConfig({ ADMIN_PORT: '9091' })).toThrow(/no admin token/);
    expect(() => loadConfig({ ADMIN_PORT: '9091', ADMIN_TOKENS: 'ops:short' })).toThrow(ConfigError);
    expect(() => loadConfig({ ADMIN_PORT: '9091', ADMIN_TOKENS: 'ops:short' })).not.toThrow(/short/);
    const c = loadConfig({ ADMIN_PORT: '9091', ADMIN_TOKENS: 'ops:0123456789abcdef, billing:fedcba9876543210' });
    expect(c.adminTokens.map((t) => t.name)).toEqual(['ops', 'billing']);
  });

  test('ADMIN_TOKENS_FILE: the pairs from a file, one a line or comma-separated; not both ways at once', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-tokens-'));
    const file = path.join(dir, 'tokens');
    fs.writeFileSync(file, 'ops:0123456789abcdef\nnew-ops:aaaaaaaaaaaaaaaaaaaa\n');
    try {
      expect(loadConfig({ ADMIN_PORT: '9091', ADMIN_TOKENS_FILE: file }).adminTokens.map((t) => t.name)).toEqual([
        'ops',
        'new-ops',
      ]);
      expect(() => loadConfig({ ADMIN_TOKENS_FILE: file, ADMIN_TOKENS: 'a:0123456789abcdef' })).toThrow(/not both/);
      expect(() => loadConfig({ ADMIN_TOKENS_FILE: path.join(dir, 'absent') })).toThrow(/cannot be read/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

test('without a valid token: 401 whatever the path, the same answer for what exists and what does not', async () => {
  const refusals = [
    [null, '/admin/api/users'],
    [null, '/admin/api/users/somebody'],
    [null, '/admin/api/no-such-thing'],
    [null, '/admin/openapi.json'],
    [null, '/'],
    ['wrong-token-0123456789abcdef', '/admin/api/users'],
    [`${TOKENS[0].token}x`, '/admin/api/users'],
    [TOKENS[0].token.slice(0, -1), '/admin/api/users'],
  ] as const;
  const bodies = new Set<string>();
  for (const [token, p] of refusals) {
    const r = await client(admin.url, token)('GET', p);
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
    bodies.add(r.text);
  }
  // A token sent another way (Basic, a query parameter) is no token.
  const basic = await fetch(`${admin.url}/admin/api/users`, {
    headers: { Authorization: `Basic ${Buffer.from(`ops:${TOKENS[0].token}`).toString('base64')}` },
  });
  expect(basic.status).toBe(401);
  bodies.add(await basic.text());
  expect((await fetch(`${admin.url}/admin/api/users?token=${TOKENS[0].token}`)).status).toBe(401);
  expect(bodies.size).toBe(1);
  expect(JSON.parse([...bodies][0])).toEqual({ code: 'UNAUTHORIZED', message: expect.stringContaining('Bearer') });
  // A write without a token changes nothing.
  expect((await client(admin.url, null)('POST', '/admin/api/users', { username: 'sneaky' })).status).toBe(401);
  expect(await store.accounts.getAccount('sneaky')).toBeNull();
  // Each configured token works: they can be rotated.
  for (const t of TOKENS) expect((await client(admin.url, t.token)('GET', '/admin/api/users')).status).toBe(200);
});

test('every answer carries X-Frame-Options, frame-ancestors, nosniff and a CSP without inline script', async () => {
  for (const token of [null, TOKENS[0].token]) {
    const r = await client(admin.url, token)('GET', '/admin/api/users');
    expect(r.headers.get('x-frame-options')).toBe('DENY');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    const csp = r.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/frame-ancestors 'none'/);
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
    expect(r.headers.get('set-cookie')).toBeNull();
  }
});

test('repeated failures from one address are slowed (Retry-After), and a success clears them', async () => {
  const own = await startAdmin(store);
  try {
    const wrong = client(own.url, 'wrong-token-0123456789abcdef');
    for (let i = 0; i < 5; i++) expect((await wrong('GET', '/admin/api/users')).headers.get('retry-after')).toBeNull();
    const slowed = await wrong('GET', '/admin/api/users');
    expect(slowed.status).toBe(401);
    expect(Number(slowed.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await client(own.url, TOKENS[0].token)('GET', '/admin/api/users')).status).toBe(200);
    expect((await wrong('GET', '/admin/api/users')).headers.get('retry-after')).toBeNull();
  } finally {
    await own.close();
  }
});

test('100 parallel bad tokens after five failures are answered no faster than serial ones; a good token is not held', async () => {
  const own = await startAdmin(store);
  const abort = new AbortController();
  try {
    const wrong = client(own.url, 'wrong-token-0123456789abcdef');
    for (let i = 0; i < 5; i++) await wrong('GET', '/admin/api/users');
    const start = Date.now();
    const answered: number[] = [];
    const flood = Array.from({ length: 100 }, () =>
      fetch(`${own.url}/admin/api/users`, {
        headers: { Authorization: 'Bearer wrong-token-0123456789abcdef' },
        signal: abort.signal,
      }).then(
        (r) => answered.push(r.status),
        () => undefined,
      ),
    );
    await new Promise((r) => setTimeout(r, 1000));
    // During the flood, from the same address, a good token answers at once.
    const t = Date.now();
    expect((await client(own.url, TOKENS[0].token)('GET', '/admin/api/users')).status).toBe(200);
    expect(Date.now() - t).toBeLessThan(1000);
    // A serial guesser, waiting 0.25 s, 0.5 s, 1 s, 2 s, 4 s, 8 s, has 5 answers in 11 s; each held at once,
    // the old way, all 100 were answered within 10 s.
    await new Promise((r) => setTimeout(r, Math.max(0, start + 11_000 - Date.now())));
    expect(answered.length).toBeLessThanOrEqual(6);
    expect(answered.every((s) => s === 401)).toBe(true);
    abort.abort();
    await Promise.all(flood);
  } finally {
    abort.abort();
    await own.close();
  }
});

test('guesses whose clients give up keep their places: once 200 wait, more are refused 429 unchecked', async () => {
  const own = await startAdmin(store);
  const { port } = new URL(own.url);
  const request =
    'GET /admin/api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong-token-0123456789abcdef\r\n\r\n';
  /** A guess on a connection of its own: resolves with the status line's code, or 0 when it was closed unanswered. */
  const guess = (sockets: net.Socket[]) =>
    new Promise<number>((resolve) => {
      const s = net.connect(Number(port), '127.0.0.1', () => s.write(request));
      sockets.push(s);
      let reply = '';
      s.on('data', (d) => {
        reply += d.toString('latin1');
        const m = /^HTTP\/1\.1 (\d{3})/.exec(reply);
        if (m) resolve(Number(m[1]));
      });
      s.on('close', () => resolve(0));
      s.on('error', () => undefined);
    });
  const first: net.Socket[] = [];
  const late: net.Socket[] = [];
  try {
    const wrong = client(own.url, 'wrong-token-0123456789abcdef');
    for (let i = 0; i < 5; i++) await wrong('GET', '/admin/api/users');
    // 230 at once: 200 are held (one address's most), the rest answered 429 at once.
    let refused = 0;
    const flood = Array.from({ length: 230 }, () => guess(first).then((s) => (refused += s === 429 ? 1 : 0)));
    for (let i = 0; i < 100 && refused === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(refused).toBeGreaterThan(0);
    // Every client gives up; their places stay taken until their turns (of which a few pass meanwhile:
    // 0.25 s, 0.75 s, 1.75 s, ... after the first), so of 10 more, most are refused 429 at once.
    for (const s of first) s.destroy();
    await Promise.all(flood);
    await new Promise((r) => setTimeout(r, 300));
    const more = await Promise.all(
      Array.from({ length: 10 }, () =>
        Promise.race([guess(late), new Promise<number>((r) => setTimeout(() => r(-1), 3000))]),
      ),
    );
    expect(more.filter((s) => s === 429).length).toBeGreaterThan(0);
  } finally {
    for (const s of [...first, ...late]) s.destroy();
    await own.close();
  }
});

test('reglookup serve with ADMIN_PORT: tokens appear in no log line and no metric', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-admin-log-'));
  const token = 'secret-token-9f8e7d6c5b4a3921';
  const served = await startServeProcess({
    DATABASE_URL: `sqlite:${path.join(dir, 'db.sqlite')}`,
    ADMIN_PORT: '0',
    ADMIN_TOKENS: `ops:${token}`,
    LOG_LEVEL: 'debug',
  });
  try {
    const m =
      /"message":"admin API listening"[^\n]*"url":"(http:\/\/[^"]+)\/admin\/"|"url":"(http:\/\/[^"]+)\/admin\/"[^\n]*"message":"admin API listening"/.exec(
        served.output(),
      );
    expect(m).not.toBeNull();
    const url = (m as RegExpExecArray)[1] ?? (m as RegExpExecArray)[2];
    expect(url).not.toBe(served.base);
    const ops = client(url, token);
    expect((await ops('POST', '/admin/api/users', { name: 'logged', generate: true, credits: 1 })).status).toBe(201);
    await client(url, `${token}-wrong`)('GET', '/admin/api/users');
    await fetch(`${url}/admin/api/users?token=${token}`);
    // The public port knows nothing of the admin API.
    expect(
      (await fetch(`${served.base}/admin/api/users`, { headers: { Authorization: `Bearer ${token}` } })).status,
    ).toBe(404);
    const metricsText = await (await fetch(`${served.base}/metrics`)).text();
    await new Promise((r) => setTimeout(r, 300));
    expect(served.output()).toMatch(/"actor":"ops"/);
    expect(served.output()).not.toContain(token);
    expect(metricsText).not.toContain(token);
  } finally {
    await served.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('users add refuses invisible characters; users list --suspicious shows the guessable usernames the upgrade found', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-suspicious-'));
  const env = { DATABASE_URL: `sqlite:${path.join(dir, 'db.sqlite')}` };
  try {
    // Callers of the previous release (an accounts file at its first step), with their usernames in clear.
    const old = new Database(path.join(dir, 'db.accounts.sqlite'));
    migrateSqlite(old, 1, SQLITE_ACCOUNTS_MIGRATIONS);
    for (const username of [
      'me\u200bter',
      '\u202eretem-and-long-enough-to-pass',
      'short',
      'a-long-and-random-7f3e2a9c1d4b',
    ])
      old.prepare('INSERT INTO accounts (username) VALUES (?)').run(username);
    old.close();

    // The upgrade says how many it found, and what to do.
    const migrated = runCli(['migrate'], env);
    expect(migrated.status).toBe(0);
    expect(migrated.stderr).toBe(
      '3 caller(s) have a guessable username (short, or holding an invisible character): reglookup users list --suspicious, then reglookup users rotate NAME\n',
    );
    const refused = runCli(['users', 'add', 'meter', '--username', 'me\u200bter'], env);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/invisible or formatting characters/);
    expect(refused.stderr).toContain('U+200B');
    // The username is a credential: not repeated, even escaped.
    expect(refused.stderr).not.toMatch(/me.?ter/);
    expect(runCli(['users', 'add', 'meter', '--username', 'meter-and-long-enough-to-pass'], env).status).toBe(0);

    const listed = runCli(['users', 'list', '--suspicious'], env);
    expect(listed.status).toBe(0);
    const rows = listed.stdout.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^NAME\s+PREFIX\s+WEAK\s+ENABLED$/);
    expect(
      rows
        .slice(1)
        .map((r) => /\s(invisible|short)\s/.exec(r)?.[1])
        .sort(),
    ).toEqual(['invisible', 'invisible', 'short']);
    expect(listed.stdout).not.toMatch(/me.?ter|retem|random/);
    expect(listed.stdout).not.toMatch(/[\u200b\u202e]/);
    const json = JSON.parse(runCli(['users', 'list', '--suspicious', '--json'], env).stdout) as {
      name: string;
      prefix: string;
      weak: string;
    }[];
    // docs/security.md: short is under 20 characters; its prefix is a quarter of it (1 of 5 characters).
    expect(json.find((r) => r.weak === 'short')).toMatchObject({
      prefix: 's',
      name: expect.stringMatching(/^s-[0-9a-f]{12}$/),
    });
    expect(json.filter((r) => r.weak === 'invisible').map((r) => r.prefix)).toEqual(['', '']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
