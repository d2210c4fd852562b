// The help pages as a new user meets them with odd requests. Expectations from the README (Help
// pages, Parameter names, Security) and from ASP.NET's reading of query strings:
// - a Host that is not a plain host with a port from 1 to 65535 is never written into the WSDL,
//   the DISCO document, the pages' links and samples, or the OpenAPI document, and every such
//   request is answered (checked over a raw socket: an answer arrives, not a hung connection);
// - bad percent-encoding in the query is MALFORMED_REQUEST; `op` twice, or a request naming more
//   than one of ?WSDL, ?disco and ?op=, is a 400 whatever the order; the names match ignoring case;
// - a request-target in absolute form is served as its path.

import { startServer, type TestServer } from '../helpers/server';
import { exchange, type WireAnswer } from '../security/wire';
import { fetchAnswer } from '../helpers/call';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => {
  await srv.close();
});

function raw(target: string, host: string): Promise<WireAnswer> {
  return exchange(srv.port, [`GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`], {
    timeoutMs: 8000,
  });
}

/** What two spellings of a query must agree on: the status, the error code and the page. */
async function get(path: string): Promise<{ status: number; code: string | null; text: string }> {
  const a = await fetchAnswer(srv.url, path);
  return { status: a.status, code: a.headers.get('x-error-code'), text: a.body };
}

// Every page that writes the service's address.
const ADDRESS_PAGES = [
  '/api/reg.asmx?WSDL',
  '/api/reg.asmx?disco',
  '/api/reg.asmx',
  '/api/reg.asmx?op=UKMOT',
  '/api/reg.asmx?op=CheckUSA',
  '/api/json.aspx/openapi.json',
];

describe('a Host that is not a plain host with a port 1-65535', () => {
  const BAD = [
    'reg.example.com:65536',
    'reg.example.com:99999',
    'reg.example.com:0',
    'reg.example.com:00000',
    '[::1]:70000',
    '256.1.1.1',
    'reg.example.com:8080:1',
  ];
  for (const path of ADDRESS_PAGES) {
    test.each(BAD)(`${path} with Host: %s is answered, without that host`, async (host) => {
      const a = await raw(path, host);
      expect(a.ended).toBe('response');
      expect(a.status).toBe(200);
      const name = host.replace(/:[^:\]]*$/, '');
      expect(a.text).not.toContain(host);
      if (name !== '256.1.1.1') expect(a.text).not.toContain(`${name}:`);
      // The address the request came in on is written instead.
      expect(a.text).toContain(`127.0.0.1:${srv.port}`);
    });
  }

  test.each(ADDRESS_PAGES)('%s with a plain Host and port 65535 writes that host', async (path) => {
    const a = await raw(path, 'reg.example.com:65535');
    expect(a.ended).toBe('response');
    expect(a.status).toBe(200);
    expect(a.text).toContain('reg.example.com:65535');
  });
});

describe('the help query', () => {
  test.each(['?op=%FF', '?op=%', '?op=Check%E2%82', '?disco&x=%ZZ'])(
    'bad percent-encoding (%s) is MALFORMED_REQUEST',
    async (q) => {
      const a = await get(`/api/reg.asmx${q}`);
      expect(a.status).toBe(400);
      expect(a.code).toBe('MALFORMED_REQUEST');
      expect(a.text).toMatch(/^MALFORMED_REQUEST: [^\n]+\n$/);
    },
  );

  test('op given twice is a 400 saying so', async () => {
    for (const q of ['?op=CheckUSA&op=UKMOT', '?op=CheckUSA&OP=CheckUSA']) {
      const a = await get(`/api/reg.asmx${q}`);
      expect(a.status).toBe(400);
      expect(a.code).toBe('INVALID_PARAMETER');
      expect(a.text).toMatch(/^INVALID_PARAMETER: Parameter 'op' was given 2 times; give it once[^\n]*\n$/);
    }
  });

  test('naming both op and disco (or WSDL) is the same 400 in either order', async () => {
    const pairs = [
      ['?op=CheckUSA&disco', '?disco&op=CheckUSA'],
      ['?op=CheckUSA&WSDL', '?WSDL&op=CheckUSA'],
      ['?disco&wsdl', '?wsdl&disco'],
    ];
    for (const [one, other] of pairs) {
      const a = await get(`/api/reg.asmx${one}`);
      const b = await get(`/api/reg.asmx${other}`);
      expect(a.status).toBe(400);
      expect(a.code).toBe('INVALID_PARAMETER');
      expect(b.status).toBe(400);
      expect(b.code).toBe('INVALID_PARAMETER');
    }
  });

  test('OP, Op, DISCO and Disco act as op and disco, as ASP.NET reads query names', async () => {
    const page = await get('/api/reg.asmx?op=CheckUSA');
    expect(page.status).toBe(200);
    expect(page.text).toContain('CheckUSA');
    for (const q of ['?OP=CheckUSA', '?Op=CheckUSA']) expect(await get(`/api/reg.asmx${q}`)).toEqual(page);
    const disco = await get('/api/reg.asmx?disco');
    expect(disco.status).toBe(200);
    expect(disco.text).toContain('contractRef');
    for (const q of ['?DISCO', '?Disco']) expect(await get(`/api/reg.asmx${q}`)).toEqual(disco);
  });

  test('an operation name stays case-sensitive: ?OP=checkusa is the 404 page', async () => {
    expect((await get('/api/reg.asmx?OP=checkusa')).status).toBe(404);
  });
});

describe('a request-target in absolute form (RFC 9112: servers must accept it)', () => {
  test('is served as its path', async () => {
    const a = await raw('http://evil.example/api/json.aspx/Check/RG11ABC?username=demo', '127.0.0.1');
    expect(a.ended).toBe('response');
    expect(a.status).toBe(200);
    expect(a.headers['content-type']).toBe('application/json; charset=utf-8');
    const w = await raw(`http://127.0.0.1:${srv.port}/api/reg.asmx?WSDL`, 'ignored.example');
    expect(w.status).toBe(200);
    expect(w.text).toContain(`location="http://127.0.0.1:${srv.port}/api/reg.asmx"`);
  });
});

// README, Help pages: the sample answer's soap:Envelope declares only `soap`; a real answer's also
// declares xmlns:tm (textMatching) and xmlns:tns (the service namespace), and nothing else.
describe('the sample answer envelope against a real one', () => {
  const decls = (xml: string): string[] => {
    const tag = /<soap:Envelope\b([^>]*)>/.exec(xml)![1];
    return [...tag.matchAll(/(xmlns:[A-Za-z0-9]+)="([^"]*)"/g)].map((m) => `${m[1]}=${m[2]}`).sort();
  };
  const unescape = (s: string) =>
    s
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&amp;/g, '&');
  test.each([
    ['1.1', 'soap11-response', 'text/xml; charset=utf-8', 'http://schemas.xmlsoap.org/soap/envelope/'],
    ['1.2', 'soap12-response', 'application/soap+xml; charset=utf-8', 'http://www.w3.org/2003/05/soap-envelope'],
  ])('SOAP %s', async (_v, id, type, envNs) => {
    const page = (await get('/api/reg.asmx?op=Check')).text;
    const sample = unescape(new RegExp(`<pre id="${id}"[^>]*>([\\s\\S]*?)</pre>`).exec(page)![1]);
    const body = `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${envNs}"><soap:Body><Check xmlns="http://regcheck.org.uk"><RegistrationNumber>RG11ABC</RegistrationNumber><username>demo</username></Check></soap:Body></soap:Envelope>`;
    const headers: Record<string, string> = { 'Content-Type': type };
    if (_v === '1.1') headers.SOAPAction = '"http://regcheck.org.uk/Check"';
    const real = await (await fetch(`${srv.url}/api/reg.asmx`, { method: 'POST', headers, body })).text();
    expect(decls(sample)).toEqual([`xmlns:soap=${envNs}`]);
    expect(decls(real)).toEqual(
      [
        `xmlns:soap=${envNs}`,
        'xmlns:tm=http://microsoft.com/wsdl/mime/textMatching/',
        'xmlns:tns=http://regcheck.org.uk',
      ].sort(),
    );
    expect(real).not.toMatch(/<\/?t(?:m|ns):/);
  });
});
