// The admin API's OpenAPI 3.1 document (issue 27, 4): served at /admin/openapi.json to a token
// holder, valid by the validator the JSON API's document is held to, and naming every path of the
// issue's table with the methods the issue gives; what it says about a body is what the router checks.

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { openStore } from '../../src/store/open';
import type { VehicleStore } from '../../src/store/store';
import { client, startAdmin, TOKENS, type TestAdmin } from '../helpers/admin';

let store: VehicleStore;
let admin: TestAdmin;
let raw: string;
let doc: {
  openapi: string;
  paths: Record<
    string,
    Record<string, { requestBody?: { content: Record<string, { schema: { properties: Record<string, unknown> } }> } }>
  >;
};

beforeAll(async () => {
  store = openStore('sqlite::memory:');
  admin = await startAdmin(store);
  const r = await client(admin.url, TOKENS[0].token)('GET', '/admin/openapi.json');
  expect(r.status).toBe(200);
  raw = r.text;
  doc = JSON.parse(raw) as typeof doc;
});
afterAll(async () => {
  await admin.close();
  await store.close();
});

test('it is a valid OpenAPI 3.1 document', () => {
  const r = spawnSync(process.execPath, [path.join(__dirname, '../helpers/openapi-validate.mjs')], {
    input: raw,
    encoding: 'utf8',
  });
  expect(r.stderr).toBe('');
  expect(JSON.parse(r.stdout)).toEqual({ valid: true, version: '3.1', errors: null });
  expect(doc.openapi).toBe('3.1.0');
});

test("it names every path of the issue's table with its methods", () => {
  // The table of issue 27, by hand.
  const expected: Record<string, string[]> = {
    '/admin/api/users': ['get', 'post'],
    '/admin/api/users/{name}': ['get', 'patch', 'delete'],
    '/admin/api/users/{name}/credits': ['post'],
    '/admin/api/users/{name}/disable': ['post'],
    '/admin/api/users/{name}/enable': ['post'],
    '/admin/api/users/{name}/usage': ['get'],
    '/admin/api/audit': ['get'],
    '/admin/api/usage': ['get'],
  };
  for (const [p, methods] of Object.entries(expected))
    expect(Object.keys(doc.paths[p] ?? {}).sort()).toEqual([...methods].sort());
});

test('a field the document does not list for a body is refused by the router, one it lists is taken', async () => {
  const fields = Object.keys(
    doc.paths['/admin/api/users/{name}'].patch.requestBody?.content['application/json'].schema.properties ?? {},
  );
  expect(fields.sort()).toEqual(['allow', 'credits', 'dailyLimit', 'rate']);
  const ops = client(admin.url, TOKENS[0].token);
  await ops('POST', '/admin/api/users', { name: 'doc', generate: true });
  expect((await ops('PATCH', '/admin/api/users/doc', { dailyLimit: 5 })).status).toBe(200);
  expect((await ops('PATCH', '/admin/api/users/doc', { username: 'renamed' })).status).toBe(400);
});
