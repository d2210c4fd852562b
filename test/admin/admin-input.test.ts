// What the admin API refuses in a body (issue 45, point 4): a key given twice in one object
// ({"amount":5,"amount":7} credited 7) is 400 naming the key, and a new username holding invisible
// characters (`me\u200bter`, which looks like `meter`) is 400 saying why.

import { duplicateKey } from '../../src/admin/schema';
import { openStore } from '../../src/store/open';
import type { VehicleStore } from '../../src/store/store';
import { client, startAdmin, TOKENS, type TestAdmin } from '../helpers/admin';

let store: VehicleStore;
let admin: TestAdmin;
let ops: ReturnType<typeof client>;

beforeAll(async () => {
  store = openStore('sqlite::memory:');
  admin = await startAdmin(store);
  ops = client(admin.url, TOKENS[0].token);
});
afterAll(async () => {
  await admin.close();
  await store.close();
});

describe('duplicateKey', () => {
  test.each([
    ['{"amount":5,"amount":7}', 'amount'],
    ['{"a":1,"b":{"c":1,"c":2}}', 'c'],
    ['[{"x":1},{"y":1,"y":1}]', 'y'],
    // The same key spelt two ways is the same key.
    ['{"amount":5,"\\u0061mount":7}', 'amount'],
    ['{"a\\"b":1,"a\\"b":2}', 'a"b'],
  ])('%s: %s', (text, key) => {
    expect(duplicateKey(text)).toBe(key);
  });

  test.each([
    '{"amount":5}',
    '{"a":{"x":1},"b":{"x":1}}',
    '[{"x":1},{"x":2}]',
    '{"a":"a","b":"a"}',
    '{"a":["a","a"],"b":"\\"a\\":1,\\"a\\""}',
    '{}',
    '[]',
    '"a"',
    '5',
  ])('%s: none', (text) => {
    expect(duplicateKey(text)).toBeNull();
  });
});

test('a top-up with its amount given twice is refused 400 naming the key, and credits nothing', async () => {
  expect((await ops('POST', '/admin/api/users', { name: 'twice', generate: true, credits: 10 })).status).toBe(201);
  const r = await ops('POST', '/admin/api/users/twice/credits', '{"amount":5,"amount":7}', {
    'Idempotency-Key': 'dup-key-0123456789',
  });
  expect(r.status).toBe(400);
  expect(r.json).toEqual({ code: 'INVALID_INPUT', message: expect.stringContaining('"amount"') });
  expect(r.json.message).toMatch(/more than once/);
  expect((await ops('GET', '/admin/api/users/twice')).json.credits).toBe(10);
  // A PATCH likewise.
  const p = await ops('PATCH', '/admin/api/users/twice', '{"credits":1,"dailyLimit":5,"credits":1000}');
  expect(p.status).toBe(400);
  expect(p.json.message).toContain('"credits"');
  expect((await ops('GET', '/admin/api/users/twice')).json.credits).toBe(10);
});

test('a new username with an invisible character is refused 400, the character named', async () => {
  for (const [name, code] of [
    ['me\u200bter', 'U+200B'],
    ['\u202eretem', 'U+202E'],
    ['me\ufeffter', 'U+FEFF'],
  ]) {
    const r = await ops('POST', '/admin/api/users', { name: 'meter', username: name });
    expect(r.status).toBe(400);
    expect(r.json.code).toBe('INVALID_INPUT');
    expect(r.json.message).toMatch(/invisible or formatting characters/);
    expect(r.json.message).toContain(code);
    expect(await store.accounts.getAccountByName('meter')).toBeNull();
  }
  expect((await ops('POST', '/admin/api/users', { name: 'meter', username: 'meter-username-7f3e2a9c' })).status).toBe(
    201,
  );
  // A name holds no invisible character either.
  expect((await ops('POST', '/admin/api/users', { name: 'me\u200bter', generate: true })).status).toBe(400);
});
