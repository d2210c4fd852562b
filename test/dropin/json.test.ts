// The JSON API (README, JSON API; issue 11) as a client with HTTP Basic authentication uses it:
// every operation, the vehicleJson object byte for byte as SOAP carries it, the errors as
// {"code","message"} with the error table's status, 401 with a challenge when no username is
// given, HEAD, OPTIONS and CORS. Expected values come from the sample data, the README and the issue.

import { createHash } from 'node:crypto';
import { OPERATIONS } from '../../src/contract/operations';
import { call, fetchAnswer as get, type Answer } from '../helpers/call';
import { basic, callJson } from '../helpers/json';
import { demo, demoParams } from '../helpers/sample';
import { startServer, type TestServer } from '../helpers/server';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

let server: TestServer;
let registered: TestServer;
let limited: TestServer;
let cors: TestServer;
let anyOrigin: TestServer;
beforeAll(async () => {
  server = await startServer();
  registered = await startServer({ USERNAME_POLICY: 'registered' });
  await registered.store.accounts.putAccount({ username: key('alice'), credits: null });
  limited = await startServer({ RATE_LIMIT: '0.001', RATE_LIMIT_BURST: '0' });
  cors = await startServer({ CORS_ORIGINS: 'https://app.example.com,http://localhost:3000' });
  anyOrigin = await startServer({ CORS_ORIGINS: '*' });
});
afterAll(async () => {
  await Promise.all([server, registered, limited, cors, anyOrigin].map((s) => s.close()));
});

const xmlUnescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

function expectJsonError(a: Answer, status: number, code: string): { code: string; message: string } {
  expect([a.status, a.headers.get('content-type')]).toEqual([status, 'application/json; charset=utf-8']);
  expect(a.headers.get('x-error-code')).toBe(code);
  const body = JSON.parse(a.body) as { code: string; message: string };
  expect(Object.keys(body).sort()).toEqual(['code', 'message']);
  expect(body.code).toBe(code);
  expect(body.message.length).toBeGreaterThan(10);
  return body;
}

/** An instant as docs/calling.md shows AnswerAsOf: ISO 8601, UTC, to the second. */
const ISO_SECOND = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) as unknown;

describe('every operation, username by Basic authentication', () => {
  test.each(OPERATIONS.map((op) => [op.name, op.params] as const))('%s', async (name, paramNames) => {
    const params = demoParams(name, paramNames);
    const a = await callJson(server.url, name, params);
    expect(a.status).toBe(200);
    expect(a.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Number(a.headers.get('content-length'))).toBe(Buffer.byteLength(a.body));
    const soap = await call(server.url, 'soap11', name, params);
    const sample = demo(name);
    if (sample.vehicle) {
      // The vehicleJson object itself, byte for byte as SOAP's vehicleJson carries it.
      const vehicleJson = xmlUnescape(/<vehicleJson>([^<]*)<\/vehicleJson>/.exec(soap.body)?.[1] ?? '');
      expect(a.body).toBe(vehicleJson);
      // The sample record, and where it came from and as of when (docs/calling.md, "The age of an answer").
      expect(JSON.parse(a.body)).toEqual({ ...sample.vehicle, AnswerSource: 'import', AnswerAsOf: ISO_SECOND });
      const asOf = (JSON.parse(a.body) as { AnswerAsOf: string }).AnswerAsOf;
      expect(a.headers.get('last-modified')).toBe(new Date(asOf).toUTCString());
      expect(a.headers.get('age')).toBeNull();
    } else {
      const mot = JSON.parse(a.body) as Record<string, unknown>;
      const tests = sample.mot?.tests as Array<Record<string, unknown>>;
      expect(Object.keys(mot)).toEqual(
        expect.arrayContaining(['Tests', 'Json', 'ExtendedInformation', 'ExtendedInformationJson']),
      );
      expect((mot.Tests as unknown[]).length).toBe(tests.length);
      expect((mot.Tests as Array<Record<string, unknown>>)[0].TestDate).toBe(tests[0].TestDate);
      expect(mot.taxDate).toBe(sample.mot?.taxDate);
      expect(mot.Json).toBe(xmlUnescape(/<Json>([^<]*)<\/Json>/.exec(soap.body)?.[1] ?? ''));
      expect(mot.ExtendedInformationJson).toBe(
        xmlUnescape(/<ExtendedInformationJson>([^<]*)<\/ExtendedInformationJson>/.exec(soap.body)?.[1] ?? ''),
      );
      expect(mot.ExtendedInformation).toEqual(sample.mot?.extendedInformation ?? []);
      expect(mot.AnswerSource).toBe('import');
      expect(a.headers.get('last-modified')).toBe(new Date(mot.AnswerAsOf as string).toUTCString());
    }
  });
});

describe('parameters', () => {
  test('the password is ignored; username as a query parameter in any case works too', async () => {
    const a = await get(server.url, '/api/json.aspx/Check/RG11ABC', {
      headers: { Authorization: basic('demo', 'one') },
    });
    const b = await get(server.url, '/api/json.aspx/Check/RG11ABC', {
      headers: { Authorization: basic('demo', 'two') },
    });
    const c = await get(server.url, '/api/json.aspx/Check/RG11ABC?username=demo');
    const d = await get(server.url, '/api/json.aspx/Check/RG11ABC?UserName=demo');
    for (const x of [a, b, c, d]) expect(x.status).toBe(200);
    expect(new Set([a.body, b.body, c.body, d.body]).size).toBe(1);
  });

  test('path segments are percent-decoded: spaces, a state by full name, Cyrillic letters', async () => {
    expect((await get(server.url, '/api/json.aspx/Check/RG11%20ABC?username=demo')).status).toBe(200);
    expect(
      (await get(server.url, '/api/json.aspx/CheckAustralia/ABC123/New%20South%20Wales?username=demo')).status,
    ).toBe(200);
    expect(
      (await get(server.url, `/api/json.aspx/CheckUkraine/${encodeURIComponent('АА1234ВС')}?username=demo`)).status,
    ).toBe(200);
    expect((await get(server.url, '/api/json.aspx/CheckCanada/ABCD%20123/on?username=demo')).status).toBe(200);
  });

  test('UKMOT takes Model as a query parameter, its name in any case', async () => {
    expect((await get(server.url, '/api/json.aspx/UKMOT/RG11ABC?Model=FOCUS&username=demo')).status).toBe(200);
    expectJsonError(
      await get(server.url, '/api/json.aspx/UKMOT/RG11ABC?model=CORSA&username=demo'),
      404,
      'VEHICLE_NOT_FOUND',
    );
  });
});

describe('errors: the error table status and {"code","message"}', () => {
  test('no username at all is 401 with a Basic challenge', async () => {
    for (const path of ['/api/json.aspx/Check/RG11ABC', '/api/json.aspx/Check/RG11ABC?username=']) {
      const a = await get(server.url, path);
      expectJsonError(a, 401, 'MISSING_PARAMETER');
      expect(a.headers.get('www-authenticate')).toMatch(/^Basic realm="reglookup"/);
    }
  });

  test('VEHICLE_NOT_FOUND 404 with "No vehicle found"; UNKNOWN_USERNAME 403 with "Your username is incorrect"', async () => {
    expect(
      expectJsonError(
        await callJson(server.url, 'Check', { RegistrationNumber: 'ZZ99ZZZ', username: 'demo' }),
        404,
        'VEHICLE_NOT_FOUND',
      ).message,
    ).toContain('No vehicle found');
    expect(
      expectJsonError(
        await callJson(registered.url, 'Check', { RegistrationNumber: 'RG11ABC', username: 'mallory' }),
        403,
        'UNKNOWN_USERNAME',
      ).message,
    ).toContain('Your username is incorrect');
    expect((await callJson(registered.url, 'Check', { RegistrationNumber: 'RG11ABC', username: 'alice' })).status).toBe(
      200,
    );
  });

  test('parameters: a missing state, an unknown state, a bad registration, bad percent-encoding, two usernames', async () => {
    expectJsonError(await get(server.url, '/api/json.aspx/CheckUSA/7ABC123?username=demo'), 400, 'MISSING_PARAMETER');
    expectJsonError(
      await get(server.url, '/api/json.aspx/CheckUSA/7ABC123/Narnia?username=demo'),
      400,
      'INVALID_PARAMETER',
    );
    expectJsonError(
      await get(server.url, `/api/json.aspx/Check/${'A'.repeat(33)}?username=demo`),
      400,
      'INVALID_PARAMETER',
    );
    expectJsonError(await get(server.url, '/api/json.aspx/Check/RG11%FF?username=demo'), 400, 'MALFORMED_REQUEST');
    expectJsonError(await get(server.url, '/api/json.aspx/Check/?username=demo'), 400, 'MISSING_PARAMETER');
    expectJsonError(
      await get(server.url, '/api/json.aspx/Check/RG11ABC?username=a&USERNAME=b'),
      400,
      'INVALID_PARAMETER',
    );
    expectJsonError(
      await get(server.url, '/api/json.aspx/Check/RG11ABC?username=other', {
        headers: { Authorization: basic('demo') },
      }),
      400,
      'INVALID_PARAMETER',
    );
  });

  test('credentials that are not Basic count as none (401); Basic that is not UTF-8 is MALFORMED_REQUEST', async () => {
    const bearer = await get(server.url, '/api/json.aspx/Check/RG11ABC', { headers: { Authorization: 'Bearer demo' } });
    expectJsonError(bearer, 401, 'MISSING_PARAMETER');
    const notUtf8 = `Basic ${Buffer.from([0x64, 0xff, 0x3a, 0x78]).toString('base64')}`;
    expectJsonError(
      await get(server.url, '/api/json.aspx/Check/RG11ABC', { headers: { Authorization: notUtf8 } }),
      400,
      'MALFORMED_REQUEST',
    );
  });

  test('an unknown operation, one in the wrong case, or a path too long is 404 UNKNOWN_OPERATION', async () => {
    expectJsonError(await get(server.url, '/api/json.aspx/CheckMars/X?username=demo'), 404, 'UNKNOWN_OPERATION');
    expect(
      expectJsonError(
        await get(server.url, '/api/json.aspx/checkusa/7ABC123/CA?username=demo'),
        404,
        'UNKNOWN_OPERATION',
      ).message,
    ).toContain("did you mean 'CheckUSA'");
    expectJsonError(await get(server.url, '/api/json.aspx/Check/RG11ABC/CA?username=demo'), 404, 'UNKNOWN_OPERATION');
  });

  test('RATE_LIMITED is 429 with Retry-After', async () => {
    expect((await callJson(limited.url, 'Check', { RegistrationNumber: 'RG11ABC', username: 'burst' })).status).toBe(
      200,
    );
    const a = await callJson(limited.url, 'Check', { RegistrationNumber: 'RG11ABC', username: 'burst' });
    expectJsonError(a, 429, 'RATE_LIMITED');
    expect(Number(a.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('methods', () => {
  test('HEAD answers the GET headers without a body', async () => {
    const g = await get(server.url, '/api/json.aspx/Check/RG11ABC?username=demo');
    const res = await fetch(`${server.url}/api/json.aspx/Check/RG11ABC?username=demo`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(g.body)));
    expect(await res.text()).toBe('');
  });

  test('OPTIONS is 204 with Allow; other methods are 405 METHOD_NOT_ALLOWED', async () => {
    const o = await fetch(`${server.url}/api/json.aspx/Check/RG11ABC`, { method: 'OPTIONS' });
    expect(o.status).toBe(204);
    expect(o.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    const p = await get(server.url, '/api/json.aspx/Check/RG11ABC?username=demo', { method: 'POST' });
    expectJsonError(p, 405, 'METHOD_NOT_ALLOWED');
    expect(p.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });
});

describe('CORS (CORS_ORIGINS)', () => {
  const origin = (o: string) => ({ headers: { Origin: o, Authorization: basic('demo') } });

  test('by default no origin is allowed', async () => {
    const a = await get(server.url, '/api/json.aspx/Check/RG11ABC', origin('https://app.example.com'));
    expect(a.status).toBe(200);
    expect(a.headers.get('access-control-allow-origin')).toBeNull();
  });

  test('a listed origin is allowed, on answers and errors; another is not', async () => {
    const a = await get(cors.url, '/api/json.aspx/Check/RG11ABC', origin('https://app.example.com'));
    expect(a.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(a.headers.get('vary')).toMatch(/Origin/);
    const e = await get(cors.url, '/api/json.aspx/Check/ZZ99ZZZ', origin('http://localhost:3000'));
    expect(e.status).toBe(404);
    expect(e.headers.get('access-control-allow-origin')).toBe('http://localhost:3000');
    expect(e.headers.get('access-control-expose-headers')).toMatch(/X-Error-Code/);
    const other = await get(cors.url, '/api/json.aspx/Check/RG11ABC', origin('https://evil.example.net'));
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  test('a preflight for Authorization is answered for a listed origin', async () => {
    const res = await fetch(`${cors.url}/api/json.aspx/Check/RG11ABC`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://app.example.com',
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'authorization',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(res.headers.get('access-control-allow-methods')).toMatch(/GET/);
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
  });

  test('CORS_ORIGINS=* allows any origin', async () => {
    const a = await get(anyOrigin.url, '/api/json.aspx/Check/RG11ABC', origin('https://anything.example'));
    expect(a.headers.get('access-control-allow-origin')).toBe('*');
  });
});
