// The admin API (issue 27), against a real store: every path of the issue's table, as a billing
// system or an operator's script calls it; errors as {"code","message"}; the audit log naming the
// token that made each change. Expectations are the issue's and docs/administration.md's.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../../src/store/open';
import type { VehicleStore } from '../../src/store/store';
import { client, startAdmin, TOKENS, type TestAdmin } from '../helpers/admin';
import { startServer } from '../helpers/server';

/** A caller's username for the account `name`: long enough not to be flagged, and never answered back. */
const secret = (name: string) => `${name}-username-7f3e2a9c1d4b`;

let dir: string;
let store: VehicleStore;
let admin: TestAdmin;
let ops: ReturnType<typeof client>;
let billing: ReturnType<typeof client>;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-admin-'));
  store = openStore(`sqlite:${path.join(dir, 'store.db')}`);
  admin = await startAdmin(store);
  ops = client(admin.url, TOKENS[0].token);
  billing = client(admin.url, TOKENS[1].token);
});
afterAll(async () => {
  await admin.close();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('add, read, change, disable, enable and remove a caller', async () => {
  const added = await ops('POST', '/admin/api/users', {
    name: 'acme',
    username: secret('acme'),
    credits: 100,
    dailyLimit: 50,
    allow: ['10.0.0.0/8'],
  });
  expect(added.status).toBe(201);
  // Known by its name, recognised by the first characters of its username (a quarter, at most 6); the username
  // chosen by the operator is not answered back.
  expect(added.json).toEqual({
    name: 'acme',
    prefix: secret('acme').slice(0, 6),
    weak: null,
    enabled: true,
    credits: 100,
    dailyLimit: 50,
    rate: null,
    allow: ['10.0.0.0/8'],
  });
  expect((await ops('POST', '/admin/api/users', { name: 'acme', username: secret('acme') })).status).toBe(409);

  const got = await ops('GET', '/admin/api/users/acme');
  expect(got.status).toBe(200);
  expect(got.json.credits).toBe(100);

  const changed = await ops('PATCH', '/admin/api/users/acme', { rate: 2.5, dailyLimit: null });
  expect(changed.status).toBe(200);
  expect(changed.json).toMatchObject({ rate: 2.5, dailyLimit: null, credits: 100 });

  expect((await ops('POST', '/admin/api/users/acme/disable')).json.enabled).toBe(false);
  expect((await store.accounts.getAccountByName('acme'))?.enabled).toBe(false);
  expect((await ops('POST', '/admin/api/users/acme/enable')).json.enabled).toBe(true);

  expect((await ops('DELETE', '/admin/api/users/acme')).status).toBe(204);
  const gone = await ops('GET', '/admin/api/users/acme');
  expect(gone.status).toBe(404);
  expect(gone.json).toEqual({ code: 'NOT_FOUND', message: expect.stringContaining('acme') });
});

test('a generated username is 128 random bits, and given only once', async () => {
  const a = await ops('POST', '/admin/api/users', { name: 'gen-a', generate: true, credits: 5 });
  expect(a.status).toBe(201);
  expect(a.json.username).toMatch(/^[0-9a-f]{32}$/);
  expect(a.json.prefix).toBe(a.json.username.slice(0, 6));
  const b = await ops('POST', '/admin/api/users', { name: 'gen-b', generate: true });
  expect(b.json.username).not.toBe(a.json.username);
  expect((await ops('POST', '/admin/api/users', { name: 'gen-c', generate: true, username: 'x' })).status).toBe(400);
  // Only once: reading the account back shows its name and prefix, never the username.
  const read = await ops('GET', '/admin/api/users/gen-a');
  expect(read.json.username).toBeUndefined();
  expect(read.text).not.toContain(a.json.username);
});

test('bad input: each refused with a specific message naming the field', async () => {
  await ops('POST', '/admin/api/users', { name: 'strict', username: secret('strict'), credits: 1 });
  const cases: [string, string, unknown, RegExp][] = [
    ['POST', '/admin/api/users', { name: 'a', username: secret('a'), credits: -1 }, /credits must be at least 0/],
    [
      'POST',
      '/admin/api/users',
      { name: 'a', username: secret('a'), credits: 'ten' },
      /credits must be a whole number or null/,
    ],
    ['POST', '/admin/api/users', { name: 'a', username: secret('a'), colour: 'red' }, /colour is not a field/],
    ['POST', '/admin/api/users', { name: 'a', username: ' padded' }, /cannot start or end with spaces/],
    ['POST', '/admin/api/users', { name: 'a b', username: secret('a') }, /a name holds letters, digits/],
    ['POST', '/admin/api/users', { username: secret('a') }, /name/],
    ['PATCH', '/admin/api/users/strict', { allow: ['not-an-address'] }, /allow/],
    ['PATCH', '/admin/api/users/strict', { rate: 0.0001 }, /rate must be 0 \(none\) or between/],
    ['PATCH', '/admin/api/users/strict', {}, /nothing to change/],
    ['POST', '/admin/api/users/strict/credits', { amount: 1.5 }, /amount must be a whole number/],
  ];
  for (const [method, p, body, message] of cases) {
    const r = await ops(method, p, body, { 'Idempotency-Key': 'key-for-bad-input-1' });
    expect([r.status, r.json?.code]).toEqual([400, 'INVALID_INPUT']);
    expect(r.json.message).toMatch(message);
  }
  const notJson = await ops('POST', '/admin/api/users', '{"username":', {});
  expect([notJson.status, notJson.json.code]).toEqual([400, 'MALFORMED_JSON']);
  const wrongType = await ops('POST', '/admin/api/users', 'username=x', {
    'Content-Type': 'application/x-www-form-urlencoded',
  });
  expect([wrongType.status, wrongType.json.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
  const unknownQuery = await ops('GET', '/admin/api/users?colour=red');
  expect([unknownQuery.status, unknownQuery.json.message]).toEqual([400, expect.stringContaining('colour')]);
  const method = await ops('PUT', '/admin/api/users/strict', { credits: 1 });
  expect(method.status).toBe(405);
  expect(method.headers.get('allow')).toBe('GET, PATCH, DELETE');
  const nothing = await ops('GET', '/admin/api/nothing-here');
  expect([nothing.status, nothing.json.code]).toEqual([404, 'NOT_FOUND']);
});

test('list: paged by opaque cursors, searched in any case, every caller once', async () => {
  for (let i = 0; i < 23; i++)
    await ops('POST', '/admin/api/users', {
      name: `page-${String(i).padStart(2, '0')}`,
      username: secret(`page-${String(i).padStart(2, '0')}`),
      credits: i,
    });
  await ops('POST', '/admin/api/users', { name: 'Other-PAGE-x', username: secret('Other-PAGE-x') });
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const r = await ops(
      'GET',
      `/admin/api/users?search=page&limit=10${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    expect(r.status).toBe(200);
    seen.push(...(r.json.users as { name: string }[]).map((u) => u.name));
    cursor = r.json.next as string | null;
    pages++;
  } while (cursor !== null && pages < 10);
  expect(pages).toBe(3);
  expect(seen).toHaveLength(24);
  expect(new Set(seen).size).toBe(24);
  expect(seen).toContain('Other-PAGE-x');
  expect((await ops('GET', '/admin/api/users?cursor=not-a-cursor')).status).toBe(400);
  expect((await ops('GET', '/admin/api/users?limit=0')).status).toBe(400);
});

test('credits: a top-up applied once per Idempotency-Key; a reused key with another body refused', async () => {
  await ops('POST', '/admin/api/users', { name: 'payer', username: secret('payer'), credits: 10 });
  const key = { 'Idempotency-Key': '6f1c2a9e-0d5b-4f2e-9a51-4a2b7f0c1d11' };
  const first = await billing('POST', '/admin/api/users/payer/credits', { amount: 25 }, key);
  expect([first.status, first.json]).toEqual([200, { name: 'payer', balance: 35, replayed: false }]);
  const retry = await billing('POST', '/admin/api/users/payer/credits', { amount: 25 }, key);
  expect([retry.status, retry.json]).toEqual([200, { name: 'payer', balance: 35, replayed: true }]);
  expect((await store.accounts.getAccountByName('payer'))?.credits).toBe(35);
  const other = await billing('POST', '/admin/api/users/payer/credits', { amount: 26 }, key);
  expect([other.status, other.json.code]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);
  const noKey = await billing('POST', '/admin/api/users/payer/credits', { amount: 1 });
  expect([noKey.status, noKey.json.message]).toEqual([400, expect.stringContaining('Idempotency-Key')]);
  // Taking credits stops at zero; a balance above the store's bound is refused and nothing changes.
  const take = await billing(
    'POST',
    '/admin/api/users/payer/credits',
    { amount: -1000 },
    { 'Idempotency-Key': 'take-all-of-it-1' },
  );
  expect(take.json.balance).toBe(0);
  const over = await billing(
    'POST',
    '/admin/api/users/payer/credits',
    { amount: 1_000_000_000_000 },
    { 'Idempotency-Key': 'too-much-at-once' },
  );
  expect(over.json.balance).toBe(1_000_000_000_000);
  const past = await billing(
    'POST',
    '/admin/api/users/payer/credits',
    { amount: 1 },
    { 'Idempotency-Key': 'one-past-the-bound' },
  );
  expect([past.status, past.json.code]).toEqual([400, 'INVALID_INPUT']);
  expect((await store.accounts.getAccountByName('payer'))?.credits).toBe(1_000_000_000_000);
  const unknown = await billing(
    'POST',
    '/admin/api/users/nobody/credits',
    { amount: 1 },
    { 'Idempotency-Key': 'for-nobody-here' },
  );
  expect(unknown.status).toBe(404);
});

test('usage a day by operation, and the audit log names the token that made each change', async () => {
  await ops('POST', '/admin/api/users', { name: 'audited', username: secret('audited'), credits: 3 });
  const audited = (await store.accounts.getAccountByName('audited'))?.username as string;
  await store.accounts.addUsage([
    { username: audited, day: new Date().toISOString().slice(0, 10), operation: 'Check', found: 4, notFound: 1 },
  ]);
  const usage = await ops('GET', '/admin/api/users/audited/usage?days=7');
  expect(usage.status).toBe(200);
  expect(usage.json.usage).toEqual([
    { day: new Date().toISOString().slice(0, 10), operation: 'Check', found: 4, notFound: 1 },
  ]);
  expect((await ops('GET', '/admin/api/users/nobody/usage')).status).toBe(404);

  await billing('POST', '/admin/api/users/audited/credits', { amount: 7 }, { 'Idempotency-Key': 'audited-top-up-1' });
  await ops('PATCH', '/admin/api/users/audited', { dailyLimit: 9 });
  const audit = await ops('GET', '/admin/api/audit?limit=3');
  expect(audit.status).toBe(200);
  const [update, credit, add] = audit.json.entries as {
    actor: string;
    action: string;
    target: string;
    before: unknown;
    after: unknown;
    at: string;
  }[];
  expect(update).toMatchObject({
    actor: 'ops',
    action: 'update',
    target: 'audited',
    before: { dailyLimit: null },
    after: { dailyLimit: 9 },
  });
  expect(credit).toMatchObject({
    actor: 'billing',
    action: 'credit',
    target: 'audited',
    before: { credits: 3 },
    after: { credits: 10, amount: 7 },
  });
  expect(add).toMatchObject({ actor: 'ops', action: 'add', target: 'audited', before: null });
  expect(Date.parse(update.at)).toBeGreaterThan(Date.now() - 60_000);
  const older = await ops('GET', `/admin/api/audit?limit=3&cursor=${audit.json.next as string}`);
  expect(older.json.entries).toHaveLength(3);
  expect(older.json.entries[0].id).toBeLessThan(audit.json.entries[2].id);
});

test('import status says what the store holds', async () => {
  const r = await ops('GET', '/admin/api/import');
  expect(r.json).toEqual({ state: 'empty' });
});

test('the upstream cache: statistics by operation and provider, and a purge that is audited and leaves imported records alone', async () => {
  const at = Date.UTC(2026, 10, 1, 12, 0, 0);
  await store.cachePut({
    operation: 'Check',
    registration: 'AA19AAA',
    state: '',
    provider: 'dvla',
    fetchedAt: at,
    payload: '{"Description":"FORD"}',
  });
  await store.cachePut({
    operation: 'Check',
    registration: 'ER19NFD',
    state: '',
    provider: 'dvla',
    fetchedAt: at + 1000,
    payload: null,
  });
  await store.cachePut({
    operation: 'UKMOT',
    registration: 'AA19AAA',
    state: '',
    provider: 'dvsa',
    fetchedAt: at + 2000,
    payload: '{"make":"FORD","tests":[]}',
  });

  const stats = await ops('GET', '/admin/api/cache');
  expect(stats.status).toBe(200);
  expect(stats.json.entries).toEqual([
    {
      operation: 'Check',
      provider: 'dvla',
      found: 1,
      notFound: 1,
      oldest: '2026-11-01T12:00:00.000Z',
      newest: '2026-11-01T12:00:01.000Z',
    },
    {
      operation: 'UKMOT',
      provider: 'dvsa',
      found: 1,
      notFound: 0,
      oldest: '2026-11-01T12:00:02.000Z',
      newest: '2026-11-01T12:00:02.000Z',
    },
  ]);
  expect((await ops('GET', '/admin/api/cache?registration=aa19%20aaa')).json.entries).toHaveLength(2);

  const bad = await ops('GET', '/admin/api/cache?operation=NoSuchOperation');
  expect(bad.status).toBe(400);
  expect(bad.json.message).toContain("no operation is named 'NoSuchOperation'");

  const one = await billing('POST', '/admin/api/cache/purge', { operation: 'Check', registration: 'aa19 aaa' });
  expect(one.json).toEqual({ purged: 1 });
  expect((await ops('POST', '/admin/api/cache/purge', {})).json).toEqual({ purged: 2 });
  expect((await ops('GET', '/admin/api/cache')).json.entries).toEqual([]);

  const audit = await ops('GET', '/admin/api/audit?limit=2');
  expect(
    audit.json.entries.map((e: { actor: string; action: string; target: string }) => [e.actor, e.action, e.target]),
  ).toEqual([
    [TOKENS[0].name, 'cache-purge', '(all)'],
    [TOKENS[1].name, 'cache-purge', 'Check AA19AAA'],
  ]);
});

test('reglookup_callers_low_credit: callers below CREDIT_ALERT_BELOW, unlimited ones not counted', async () => {
  const server = await startServer({ CREDIT_ALERT_BELOW: '10' });
  try {
    await server.store.accounts.addAccount({ username: 'low', credits: 3 });
    await server.store.accounts.addAccount({ username: 'empty', credits: 0 });
    await server.store.accounts.addAccount({ username: 'rich', credits: 10 });
    await server.store.accounts.addAccount({ username: 'unlimited' });
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(text).toMatch(/^reglookup_callers_low_credit 2$/m);
  } finally {
    await server.close();
  }
});

test('rotate: a new username answered once; the old one ends after the grace period (USERNAME_ROTATION_GRACE_S)', async () => {
  await ops('POST', '/admin/api/users', { name: 'rotated', username: secret('rotated'), credits: 5 });
  const r = await billing('POST', '/admin/api/users/rotated/rotate');
  expect(r.status).toBe(200);
  expect(r.json).toEqual({
    name: 'rotated',
    username: expect.stringMatching(/^[0-9a-f]{32}$/),
    prefix: r.json.username.slice(0, 6),
    oldUntil: expect.any(String),
  });
  // docs/configuration.md: one day by default.
  expect(Date.parse(r.json.oldUntil) - Date.now()).toBeGreaterThan(86_400_000 - 60_000);
  expect(Date.parse(r.json.oldUntil) - Date.now()).toBeLessThanOrEqual(86_400_000);
  // Both usernames find the one account; the new one is never answered again.
  const sha = (u: string) => createHash('sha256').update(u, 'utf8').digest('hex');
  const viaOld = await store.accounts.getAccount(sha(secret('rotated')));
  const viaNew = await store.accounts.getAccount(sha(r.json.username));
  expect(viaOld?.name).toBe('rotated');
  expect(viaNew).toMatchObject({ name: 'rotated', username: viaOld?.username, keyUntil: null, credits: 5 });
  expect(viaOld?.keyUntil).toBe(Date.parse(r.json.oldUntil));
  expect((await ops('GET', '/admin/api/users/rotated')).text).not.toContain(r.json.username);
  expect((await ops('POST', '/admin/api/users/nobody/rotate')).status).toBe(404);
  const audit = await ops('GET', '/admin/api/audit?limit=1');
  expect(audit.json.entries[0]).toMatchObject({ actor: 'billing', action: 'rotate', target: 'rotated' });
  expect(audit.text).not.toContain(r.json.username);
});
