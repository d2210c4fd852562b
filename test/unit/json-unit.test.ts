// The JSON API, the credits endpoint and the service address's GET forms (src/transport/json.ts,
// credits.ts, help.ts) in an express app of their own, with the real lookup and credits services
// over a store and accounts written here: the README's claims for these three GET forms, without
// loading the whole app and its sample data for each test (Stryker runs the tests that cover a mutant, one mutant at
// a time). Expected answers: the README's (JSON API, Credits, Help pages, Errors) and hand-written.

import { createHash } from 'node:crypto';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Accounts, Admitted } from '../../src/accounts/accounts';
import { CreditsService } from '../../src/service/credits';
import { LookupError } from '../../src/service/errors';
import { LookupService } from '../../src/service/lookup';
import type { RecordKey, VehicleStore } from '../../src/store/store';
import { creditsRouter } from '../../src/transport/credits';
import { helpRouter } from '../../src/transport/help';
import { jsonHandler } from '../../src/transport/json';
import type { Logger } from '../../src/ops/logger';
import { basic } from '../helpers/json';
import { fetchAnswer as get } from '../helpers/call';

const sha256 = (u: string) => createHash('sha256').update(u, 'utf8').digest('hex');

const WSDL = fs.readFileSync(path.resolve(__dirname, '../../wsdl/reg.wsdl'), 'utf8');
const VEHICLE = '{"Description":"FORD FOCUS","CarMake":{"CurrentTextValue":"FORD"}}';
const RECORDS: Record<string, string> = {
  'Check/RG11ABC/': VEHICLE,
  'CheckUSA/7ABC123/CA': VEHICLE,
  'CheckCanada/ABCD123/ON': VEHICLE,
  'CheckAustralia/ABC123/NSW': VEHICLE,
};

interface Harness {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * The three routers as the app mounts them, with USERNAME_POLICY=registered accounts: garage (7 credits) and fleet;
 * mallory is refused.
 */
async function harness(corsOrigins: readonly string[]): Promise<Harness> {
  const store = {
    async get(key: RecordKey) {
      const payload = RECORDS[`${key.operation}/${key.registration}/${key.state}`];
      return payload === undefined ? null : { payload };
    },
    accounts: {
      // The store knows an account by its key: SHA-256 of the username (docs/security.md).
      async getAccount(key: string) {
        if (key === sha256('garage')) return { username: key, name: 'garage', credits: 7, keyUntil: null };
        if (key === sha256('fleet')) return { username: key, name: 'fleet', credits: null, keyUntil: null };
        return null;
      },
    },
  } as unknown as VehicleStore;
  const accounts = {
    async admit(username: string): Promise<Admitted> {
      if (username === 'mallory')
        throw new LookupError('UNKNOWN_USERNAME', 'Your username is incorrect or not allowed here');
      return { username, key: username, account: null };
    },
    // Unmetered callers: the store is read, then (nothing) charged.
    async findCharged() {
      return undefined;
    },
    async charge() {},
    record() {},
  } as unknown as Accounts;
  const logger = { error: () => undefined } as unknown as Logger;
  const app = express();
  app.use(
    jsonHandler({
      service: new LookupService(store, accounts),
      logger,
      corsOrigins,
      publicUrl: null,
      trustProxy: { list: [], has: () => false },
    }),
  );
  app.use(creditsRouter(new CreditsService(store, 'registered'), logger));
  app.use(helpRouter({ wsdl: WSDL, namespace: 'http://regcheck.org.uk', publicUrl: null }));
  const s = app.listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const port = (s.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  };
}

const started = new Map<string, Promise<Harness>>();
const lazily = (key: string, origins: readonly string[]) => () => {
  let p = started.get(key);
  if (!p) started.set(key, (p = harness(origins)));
  return p;
};
const plainHarness = lazily('plain', []);
const corsHarness = lazily('cors', ['https://app.example.com']);
const anyOriginHarness = lazily('any', ['*']);
afterAll(async () => {
  await Promise.all([...started.values()].map(async (p) => (await p).close()));
});

let server: Harness;
beforeEach(async () => {
  server = await plainHarness();
});

interface Got {
  status: number;
  headers: Headers;
  body: string;
}

/** A GET with the Host header given (fetch does not let a caller set it). */
function getAs(host: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: server.port, path, headers: { Host: host } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
    req.on('error', reject);
  });
}

function jsonError(a: Got, status: number, code: string): string {
  expect([
    a.status,
    a.headers.get('content-type'),
    a.headers.get('x-error-code'),
    a.headers.get('x-content-type-options'),
  ]).toEqual([status, 'application/json; charset=utf-8', code, 'nosniff']);
  const body = JSON.parse(a.body) as { code: string; message: string };
  expect(Object.keys(body)).toEqual(['code', 'message']);
  expect(body.code).toBe(code);
  expect(Number(a.headers.get('content-length'))).toBe(Buffer.byteLength(a.body));
  return body.message;
}

describe('JSON API paths', () => {
  test("the README's not-found example, byte for byte", async () => {
    const a = await get(server.url, '/api/json.aspx/Check/ZZ99ZZZ?username=demo');
    expect(jsonError(a, 404, 'VEHICLE_NOT_FOUND')).toBe("No vehicle found for registration 'ZZ99ZZZ' (United Kingdom)");
    expect(a.body).toBe(
      '{"code":"VEHICLE_NOT_FOUND","message":"No vehicle found for registration \'ZZ99ZZZ\' (United Kingdom)"}',
    );
  });

  test('a 200 is the vehicle object with nosniff and its length', async () => {
    const a = await get(server.url, '/api/json.aspx/Check/RG11ABC?username=demo');
    expect([a.status, a.headers.get('content-type'), a.headers.get('x-content-type-options')]).toEqual([
      200,
      'application/json; charset=utf-8',
      'nosniff',
    ]);
    expect(Number(a.headers.get('content-length'))).toBe(Buffer.byteLength(a.body));
    expect(JSON.parse(a.body)).toHaveProperty('Description');
    expect(a.headers.get('access-control-allow-origin')).toBeNull();
    expect(a.headers.get('vary')).toBeNull();
  });

  test('a trailing slash is the same path; the path prefix matches in any case', async () => {
    const plain = await get(server.url, '/api/json.aspx/Check/RG11ABC?username=demo');
    expect(await get(server.url, '/api/json.aspx/Check/RG11ABC/?username=demo')).toMatchObject({
      status: 200,
      body: plain.body,
    });
    expect(await get(server.url, '/API/Json.ASPX/Check/RG11ABC?username=demo')).toMatchObject({
      status: 200,
      body: plain.body,
    });
    expect((await get(server.url, '/api/json.aspx/CheckUSA/7ABC123/CA/?username=demo')).status).toBe(200);
  });

  test('the JSON path alone, or with a slash, asks for an operation', async () => {
    for (const p of ['/api/json.aspx', '/api/json.aspx/', '/api/json.aspx?username=demo']) {
      expect(jsonError(await get(server.url, p), 404, 'UNKNOWN_OPERATION')).toBe(
        'Give an operation: /api/json.aspx/{Operation}/{RegistrationNumber}; the operations are in /api/json.aspx/openapi.json',
      );
    }
    // A path that only starts like it is not the JSON API.
    expect((await get(server.url, '/api/json.aspxx/Check/RG11ABC?username=demo')).headers.get('content-type')).not.toBe(
      'application/json; charset=utf-8',
    );
  });

  test('a segment too many names where the operation is served; the state operations take one more', async () => {
    expect(
      jsonError(await get(server.url, '/api/json.aspx/Check/RG11ABC/CA?username=demo'), 404, 'UNKNOWN_OPERATION'),
    ).toBe('Nothing is served at that path; Check is at /api/json.aspx/Check/{RegistrationNumber}');
    expect(
      jsonError(await get(server.url, '/api/json.aspx/CheckUSA/7ABC123/CA/X?username=demo'), 404, 'UNKNOWN_OPERATION'),
    ).toBe('Nothing is served at that path; CheckUSA is at /api/json.aspx/CheckUSA/{RegistrationNumber}/{State}');
  });

  test('an unknown operation is named; one in the wrong case gets the right name; bad percent-encoding says where', async () => {
    expect(jsonError(await get(server.url, '/api/json.aspx/CheckMars/X?username=demo'), 404, 'UNKNOWN_OPERATION')).toBe(
      "Unknown operation 'CheckMars'",
    );
    expect(
      jsonError(await get(server.url, '/api/json.aspx/checkusa/7ABC123/CA?username=demo'), 404, 'UNKNOWN_OPERATION'),
    ).toBe("Unknown operation 'checkusa' (did you mean 'CheckUSA'? operation names are case-sensitive)");
    expect(jsonError(await get(server.url, '/api/json.aspx/Check%FF/X?username=demo'), 400, 'MALFORMED_REQUEST')).toBe(
      'The operation name in the path is not valid percent-encoded UTF-8',
    );
    expect(
      jsonError(await get(server.url, '/api/json.aspx/Check/RG11%C3%28?username=demo'), 400, 'MALFORMED_REQUEST'),
    ).toBe('The registration in the path is not valid percent-encoded UTF-8');
    expect(
      jsonError(await get(server.url, '/api/json.aspx/CheckUSA/7ABC123/%FF?username=demo'), 400, 'MALFORMED_REQUEST'),
    ).toBe('The State in the path is not valid percent-encoded UTF-8');
  });

  test('a registration or state left out of the path is MISSING_PARAMETER', async () => {
    expect(jsonError(await get(server.url, '/api/json.aspx/Check?username=demo'), 400, 'MISSING_PARAMETER')).toBe(
      "Missing required parameter 'RegistrationNumber' for Check",
    );
    expect(
      jsonError(await get(server.url, '/api/json.aspx/CheckUSA/7ABC123?username=demo'), 400, 'MISSING_PARAMETER'),
    ).toBe("Missing required parameter 'State' for CheckUSA");
  });

  test('the state is taken from the path for the state operations', async () => {
    expect((await get(server.url, '/api/json.aspx/CheckCanada/ABCD%20123/Ontario?username=demo')).status).toBe(200);
    const m = jsonError(
      await get(server.url, '/api/json.aspx/CheckUSA/7ABC123/Narnia?username=demo'),
      400,
      'INVALID_PARAMETER',
    );
    expect(m.startsWith("State 'Narnia' ")).toBe(true);
  });
});

describe('JSON API username (README: Basic or ?username=, both different is INVALID_PARAMETER, none is 401)', () => {
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
  const PATH = '/api/json.aspx/Check/RG11ABC';

  test('both given and the same is one username; both different is INVALID_PARAMETER with the README reason', async () => {
    expect((await get(server.url, `${PATH}?username=demo`, { headers: { Authorization: basic('demo') } })).status).toBe(
      200,
    );
    expect(
      jsonError(
        await get(server.url, `${PATH}?username=other`, { headers: { Authorization: basic('demo') } }),
        400,
        'INVALID_PARAMETER',
      ),
    ).toBe('The username was given both by Basic authentication and in the query string, differently; give it once');
  });

  test('Basic credentials with an empty username leave the query username to be used', async () => {
    expect(
      (await get(server.url, `${PATH}?username=demo`, { headers: { Authorization: `Basic ${b64(':pw')}` } })).status,
    ).toBe(200);
    const a = await get(server.url, PATH, { headers: { Authorization: `Basic ${b64(':pw')}` } });
    expect(jsonError(a, 401, 'MISSING_PARAMETER')).toBe(
      'No username: give it by HTTP Basic authentication (Authorization: Basic base64(username:password)) or as ?username=',
    );
    expect(a.headers.get('www-authenticate')).toBe('Basic realm="reglookup", charset="UTF-8"');
  });

  test('a username of spaces, by Basic or query, is no username: 401', async () => {
    expect(
      jsonError(
        await get(server.url, PATH, { headers: { Authorization: `Basic ${b64('   :pw')}` } }),
        401,
        'MISSING_PARAMETER',
      ),
    ).toMatch(/^No username/);
    expect(jsonError(await get(server.url, `${PATH}?username=%20%20`), 401, 'MISSING_PARAMETER')).toMatch(
      /^No username/,
    );
    // Spaces by Basic and a name in the query: the Basic one is taken, and it is empty.
    expect(
      (await get(server.url, `${PATH}?username=demo`, { headers: { Authorization: `Basic ${b64('   :pw')}` } })).status,
    ).toBe(400);
  });

  test('a registered username (USERNAME_POLICY=registered) by Basic authentication is served; another is 403', async () => {
    const registered = server;
    expect((await get(registered.url, PATH, { headers: { Authorization: basic('fleet') } })).status).toBe(200);
    expect(
      jsonError(
        await get(registered.url, PATH, { headers: { Authorization: basic('mallory') } }),
        403,
        'UNKNOWN_USERNAME',
      ),
    ).toContain('Your username is incorrect');
  });
});

describe('JSON API methods and CORS', () => {
  test('HEAD of an error answers its headers without a body', async () => {
    const res = await fetch(`${server.url}/api/json.aspx/Check/ZZ99ZZZ?username=demo`, { method: 'HEAD' });
    expect([res.status, res.headers.get('x-error-code'), res.headers.get('content-type')]).toEqual([
      404,
      'VEHICLE_NOT_FOUND',
      'application/json; charset=utf-8',
    ]);
    expect(Number(res.headers.get('content-length'))).toBeGreaterThan(0);
    expect(await res.text()).toBe('');
  });

  test('OPTIONS without CORS: 204, Allow, nothing for a browser', async () => {
    const res = await fetch(`${server.url}/api/json.aspx/Check/RG11ABC`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example.com' },
    });
    expect([res.status, res.headers.get('allow'), res.headers.get('content-length')]).toEqual([
      204,
      'GET, HEAD, OPTIONS',
      '0',
    ]);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('access-control-allow-methods')).toBeNull();
    expect(res.headers.get('access-control-allow-headers')).toBeNull();
    expect(res.headers.get('access-control-max-age')).toBeNull();
  });

  test('a preflight from a listed origin is answered for GET with Authorization; from another, not', async () => {
    const cors = await corsHarness();
    const ok = await fetch(`${cors.url}/api/json.aspx/Check/RG11ABC`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example.com' },
    });
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(ok.headers.get('access-control-allow-methods')).toBe('GET, HEAD, OPTIONS');
    expect(ok.headers.get('access-control-allow-headers')).toBe('Authorization');
    expect(Number(ok.headers.get('access-control-max-age'))).toBeGreaterThan(0);
    expect(ok.headers.get('vary')).toBe('Origin');
    const other = await fetch(`${cors.url}/api/json.aspx/Check/RG11ABC`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://evil.example.net' },
    });
    expect(other.status).toBe(204);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect(other.headers.get('access-control-allow-methods')).toBeNull();
    expect(other.headers.get('vary')).toBe('Origin');
  });

  test('a listed origin may read the headers the README names (Retry-After, X-Error-Code, X-Request-Id, WWW-Authenticate, Age)', async () => {
    const cors = await corsHarness();
    const a = await get(cors.url, '/api/json.aspx/Check/RG11ABC', { headers: { Origin: 'https://app.example.com' } });
    expect(a.status).toBe(401);
    expect(a.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(a.headers.get('www-authenticate')).toBe('Basic realm="reglookup", charset="UTF-8"');
    const exposed = (a.headers.get('access-control-expose-headers') ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase());
    expect(exposed.sort()).toEqual(['age', 'retry-after', 'www-authenticate', 'x-error-code', 'x-request-id']);
    // Without an Origin header nothing is allowed, but the answer still varies by origin.
    const none = await get(cors.url, '/api/json.aspx/Check/RG11ABC?username=demo');
    expect(none.headers.get('access-control-allow-origin')).toBeNull();
    expect(none.headers.get('access-control-expose-headers')).toBeNull();
    expect(none.headers.get('vary')).toBe('Origin');
  });

  test('CORS_ORIGINS=*: any origin, as *, with no Vary; a method not allowed carries it too', async () => {
    const anyOrigin = await anyOriginHarness();
    const a = await get(anyOrigin.url, '/api/json.aspx/Check/RG11ABC?username=demo', {
      headers: { Origin: 'https://x.example' },
    });
    expect(a.headers.get('access-control-allow-origin')).toBe('*');
    expect(a.headers.get('vary')).toBeNull();
    const p = await get(anyOrigin.url, '/api/json.aspx/Check/RG11ABC?username=demo', {
      method: 'DELETE',
      headers: { Origin: 'https://x.example' },
    });
    expect(jsonError(p, 405, 'METHOD_NOT_ALLOWED')).toBe('DELETE is not allowed here; use GET');
    expect(p.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect(p.headers.get('access-control-allow-origin')).toBe('*');
    // No Origin, no browser: nothing to allow.
    const none = await get(anyOrigin.url, '/api/json.aspx/Check/RG11ABC?username=demo');
    expect(none.headers.get('access-control-allow-origin')).toBeNull();
    expect(none.headers.get('vary')).toBeNull();
  });

  test("the OpenAPI document is served at /api/json.aspx/openapi.json, naming the caller's host and the error codes", async () => {
    const a = await get(server.url, '/api/json.aspx/openapi.json');
    expect([a.status, a.headers.get('content-type')]).toEqual([200, 'application/json; charset=utf-8']);
    const doc = JSON.parse(a.body) as {
      openapi: string;
      servers: Array<{ url: string }>;
      paths: Record<string, unknown>;
    };
    expect(doc.openapi).toMatch(/^3\.1/);
    expect(doc.servers[0].url).toBe(server.url);
    expect(Object.keys(doc.paths)).toContain('/api/json.aspx/CheckUSA/{RegistrationNumber}/{State}');
    // The README's error table, each code named in the document.
    for (const code of ['MISSING_PARAMETER', 'VEHICLE_NOT_FOUND', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE'])
      expect(a.body).toContain(code);
    const head = await fetch(`${server.url}/API/JSON.ASPX/OPENAPI.JSON`, { method: 'HEAD' });
    expect([head.status, head.headers.get('content-length')]).toEqual([200, String(Buffer.byteLength(a.body))]);
  });
});

describe('credits (README, Credits; USERNAME_POLICY=registered)', () => {
  test('a bare integer, text/plain, not cached, nosniff; HEAD the headers alone', async () => {
    const registered = server;
    const a = await get(registered.url, '/ajax/getcredits.aspx?username=garage');
    expect([
      a.status,
      a.body,
      a.headers.get('content-type'),
      a.headers.get('cache-control'),
      a.headers.get('x-content-type-options'),
      a.headers.get('content-length'),
    ]).toEqual([200, '7', 'text/plain; charset=utf-8', 'no-store', 'nosniff', '1']);
    const head = await fetch(`${registered.url}/ajax/getcredits.aspx?username=garage`, { method: 'HEAD' });
    expect([head.status, head.headers.get('content-length'), await head.text()]).toEqual([200, '1', '']);
  });

  test('another method is 405 naming GET and the path; no username is MISSING_PARAMETER', async () => {
    const registered = server;
    const p = await get(registered.url, '/ajax/getcredits.aspx?username=garage', { method: 'PUT' });
    expect([p.status, p.headers.get('allow'), p.headers.get('x-error-code')]).toEqual([
      405,
      'GET, HEAD',
      'METHOD_NOT_ALLOWED',
    ]);
    expect(p.body).toBe('METHOD_NOT_ALLOWED: PUT is not allowed here; use GET /ajax/getcredits.aspx?username=NAME\n');
    const none = await get(registered.url, '/ajax/getcredits.aspx');
    expect([none.status, none.headers.get('x-error-code')]).toEqual([400, 'MISSING_PARAMETER']);
    const bad = await get(registered.url, '/ajax/getcredits.aspx?username=%FF');
    expect([bad.status, bad.headers.get('x-error-code')]).toEqual([400, 'MALFORMED_REQUEST']);
  });
});

describe('the service address (README, Help pages)', () => {
  test('HEAD of the WSDL and of a page: their headers, no body', async () => {
    for (const q of ['?WSDL', '', '?op=CheckUSA', '?disco']) {
      const g = await get(server.url, `/api/reg.asmx${q}`);
      const h = await fetch(`${server.url}/api/reg.asmx${q}`, { method: 'HEAD' });
      expect([h.status, h.headers.get('content-type'), h.headers.get('content-length')]).toEqual([
        200,
        g.headers.get('content-type'),
        String(Buffer.byteLength(g.body)),
      ]);
      expect(await h.text()).toBe('');
    }
  });

  test('the WSDL names the address each caller used, also for a second host after the first', async () => {
    const first = await get(server.url, '/api/reg.asmx?WSDL');
    expect(first.body).toContain(`location="${server.url}/api/reg.asmx"`);
    const other = await getAs('reg.example.com', '/api/reg.asmx?WSDL');
    expect(other).toContain('location="http://reg.example.com/api/reg.asmx"');
    expect(other).not.toContain(server.url);
    expect((await get(server.url, '/api/reg.asmx?WSDL')).body).toBe(first.body);
    expect(first.headers.get('content-length')).toBe(String(Buffer.byteLength(first.body)));
  });

  test('the WSDL for many hosts in turn: each still names its own', async () => {
    for (let i = 0; i < 40; i++) {
      expect(await getAs(`h${i}.example.com`, '/api/reg.asmx?WSDL')).toContain(
        `location="http://h${i}.example.com/api/reg.asmx"`,
      );
    }
    expect(await getAs('h0.example.com', '/api/reg.asmx?WSDL')).toContain(
      'location="http://h0.example.com/api/reg.asmx"',
    );
  });

  test('a method other than GET, HEAD and POST is METHOD_NOT_ALLOWED naming the SOAP POST', async () => {
    const a = await get(server.url, '/api/reg.asmx', { method: 'PUT', body: 'x' });
    expect([a.status, a.headers.get('allow'), a.headers.get('x-error-code')]).toEqual([
      405,
      'GET, HEAD, POST',
      'METHOD_NOT_ALLOWED',
    ]);
    expect(a.body).toBe('METHOD_NOT_ALLOWED: PUT is not allowed on /api/reg.asmx; SOAP requests are POSTs\n');
  });

  test('two asks at once are one plain INVALID_PARAMETER line; ?op= empty is the service page', async () => {
    const a = await get(server.url, '/api/reg.asmx?op=CheckUSA&disco');
    expect([a.status, a.headers.get('content-type')]).toEqual([400, 'text/plain; charset=utf-8']);
    expect(a.body).toBe(
      'INVALID_PARAMETER: The query names ?disco and ?op=; ask for one of ?WSDL, ?disco or ?op=NAME\n',
    );
    const empty = await get(server.url, '/api/reg.asmx?op=');
    expect(empty.status).toBe(200);
    expect(empty.body).toContain('<h2>Operations</h2>');
    expect(empty.headers.get('content-security-policy')).toMatch(/^default-src 'none'; style-src 'sha256-/);
  });

  test("the service page links the WSDL, DISCO and OpenAPI documents at the caller's address; an operation page's form posts to its path", async () => {
    const page = (await get(server.url, '/api/reg.asmx')).body;
    expect(page).toContain(`<a href="${server.url}/api/reg.asmx?WSDL">${server.url}/api/reg.asmx?WSDL</a>`);
    expect(page).toContain(`<a href="${server.url}/api/reg.asmx?disco">${server.url}/api/reg.asmx?disco</a>`);
    expect(page).toContain(
      `<a href="${server.url}/api/json.aspx/openapi.json">${server.url}/api/json.aspx/openapi.json</a>`,
    );
    expect(page).toContain(`HTTP GET and HTTP POST at <code>${server.url}/api/reg.asmx</code>`);
    const op = (await get(server.url, '/api/reg.asmx?op=CheckUSA')).body;
    expect(op).toContain('<form method="post" action="/api/reg.asmx/CheckUSA" accept-charset="utf-8">');
    expect(op).toContain('<p><a href="/api/reg.asmx">Click here for a complete list of operations.</a></p>');
    expect(op).toContain(`Host: ${new URL(server.url).host}`);
    const unknown = await get(server.url, '/api/reg.asmx?op=checkusa');
    expect([unknown.status, unknown.headers.get('content-type')]).toEqual([404, 'text/html; charset=utf-8']);
    expect(unknown.body).toContain('Did you mean <a href="?op=CheckUSA">CheckUSA</a>?');
  });

  test('the DISCO document is text/xml with nosniff but no page policy', async () => {
    const a = await get(server.url, '/api/reg.asmx?disco');
    expect([
      a.headers.get('content-type'),
      a.headers.get('x-content-type-options'),
      a.headers.get('content-security-policy'),
    ]).toEqual(['text/xml; charset=utf-8', 'nosniff', null]);
  });
});

// What ASP.NET does with these addresses, and the README's "given twice" rule, for the three GET
// forms beside the SOAP endpoint. Expected answers written by hand from the README's examples.
describe('paths as ASP.NET serves them, and a query name given twice', () => {
  test('the credits page answers in any case and with a trailing slash (ASP.NET serves page.aspx/ as page.aspx)', async () => {
    for (const p of [
      '/Ajax/GetCredits.aspx?username=garage',
      '/AJAX/GETCREDITS.ASPX?username=garage',
      '/ajax/getcredits.aspx/?username=garage',
    ]) {
      const a = await get(server.url, p);
      expect([p, a.status, a.body]).toEqual([p, 200, '7']);
    }
  });

  test('the service address shows its pages and WSDL in any case, as ASP.NET paths are', async () => {
    const page = await get(server.url, '/API/REG.ASMX');
    expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
    expect(page.body).toContain('<h2>Operations</h2>');
    const wsdl = await get(server.url, '/Api/Reg.asmx?WSDL');
    expect(wsdl.status).toBe(200);
    expect(wsdl.body).toContain('targetNamespace="http://regcheck.org.uk"');
  });

  test('a query name given twice in different case is INVALID_PARAMETER saying names are matched ignoring case', async () => {
    const expected = (name: string) =>
      `Parameter '${name}' was given 2 times; give it once (query names are matched ignoring case)`;
    const credits = await get(server.url, '/ajax/getcredits.aspx?username=garage&USERNAME=garage');
    expect([credits.status, credits.headers.get('x-error-code'), credits.body]).toEqual([
      400,
      'INVALID_PARAMETER',
      `INVALID_PARAMETER: ${expected('username')}\n`,
    ]);
    const json = await get(server.url, '/api/json.aspx/Check/RG11ABC?username=garage&Username=garage');
    expect(jsonError(json, 400, 'INVALID_PARAMETER')).toBe(expected('username'));
    const help = await get(server.url, '/api/reg.asmx?op=Check&OP=Check');
    expect([help.status, help.body]).toEqual([400, `INVALID_PARAMETER: ${expected('op')}\n`]);
  });
});

describe('the service address without TRUST_PROXY (README, Security: X-Forwarded-* is read only from trusted proxies)', () => {
  test("a caller's X-Forwarded-Host and -Proto do not change the addresses the WSDL names", async () => {
    const body = await new Promise<string>((resolve, reject) => {
      const req = http.get(
        {
          host: '127.0.0.1',
          port: server.port,
          path: '/api/reg.asmx?WSDL',
          headers: { Host: 'svc.example:8080', 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Proto': 'https' },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        },
      );
      req.on('error', reject);
    });
    expect(body).toContain('location="http://svc.example:8080/api/reg.asmx"');
    expect(body).not.toContain('evil.example');
    expect(body).not.toContain('https://');
  });
});
