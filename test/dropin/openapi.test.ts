// The JSON API's OpenAPI document (issue 11): served at /api/json.aspx/openapi.json, valid OpenAPI
// 3.1 by a real validator (@seriousme/openapi-schema-validator), naming every operation of the
// WSDL, and every path in it answering when called as it says, with the sample data's demo plates.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { basic } from '../helpers/json';
import { demo } from '../helpers/sample';
import { startServer, type TestServer } from '../helpers/server';

interface Param {
  name?: string;
  in?: string;
  required?: boolean;
  $ref?: string;
}
interface Doc {
  openapi: string;
  servers: Array<{ url: string }>;
  paths: Record<
    string,
    {
      get: {
        operationId: string;
        parameters: Param[];
        responses: Record<string, { content?: Record<string, unknown> }>;
      };
    }
  >;
  components: { parameters: Record<string, Param>; securitySchemes: Record<string, { type: string; scheme?: string }> };
}

let server: TestServer;
let doc: Doc;
let raw: string;
beforeAll(async () => {
  server = await startServer({ PUBLIC_URL: 'https://reg.example.com' });
  const res = await fetch(`${server.url}/api/json.aspx/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  raw = await res.text();
  doc = JSON.parse(raw) as Doc;
});
afterAll(() => server.close());

test('it is a valid OpenAPI 3.1 document', () => {
  const r = spawnSync(process.execPath, [path.join(__dirname, '../helpers/openapi-validate.mjs')], {
    input: raw,
    encoding: 'utf8',
  });
  expect(r.stderr).toBe('');
  const result = JSON.parse(r.stdout) as { valid: boolean; version: string; errors: unknown };
  expect(result.errors).toBeNull();
  expect(result).toMatchObject({ valid: true, version: '3.1' });
  expect(doc.openapi).toMatch(/^3\.1\./);
});

test('it names every operation of the WSDL once, with Basic authentication and the public URL', () => {
  const wsdl = fs.readFileSync(path.resolve(__dirname, '../../wsdl/reg.wsdl'), 'utf8');
  const portType = /<wsdl:portType name="RegSoap">([\s\S]*?)<\/wsdl:portType>/.exec(wsdl)?.[1] ?? '';
  const fromWsdl = [...portType.matchAll(/<wsdl:operation name="(\w+)"/g)].map((m) => m[1]).sort();
  expect(fromWsdl.length).toBe(31);
  const ids = Object.values(doc.paths)
    .map((p) => p.get.operationId)
    .sort();
  expect(ids).toEqual(fromWsdl);
  expect(Object.values(doc.components.securitySchemes)).toContainEqual(
    expect.objectContaining({ type: 'http', scheme: 'basic' }),
  );
  expect(doc.servers[0].url).toBe('https://reg.example.com');
});

test('every path in it answers as it says, for its demo plate', async () => {
  const resolve = (p: Param): Param => (p.$ref ? doc.components.parameters[p.$ref.split('/').pop() as string] : p);
  for (const [template, item] of Object.entries(doc.paths)) {
    const op = item.get.operationId;
    const sample = demo(op);
    let url = template;
    for (const p of item.get.parameters.map(resolve)) {
      if (p.in !== 'path') continue;
      const value = p.name === 'RegistrationNumber' ? sample.registration : (sample.state as string);
      expect([op, p.required]).toEqual([op, true]);
      url = url.replace(`{${p.name}}`, encodeURIComponent(value));
    }
    expect(url).not.toMatch(/[{}]/);
    const res = await fetch(server.url + url, { headers: { Authorization: basic('demo') } });
    const body = await res.text();
    expect([op, res.status]).toEqual([op, 200]);
    expect(Object.keys(item.get.responses['200'].content ?? {})).toEqual(['application/json']);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(typeof JSON.parse(body)).toBe('object');
  }
});
