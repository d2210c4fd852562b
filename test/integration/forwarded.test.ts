// Behind a reverse proxy: with TRUST_PROXY naming the proxy, the WSDL's port addresses follow
// X-Forwarded-Proto, X-Forwarded-Host and X-Forwarded-Prefix; from anyone else, or when a value is
// not a plain scheme, host or path prefix, those headers change nothing.

import { send } from '../security/wire';
import { startServer, type TestServer } from '../helpers/server';

const PROXIED = {
  Host: 'internal:8080',
  'X-Forwarded-Proto': 'https',
  'X-Forwarded-Host': 'reg.example.com',
  'X-Forwarded-Prefix': '/reg',
};

/** Every port address of the served WSDL (the WSDL has four ports). */
async function addresses(srv: TestServer, headers: Record<string, string>): Promise<string[]> {
  const res = await send(srv.port, { method: 'GET', path: '/api/reg.asmx?WSDL', headers });
  expect(res.status).toBe(200);
  return [...res.text.matchAll(/address location="([^"]*)"/g)].map((m) => m[1]);
}

describe('TRUST_PROXY names the proxy (loopback here)', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startServer({ TRUST_PROXY: '127.0.0.1,::1' });
  });
  afterAll(() => srv.close());

  test('the WSDL addresses take the forwarded scheme, host and prefix', async () => {
    const list = await addresses(srv, PROXIED);
    expect(list).toHaveLength(4);
    for (const a of list) expect(a).toBe('https://reg.example.com/reg/api/reg.asmx');
  });

  test('the help pages, the DISCO document and the OpenAPI document point at the forwarded address too', async () => {
    const pages = await Promise.all(
      ['/api/reg.asmx', '/api/reg.asmx?op=Check', '/api/reg.asmx?disco', '/api/json.aspx/openapi.json'].map((path) =>
        send(srv.port, { method: 'GET', path, headers: PROXIED }),
      ),
    );
    for (const res of pages) {
      expect(res.status).toBe(200);
      expect(res.text).not.toContain('internal:8080');
    }
    for (const res of pages.slice(0, 3)) expect(res.text).toContain('/reg/api/reg.asmx');
    // Absolute where a page writes the address whole; a page's own links may be paths (then under the prefix).
    expect(pages[0].text).toContain('https://reg.example.com/reg/api/reg.asmx?WSDL');
    expect(pages[2].text).toContain('https://reg.example.com/reg/api/reg.asmx');
    expect((JSON.parse(pages[3].text) as { servers: { url: string }[] }).servers).toEqual([
      { url: 'https://reg.example.com/reg' },
    ]);
  });

  test('a proxy chain: the first (client-facing) value of each header counts', async () => {
    const list = await addresses(srv, {
      Host: 'internal',
      'X-Forwarded-Proto': 'https, http',
      'X-Forwarded-Host': 'edge.example.com:8443, internal',
    });
    expect(new Set(list)).toEqual(new Set(['https://edge.example.com:8443/api/reg.asmx']));
  });

  test.each([
    [
      'a host with markup',
      { 'X-Forwarded-Host': 'evil"><script>x</script>' },
      'https://internal:8080/reg/api/reg.asmx',
    ],
    ['a host with a path', { 'X-Forwarded-Host': 'evil.example/x' }, 'https://internal:8080/reg/api/reg.asmx'],
    [
      'a host with a port outside 1-65535',
      { 'X-Forwarded-Host': 'reg.example.com:70000' },
      'https://internal:8080/reg/api/reg.asmx',
    ],
    [
      'a scheme other than http or https',
      { 'X-Forwarded-Proto': 'javascript' },
      'http://reg.example.com/reg/api/reg.asmx',
    ],
    ['a prefix climbing up', { 'X-Forwarded-Prefix': '/a/../b' }, 'https://reg.example.com/api/reg.asmx'],
    ['a prefix that is a URL', { 'X-Forwarded-Prefix': '//evil.example/x' }, 'https://reg.example.com/api/reg.asmx'],
    ['a prefix with a query', { 'X-Forwarded-Prefix': '/reg?x=1' }, 'https://reg.example.com/api/reg.asmx'],
  ])('%s is ignored, the other headers still count', async (_what, bad, expected) => {
    const list = await addresses(srv, { ...PROXIED, ...bad });
    expect(new Set(list)).toEqual(new Set([expected]));
  });
});

test('without TRUST_PROXY the forwarded headers change nothing', async () => {
  const srv = await startServer();
  try {
    expect(new Set(await addresses(srv, PROXIED))).toEqual(new Set(['http://internal:8080/api/reg.asmx']));
  } finally {
    await srv.close();
  }
});

test('from an address TRUST_PROXY does not name, the forwarded headers change nothing', async () => {
  const srv = await startServer({ TRUST_PROXY: '10.0.0.0/8' });
  try {
    expect(new Set(await addresses(srv, PROXIED))).toEqual(new Set(['http://internal:8080/api/reg.asmx']));
  } finally {
    await srv.close();
  }
});

test('PUBLIC_URL, when set, is the address whatever a proxy says', async () => {
  const srv = await startServer({ TRUST_PROXY: '127.0.0.1', PUBLIC_URL: 'https://public.example.org/base' });
  try {
    expect(new Set(await addresses(srv, PROXIED))).toEqual(new Set(['https://public.example.org/base/api/reg.asmx']));
  } finally {
    await srv.close();
  }
});
