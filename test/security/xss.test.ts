// Reflected input in the help page, the WSDL and the error texts: whatever a link or a header
// puts there comes back escaped in HTML and XML, and only as text/plain in the error lines.

import { startServer, type TestServer } from '../helpers/server';
import { send } from './wire';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});

const PAYLOADS = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  "'><svg onload=alert(1)>",
  'Check"><script>alert(1)</script>',
  'javascript:alert(1)',
];

/** Markup an injection would add to a page: a script, an event handler, an element from the payloads. */
const INJECTED = /<script|<img|<svg|onerror=|onload=|javascript:alert/i;

describe('the help page', () => {
  test.each(PAYLOADS)(
    '?op=%s comes back as the 404 page with nothing injected, under a strict CSP',
    async (payload) => {
      const res = await fetch(`${server.url}/api/reg.asmx?op=${encodeURIComponent(payload)}`);
      const page = await res.text();
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page).not.toMatch(INJECTED);
      expect(page).not.toContain('alert(1)');
      expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
      expect(res.headers.get('content-security-policy')).not.toMatch(/script-src/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    },
  );

  test('the same payload sent raw (unencoded) in the query is not reflected either', async () => {
    const a = await send(server.port, {
      method: 'GET',
      path: '/api/reg.asmx?op=<script>alert(1)</script>&x="><img/src=x/onerror=alert(1)>',
    });
    expect(a.status).toBe(404);
    expect(a.text).not.toMatch(INJECTED);
  });

  test('a known operation still gets its own page', async () => {
    const page = await (await fetch(`${server.url}/api/reg.asmx?op=CheckUSA`)).text();
    expect(page).toContain('<h2>CheckUSA</h2>');
  });

  test('a Host header carrying markup reaches neither the help pages, DISCO nor the WSDL', async () => {
    for (const path of ['/api/reg.asmx', '/api/reg.asmx?op=Check', '/api/reg.asmx?disco', '/api/reg.asmx?WSDL']) {
      const a = await send(server.port, { method: 'GET', path, headers: { Host: 'evil"><script>alert(1)</script>' } });
      expect(a.status).toBe(200);
      expect(a.text).not.toMatch(INJECTED);
      expect(a.text).not.toContain('evil');
    }
    const wsdl = await send(server.port, {
      method: 'GET',
      path: '/api/reg.asmx?WSDL',
      headers: { Host: 'evil"><script>alert(1)</script>' },
    });
    expect(wsdl.text).toMatch(/address location="http:\/\/127\.0\.0\.1:\d+\/api\/reg\.asmx"/);
  });
});

describe('error texts that quote the request', () => {
  test.each([
    ['an unknown path', '/<script>alert(1)</script>', 'UNKNOWN_OPERATION'],
    ['an unknown operation', '/api/reg.asmx/<script>alert(1)</script>', 'UNKNOWN_OPERATION'],
    [
      'an unknown operation, encoded',
      `/api/reg.asmx/${encodeURIComponent('"><img src=x onerror=alert(1)>')}`,
      'UNKNOWN_OPERATION',
    ],
    [
      'a registration',
      `/api/reg.asmx/Check?RegistrationNumber=${encodeURIComponent('<script>x</script>')}&username=demo`,
      'VEHICLE_NOT_FOUND',
    ],
    [
      'a state',
      `/api/reg.asmx/CheckUSA?RegistrationNumber=7ABC123&State=${encodeURIComponent('<svg onload=alert(1)>')}&username=demo`,
      'INVALID_PARAMETER',
    ],
  ])('%s is quoted only in a text/plain line, never as HTML', async (_what, path, code) => {
    const a = await send(server.port, { method: 'GET', path });
    expect(a.headers['x-error-code']).toBe(code);
    expect(a.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(a.text.trimEnd().split('\n')).toHaveLength(1);
    expect(a.text.startsWith(`${code}: `)).toBe(true);
  });

  test('a request id carrying markup is not echoed back in the X-Request-Id header', async () => {
    const a = await send(server.port, {
      method: 'GET',
      path: '/api/reg.asmx',
      headers: { 'X-Request-Id': '<script>alert(1)</script>' },
    });
    expect(a.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
