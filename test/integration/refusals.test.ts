// The SOAP endpoint and the HTTP GET/POST forms on the wire (issue 17): each refusal the README
// names, with the message a caller reads; the fault documents as the README's Errors section
// describes them; the headers it promises (Content-Length, Retry-After, Allow, Connection: close on
// 413); and what the access log records for each (README, "The access log": transport, operation,
// username, outcome). Expectations are written here from the README and the WSDL.

import http from 'node:http';
import { SqliteStore } from '../../src/store/sqlite';
import type { FoundRecord, RecordKey } from '../../src/store/store';
import { envelope, NS, SOAP11, SOAP12, soapHeaders } from '../helpers/soap';
import { startServer, type TestServer } from '../helpers/server';

class BrokenStore extends SqliteStore {
  override async get(key: RecordKey): Promise<FoundRecord | null> {
    if (key.registration === 'RG11ABC') throw new Error('disk image is malformed');
    return super.get(key);
  }
}

let srv: TestServer;
let broken: TestServer;
let sandbox: TestServer;
let limited: TestServer;
let out = '';
let writeSpy: jest.SpyInstance;

beforeAll(async () => {
  writeSpy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    return true;
  });
  srv = await startServer({ LOG_LEVEL: 'info', MAX_BODY_BYTES: '2048' });
  broken = await startServer({ LOG_LEVEL: 'info' }, { store: new BrokenStore(':memory:') });
  sandbox = await startServer({ LOG_LEVEL: 'info', SANDBOX: 'on' });
  limited = await startServer({ RATE_LIMIT: '0.01', RATE_LIMIT_BURST: '0' });
});
afterAll(async () => {
  await Promise.all([srv, broken, sandbox, limited].map((s) => s.close()));
  writeSpy.mockRestore();
});

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let seq = 0;
/** One request with exactly these headers (none added but Host), answered in full. */
function raw(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string | number> = {},
  body?: string | Buffer,
  lateMs = 0,
): Promise<Raw & { id: string }> {
  const id = `ta-${process.pid}-${++seq}`;
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, method, path, headers: { 'X-Request-Id': id, ...headers }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            id,
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (lateMs === 0) req.end(body);
    else {
      // The headers first, the body a while later: read as it arrives, not taken at once.
      req.flushHeaders();
      setTimeout(() => req.end(body), lateMs);
    }
  });
}

function soap(base: string, version: '1.1' | '1.2', body: string, headers: Record<string, string> = {}) {
  return raw(
    base,
    'POST',
    '/api/reg.asmx',
    { ...soapHeaders(version, 'Check'), 'Content-Length': Buffer.byteLength(body), ...headers },
    body,
  );
}

/** The access log line of one request (README: one JSON line per request at info). */
async function logOf(id: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 100; i++) {
    const line = out.split('\n').find((l) => l.includes(`"id":"${id}"`) && l.includes('"message":"request"'));
    if (line) return JSON.parse(line) as Record<string, unknown>;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no access log line for ${id}`);
}

function faultMessage(version: '1.1' | '1.2', body: string): string {
  const m =
    version === '1.1'
      ? /<faultstring>([^<]*)<\/faultstring>/.exec(body)
      : /<soap:Text xml:lang="en">([^<]*)<\/soap:Text>/.exec(body);
  if (!m) throw new Error(`no fault message in ${body}`);
  return m[1]
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

const check = (version: '1.1' | '1.2', registration = 'RG11ABC', username = 'demo') =>
  envelope(version, 'Check', { RegistrationNumber: registration, username });

describe('SOAP fault documents (README, Errors)', () => {
  test('SOAP 1.1: faultcode, faultstring, detail/ErrorCode; HTTP 500, text/xml, its Content-Length', async () => {
    const a = await soap(srv.url, '1.1', '');
    expect(a.status).toBe(500);
    expect(a.headers['content-type']).toBe('text/xml; charset=utf-8');
    expect(Number(a.headers['content-length'])).toBe(Buffer.byteLength(a.body));
    expect(a.body).toBe(
      `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><soap:Fault><faultcode>soap:Client</faultcode>` +
        `<faultstring>The request body is empty; send a SOAP envelope</faultstring><detail><ErrorCode xmlns="${NS}">MALFORMED_REQUEST</ErrorCode></detail></soap:Fault></soap:Body></soap:Envelope>`,
    );
    expect(await logOf(a.id)).toMatchObject({ transport: 'soap11', outcome: 'MALFORMED_REQUEST', status: 500 });
  });

  test('SOAP 1.2: Code/Value, Subcode/Value, Reason/Text, Detail; application/soap+xml', async () => {
    const a = await soap(srv.url, '1.2', '');
    expect(a.status).toBe(500);
    expect(a.headers['content-type']).toBe('application/soap+xml; charset=utf-8');
    expect(a.body).toBe(
      `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${SOAP12}"><soap:Body><soap:Fault><soap:Code><soap:Value>soap:Sender</soap:Value>` +
        `<soap:Subcode><soap:Value xmlns:rl="${NS}">rl:MALFORMED_REQUEST</soap:Value></soap:Subcode></soap:Code>` +
        `<soap:Reason><soap:Text xml:lang="en">The request body is empty; send a SOAP envelope</soap:Text></soap:Reason>` +
        `<soap:Detail><ErrorCode xmlns="${NS}">MALFORMED_REQUEST</ErrorCode></soap:Detail></soap:Fault></soap:Body></soap:Envelope>`,
    );
    expect(await logOf(a.id)).toMatchObject({ transport: 'soap12', outcome: 'MALFORMED_REQUEST' });
  });

  test('Server/Receiver for our own failures; VersionMismatch and MustUnderstand as they are', async () => {
    const s11 = await soap(sandbox.url, '1.1', check('1.1', 'ER19MNT'));
    expect(s11.body).toContain('<faultcode>soap:Server</faultcode>');
    const s12 = await soap(sandbox.url, '1.2', check('1.2', 'ER19MNT'));
    expect(s12.body).toContain('<soap:Code><soap:Value>soap:Receiver</soap:Value>');
    const vm = await soap(srv.url, '1.2', check('1.1'));
    expect(vm.body).toContain('<soap:Code><soap:Value>soap:VersionMismatch</soap:Value>');
    const mu = check('1.2').replace(
      '<soap:Body>',
      `<soap:Header><A xmlns="urn:x" soap:mustUnderstand="true"/></soap:Header><soap:Body>`,
    );
    expect((await soap(srv.url, '1.2', mu)).body).toContain('<soap:Code><soap:Value>soap:MustUnderstand</soap:Value>');
  });

  test('a message quoting markup is escaped in the fault', async () => {
    const a = await soap(
      srv.url,
      '1.1',
      envelope('1.1', 'Check<x', {}).replace('<Check<x xmlns', '<Check xmlns').replace('</Check<x>', '</Check>'),
    );
    expect(a.status).toBe(500);
    const b = await soap(srv.url, '1.1', `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body/></soap:Envelope>`);
    expect(b.body).toContain('&lt;Check xmlns="http://regcheck.org.uk"&gt;');
    expect(b.body).not.toContain('<Check xmlns');
  });

  test('Retry-After on a SOAP fault where it applies (README: RATE_LIMITED, sandbox ER19THR 30 s)', async () => {
    const a = await soap(sandbox.url, '1.1', check('1.1', 'ER19THR'));
    expect(a.status).toBe(500);
    expect(a.headers['retry-after']).toBe('30');
    const b = await soap(sandbox.url, '1.2', check('1.2', 'ER19MNT'));
    expect(b.headers['retry-after']).toBe('120');
    const c = await soap(sandbox.url, '1.1', check('1.1', 'ER19NFD'));
    expect(c.headers['retry-after']).toBeUndefined();
  });

  test('an oversize body is 413 with a fault and Connection: close', async () => {
    const body = check('1.1', 'A'.repeat(3000));
    const a = await soap(srv.url, '1.1', body);
    expect(a.status).toBe(413);
    expect(a.headers.connection).toBe('close');
    expect(a.body).toContain(`<ErrorCode xmlns="${NS}">PAYLOAD_TOO_LARGE</ErrorCode>`);
    expect(Number(a.headers['content-length'])).toBe(Buffer.byteLength(a.body));
    // Over a connection kept alive, only the 413 closes it.
    const kept = await fetch(`${srv.url}/api/reg.asmx`, { method: 'POST', headers: soapHeaders('1.1', 'Check'), body });
    await kept.text();
    expect(kept.status).toBe(413);
    expect(kept.headers.get('connection')).toBe('close');
    const other = await fetch(`${srv.url}/api/reg.asmx`, {
      method: 'POST',
      headers: soapHeaders('1.1', 'Check'),
      body: '',
    });
    await other.text();
    expect(other.status).toBe(500);
    expect(other.headers.get('connection')).not.toBe('close');
  });
});

describe('SOAP refusals, by what the caller sent (README, Errors and Security)', () => {
  test.each([
    ['1.1', `<Check xmlns="${NS}"/>`, 'MALFORMED_REQUEST', "The root element is 'Check', not a SOAP Envelope"],
    [
      '1.1',
      `<soap:Envelope xmlns:soap="urn:x"><soap:Body/></soap:Envelope>`,
      'VERSION_MISMATCH',
      "The envelope namespace 'urn:x' is neither SOAP 1.1 nor SOAP 1.2",
    ],
    [
      '1.1',
      check('1.2'),
      'VERSION_MISMATCH',
      'A SOAP 1.2 envelope must be sent with Content-Type application/soap+xml, not text/xml',
    ],
    [
      '1.2',
      check('1.1'),
      'VERSION_MISMATCH',
      'A SOAP 1.1 envelope must be sent with Content-Type text/xml, not application/soap+xml',
    ],
    [
      '1.1',
      `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Header/></soap:Envelope>`,
      'MALFORMED_REQUEST',
      'The envelope has no Body',
    ],
    [
      '1.1',
      `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body/></soap:Envelope>`,
      'MALFORMED_REQUEST',
      `The Body is empty; it must hold one operation element such as <Check xmlns="${NS}">`,
    ],
    [
      '1.2',
      `<soap:Envelope xmlns:soap="${SOAP12}"><soap:Body><Check xmlns="${NS}"/><Check xmlns="${NS}"/></soap:Body></soap:Envelope>`,
      'MALFORMED_REQUEST',
      'The Body must hold exactly one operation element',
    ],
    ['1.1', envelope('1.1', 'CheckMars', { username: 'demo' }), 'UNKNOWN_OPERATION', "Unknown operation 'CheckMars'"],
    [
      '1.1',
      check('1.1').replace(`xmlns="${NS}"`, 'xmlns="urn:other"'),
      'UNKNOWN_OPERATION',
      `Operation element 'Check' is in namespace 'urn:other'; this service's namespace is '${NS}'`,
    ],
    [
      '1.1',
      check('1.1').replace(
        '<soap:Body>',
        '<soap:Header><A xmlns="urn:x" soap:mustUnderstand="1"/></soap:Header><soap:Body>',
      ),
      'MUST_UNDERSTAND',
      "Header '{urn:x}A' is marked mustUnderstand, and this service processes no SOAP headers",
    ],
    [
      '1.1',
      check('1.1').replace('<soap:Body>', '<soap:Body><!DOCTYPE x>'),
      'MALFORMED_REQUEST',
      'Malformed request: <!DOCTYPE>: DTDs, entity declarations and external references are not allowed',
    ],
  ] as const)('SOAP %s: %s is %s', async (version, body, code, message) => {
    const a = await soap(
      srv.url,
      version,
      body,
      version === '1.1' ? { SOAPAction: '' } : { 'Content-Type': 'application/soap+xml; charset=utf-8' },
    );
    expect(a.status).toBe(500);
    expect(a.body).toContain(`<ErrorCode xmlns="${NS}">${code}</ErrorCode>`);
    expect(faultMessage(version, a.body)).toBe(message);
    expect(await logOf(a.id)).toMatchObject({ outcome: code, transport: version === '1.1' ? 'soap11' : 'soap12' });
  });

  test('SOAPAction: quoted, unquoted, empty, absent and with spaces are all accepted when they name the Body', async () => {
    for (const action of [`"${NS}/Check"`, `${NS}/Check`, '""', '', ` "${NS}/Check" `]) {
      const a = await soap(srv.url, '1.1', check('1.1'), { SOAPAction: action });
      expect(a.status).toBe(200);
      expect(a.body).toContain('<CheckResponse');
    }
    const body = check('1.1');
    const none = await raw(
      srv.url,
      'POST',
      '/api/reg.asmx',
      { 'Content-Type': 'text/xml; charset=utf-8', 'Content-Length': Buffer.byteLength(body) },
      body,
    );
    expect(none.status).toBe(200);
    expect(await logOf(none.id)).toMatchObject({
      transport: 'soap11',
      operation: 'Check',
      caller: 'sha256:2a97516c354b',
      outcome: 'ok',
      status: 200,
    });
  });

  test('SOAPAction naming another operation, or none of ours, is UNKNOWN_OPERATION with the reason', async () => {
    const other = await soap(srv.url, '1.1', check('1.1'), { SOAPAction: `"${NS}/CheckUSA"` });
    expect(faultMessage('1.1', other.body)).toBe('SOAPAction names CheckUSA but the Body holds Check');
    const foreign = await soap(srv.url, '1.1', check('1.1'), { SOAPAction: '"urn:foo/Check"' });
    expect(faultMessage('1.1', foreign.body)).toBe(
      `SOAPAction 'urn:foo/Check' is not one this service offers (expected '${NS}/Check')`,
    );
    const unknownInOurs = await soap(srv.url, '1.1', check('1.1'), { SOAPAction: `"${NS}/Nothing"` });
    expect(faultMessage('1.1', unknownInOurs.body)).toBe(
      `SOAPAction '${NS}/Nothing' is not one this service offers (expected '${NS}/Check')`,
    );
    const lone = await soap(srv.url, '1.1', check('1.1'), { SOAPAction: '"' });
    expect(faultMessage('1.1', lone.body)).toBe(
      `SOAPAction '"' is not one this service offers (expected '${NS}/Check')`,
    );
    const half = await soap(srv.url, '1.1', check('1.1'), { SOAPAction: `"${NS}/Check` });
    expect(faultMessage('1.1', half.body)).toMatch(/^SOAPAction '"http:\/\/regcheck.org.uk\/Check' is not one/);
    const tail = await soap(srv.url, '1.1', check('1.1'), { SOAPAction: `${NS}/Check"` });
    expect(faultMessage('1.1', tail.body)).toBe(
      `SOAPAction '${NS}/Check"' is not one this service offers (expected '${NS}/Check')`,
    );
    // Outside our namespace, an operation's name after a prefix as long as the namespace is still not ours.
    const lookalike = `${'x'.repeat(NS.length)}/CheckUSA`;
    const like = await soap(srv.url, '1.1', check('1.1'), { SOAPAction: lookalike });
    expect(faultMessage('1.1', like.body)).toBe(
      `SOAPAction '${lookalike}' is not one this service offers (expected '${NS}/Check')`,
    );
  });

  test("SOAP 1.2's action parameter is checked; over SOAP 1.1 it is not read", async () => {
    const wrong12 = await soap(srv.url, '1.2', check('1.2'), {
      'Content-Type': `application/soap+xml; charset=utf-8; action="${NS}/CheckUSA"`,
    });
    expect(faultMessage('1.2', wrong12.body)).toBe('SOAPAction names CheckUSA but the Body holds Check');
    const right12 = await soap(srv.url, '1.2', check('1.2'), {
      'Content-Type': `application/soap+xml; charset=utf-8; action="${NS}/Check"`,
    });
    expect(right12.status).toBe(200);
    const ignored11 = await soap(srv.url, '1.1', check('1.1'), {
      'Content-Type': `text/xml; charset=utf-8; action="${NS}/CheckUSA"`,
    });
    expect(ignored11.status).toBe(200);
    // A SOAPAction header sent with SOAP 1.2 is read too.
    const header12 = await soap(srv.url, '1.2', check('1.2'), { SOAPAction: `"${NS}/CheckUSA"` });
    expect(faultMessage('1.2', header12.body)).toBe('SOAPAction names CheckUSA but the Body holds Check');
  });

  test('a charset other than UTF-8 is a MALFORMED_REQUEST fault, not a text line', async () => {
    const a = await soap(srv.url, '1.2', check('1.2'), { 'Content-Type': 'application/soap+xml; charset=iso-8859-1' });
    expect(a.status).toBe(500);
    expect(a.headers['content-type']).toBe('application/soap+xml; charset=utf-8');
    expect(faultMessage('1.2', a.body)).toBe("charset 'iso-8859-1' is not supported; send UTF-8");
    expect(await logOf(a.id)).toMatchObject({ transport: 'soap12', outcome: 'MALFORMED_REQUEST' });
  });

  test('a body that is not UTF-8, or compressed wrongly, is a fault', async () => {
    const a = await soap(srv.url, '1.1', Buffer.from([0xff, 0xfe, 0x3c, 0x00]).toString('latin1'), {});
    expect(a.status).toBe(500);
    const gz = await raw(
      srv.url,
      'POST',
      '/api/reg.asmx',
      { ...soapHeaders('1.1', 'Check'), 'Content-Encoding': 'br', 'Content-Length': 3 },
      'abc',
    );
    expect(gz.status).toBe(500);
    expect(gz.body).toContain(`<ErrorCode xmlns="${NS}">UNSUPPORTED_MEDIA_TYPE</ErrorCode>`);
    expect(faultMessage('1.1', gz.body)).toBe("Content-Encoding 'br' is not supported (use identity, gzip or deflate)");
  });

  test('a POST to the SOAP path that is not SOAP is 415, one line pointing at the HTTP forms, transport other', async () => {
    const a = await raw(
      srv.url,
      'POST',
      '/api/reg.asmx',
      { 'Content-Type': 'application/json', 'Content-Length': 2 },
      '{}',
    );
    expect(a.status).toBe(415);
    expect(a.body).toBe(
      'UNSUPPORTED_MEDIA_TYPE: POST /api/reg.asmx takes a SOAP envelope (text/xml for SOAP 1.1, application/soap+xml for SOAP 1.2); HTTP POST calls go to /api/reg.asmx/{Operation}\n',
    );
    expect(await logOf(a.id)).toMatchObject({ transport: 'other', outcome: 'UNSUPPORTED_MEDIA_TYPE' });
  });

  test('a lookup refused by the service is logged with the operation and the caller fingerprint', async () => {
    const a = await soap(srv.url, '1.1', check('1.1', 'ZZ99ZZZ', 'carol'));
    expect(a.status).toBe(500);
    expect(await logOf(a.id)).toMatchObject({
      transport: 'soap11',
      operation: 'Check',
      caller: 'sha256:4c26d9074c27',
      outcome: 'VEHICLE_NOT_FOUND',
    });
    const b = await soap(srv.url, '1.2', check('1.2', 'RG11ABC', 'dave'));
    expect(b.status).toBe(200);
    expect(b.headers['content-type']).toBe('application/soap+xml; charset=utf-8');
    expect(await logOf(b.id)).toMatchObject({
      transport: 'soap12',
      operation: 'Check',
      caller: 'sha256:61ea0803f885',
      outcome: 'ok',
    });
  });

  test('a SOAP result carries its Content-Length, never chunked (README: every answer)', async () => {
    for (const version of ['1.1', '1.2'] as const) {
      const a = await soap(srv.url, version, check(version));
      expect(a.status).toBe(200);
      expect(a.headers['transfer-encoding']).toBeUndefined();
      expect(Number(a.headers['content-length'])).toBe(Buffer.byteLength(a.body));
      expect(a.body).toContain('<CheckResult>');
    }
  });

  test('the media type in any case, and a query string on the SOAP path, are served', async () => {
    const upper = await soap(srv.url, '1.1', check('1.1'), { 'Content-Type': 'TEXT/XML; Charset=UTF-8' });
    expect(upper.status).toBe(200);
    expect(upper.headers['content-type']).toBe('text/xml; charset=utf-8');
    const upper12 = await soap(srv.url, '1.2', check('1.2'), { 'Content-Type': 'Application/SOAP+XML' });
    expect(upper12.status).toBe(200);
    expect(upper12.body).toContain('CheckResponse');
    const body = check('1.1');
    const q = await raw(
      srv.url,
      'POST',
      '/api/reg.asmx?x=1',
      { ...soapHeaders('1.1', 'Check'), 'Content-Length': Buffer.byteLength(body) },
      body,
    );
    expect(q.status).toBe(200);
    expect(q.body).toContain('CheckResponse');
  });

  test('a rate-limited SOAP caller gets Retry-After (README, RATE_LIMIT)', async () => {
    expect((await soap(limited.url, '1.1', check('1.1', 'RG11ABC', 'rl'))).status).toBe(200);
    const second = await soap(limited.url, '1.1', check('1.1', 'RG11ABC', 'rl'));
    expect(second.status).toBe(500);
    expect(Number(second.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });
});

describe('INTERNAL_ERROR is logged under the request id, the sandbox one is not (README, Errors and Sandbox)', () => {
  const errorLines = (op: string) =>
    out
      .split('\n')
      .filter((l) => l.includes('"level":"error"') && l.includes('lookup failed') && l.includes(`"operation":"${op}"`));

  test.each(['soap', 'get'] as const)('over %s', async (how) => {
    const op = how === 'soap' ? 'Check' : 'CheckUSA';
    const before = errorLines(op).length;
    const a =
      how === 'soap'
        ? await soap(broken.url, '1.1', check('1.1'))
        : await raw(broken.url, 'GET', `/api/reg.asmx/CheckUSA?RegistrationNumber=RG11ABC&State=CA&username=demo`);
    await logOf(a.id);
    expect(a.body).toContain('INTERNAL_ERROR');
    expect(errorLines(op).length).toBe(before + 1);
    expect(errorLines(op).at(-1)).toContain('disk image is malformed');
    const s =
      how === 'soap'
        ? await soap(sandbox.url, '1.1', check('1.1', 'ER19ERR'))
        : await raw(sandbox.url, 'GET', '/api/reg.asmx/CheckUSA?RegistrationNumber=ER19ERR&State=CA&username=demo');
    expect(s.body).toContain('INTERNAL_ERROR');
    await logOf(s.id);
    expect(errorLines(op).length).toBe(before + 1);
  });

  test('over HTTP GET and POST the failing lookup is logged', async () => {
    const before = errorLines('Check').length;
    const g = await raw(broken.url, 'GET', '/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=demo');
    expect(g.status).toBe(500);
    expect(g.body).toMatch(/^INTERNAL_ERROR: /);
    await logOf(g.id);
    expect(errorLines('Check').length).toBe(before + 1);
  });
});

describe('HTTP GET and POST (README, Calling it and Errors)', () => {
  test('a result: 200, text/xml, its Content-Length; HEAD the same headers without a body', async () => {
    const g = await raw(srv.url, 'GET', '/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=demo');
    expect(g.status).toBe(200);
    expect(g.headers['content-type']).toBe('text/xml; charset=utf-8');
    expect(Number(g.headers['content-length'])).toBe(Buffer.byteLength(g.body));
    expect(await logOf(g.id)).toMatchObject({
      transport: 'get',
      operation: 'Check',
      caller: 'sha256:2a97516c354b',
      outcome: 'ok',
    });
    const h = await raw(srv.url, 'HEAD', '/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=demo');
    expect(h.status).toBe(200);
    expect(h.body).toBe('');
    expect(h.headers['content-length']).toBe(g.headers['content-length']);
  });

  test('POST: the form in the body; logged as post with its username', async () => {
    const form = 'RegistrationNumber=RG11ABC&username=erin';
    const p = await raw(
      srv.url,
      'POST',
      '/api/reg.asmx/Check',
      { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': form.length },
      form,
    );
    expect(p.status).toBe(200);
    expect(await logOf(p.id)).toMatchObject({
      transport: 'post',
      operation: 'Check',
      caller: 'sha256:7cbccb0c4caa',
      outcome: 'ok',
    });
    const chunked = await raw(
      srv.url,
      'POST',
      '/api/reg.asmx/Check',
      { 'Content-Type': 'application/x-www-form-urlencoded; charset=UTF-8', 'Transfer-Encoding': 'chunked' },
      form,
    );
    expect(chunked.status).toBe(200);
  });

  test('a body that arrives after its headers is read as it comes, on both forms', async () => {
    const form = 'RegistrationNumber=RG11ABC&username=late';
    const p = await raw(
      srv.url,
      'POST',
      '/api/reg.asmx/Check',
      { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': form.length },
      form,
      100,
    );
    expect(p.status).toBe(200);
    expect(await logOf(p.id)).toMatchObject({ transport: 'post', caller: 'sha256:089001a35679', outcome: 'ok' });
    const env = check('1.1', 'RG11ABC', 'late');
    const s = await raw(
      srv.url,
      'POST',
      '/api/reg.asmx',
      { ...soapHeaders('1.1', 'Check'), 'Content-Length': Buffer.byteLength(env) },
      env,
      100,
    );
    expect(s.status).toBe(200);
    expect(s.body).toContain('CheckResponse');
    const bad = await raw(
      srv.url,
      'POST',
      '/api/reg.asmx/Check',
      { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': 3 },
      Buffer.from([0x61, 0x3d, 0xff]),
      100,
    );
    expect(bad.body).toBe('MALFORMED_REQUEST: The body is not valid UTF-8\n');
  });

  test('a refused lookup still logs the fingerprint of the username as sent', async () => {
    const g = await raw(srv.url, 'GET', '/api/reg.asmx/Check?RegistrationNumber=ZZ99ZZZ&username=frank');
    expect(g.status).toBe(404);
    expect(await logOf(g.id)).toMatchObject({
      transport: 'get',
      operation: 'Check',
      caller: 'sha256:77646f5a4f31',
      outcome: 'VEHICLE_NOT_FOUND',
    });
  });

  test('a method other than GET/HEAD/POST is 405 with Allow: GET, HEAD, POST', async () => {
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      const a = await raw(srv.url, method, '/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=demo');
      expect(a.status).toBe(405);
      expect(a.headers.allow).toBe('GET, HEAD, POST');
      expect(a.body).toBe(`METHOD_NOT_ALLOWED: ${method} is not allowed here; use GET or POST\n`);
    }
  });

  test('an unknown operation is 404; in the wrong case, with the right name suggested', async () => {
    const a = await raw(srv.url, 'GET', '/api/reg.asmx/check?RegistrationNumber=RG11ABC&username=demo');
    expect(a.status).toBe(404);
    expect(a.body).toBe(
      "UNKNOWN_OPERATION: Unknown operation 'check' (did you mean 'Check'? operation names are case-sensitive)\n",
    );
    const b = await raw(srv.url, 'GET', '/api/reg.asmx/Zzzzzzzzzzzz');
    expect(b.body).toBe("UNKNOWN_OPERATION: Unknown operation 'Zzzzzzzzzzzz'\n");
    expect(await logOf(b.id)).toMatchObject({ transport: 'get', outcome: 'UNKNOWN_OPERATION' });
    expect(await logOf(b.id)).not.toHaveProperty('operation');
    const post = await raw(
      srv.url,
      'POST',
      '/api/reg.asmx/Zzzzzzzzzzzz',
      { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': 3 },
      'a=1',
    );
    expect(post.status).toBe(404);
    expect(await logOf(post.id)).toMatchObject({ transport: 'post' });
  });

  test('the operation path: percent-encoded names, a trailing slash, the path in any case', async () => {
    expect((await raw(srv.url, 'GET', '/api/reg.asmx/%43heck?RegistrationNumber=RG11ABC&username=demo')).status).toBe(
      200,
    );
    expect((await raw(srv.url, 'GET', '/api/reg.asmx/Check/?RegistrationNumber=RG11ABC&username=demo')).status).toBe(
      200,
    );
    expect((await raw(srv.url, 'GET', '/API/REG.ASMX/Check?RegistrationNumber=RG11ABC&username=demo')).status).toBe(
      200,
    );
    const bad = await raw(srv.url, 'GET', '/api/reg.asmx/%FF?RegistrationNumber=RG11ABC&username=demo');
    expect(bad.status).toBe(400);
    expect(bad.body).toBe('MALFORMED_REQUEST: The operation name is not valid percent-encoded UTF-8\n');
  });

  test('POST takes only application/x-www-form-urlencoded (415), in UTF-8', async () => {
    const json = await raw(
      srv.url,
      'POST',
      '/api/reg.asmx/Check',
      { 'Content-Type': 'application/json', 'Content-Length': 2 },
      '{}',
    );
    expect(json.status).toBe(415);
    expect(json.body).toBe(
      "UNSUPPORTED_MEDIA_TYPE: HTTP POST takes Content-Type application/x-www-form-urlencoded, not 'application/json'\n",
    );
    const none = await raw(srv.url, 'POST', '/api/reg.asmx/Check', { 'Content-Length': 3 }, 'a=1');
    expect(none.status).toBe(415);
    expect(none.body).toBe(
      "UNSUPPORTED_MEDIA_TYPE: HTTP POST takes Content-Type application/x-www-form-urlencoded, not '(none)'\n",
    );
    const latin = await raw(
      srv.url,
      'POST',
      '/api/reg.asmx/Check',
      { 'Content-Type': 'application/x-www-form-urlencoded; charset=iso-8859-1', 'Content-Length': 3 },
      'a=1',
    );
    expect(latin.status).toBe(400);
    expect(latin.body).toBe("MALFORMED_REQUEST: charset 'iso-8859-1' is not supported; send UTF-8\n");
    const bytes = Buffer.from([0x61, 0x3d, 0xff]);
    const notUtf8 = await raw(
      srv.url,
      'POST',
      '/api/reg.asmx/Check',
      { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': 3 },
      bytes,
    );
    expect(notUtf8.body).toBe('MALFORMED_REQUEST: The body is not valid UTF-8\n');
  });

  test('MAX_BODY_BYTES on every route: a form, a GET with a body, a route that takes none (413)', async () => {
    const big = `RegistrationNumber=RG11ABC&username=demo&x=${'a'.repeat(2100)}`;
    const post = await raw(
      srv.url,
      'POST',
      '/api/reg.asmx/Check',
      { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': big.length },
      big,
    );
    expect(post.status).toBe(413);
    expect(post.headers.connection).toBe('close');
    const get = await raw(
      srv.url,
      'GET',
      '/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=demo',
      { 'Content-Length': big.length },
      big,
    );
    expect(get.status).toBe(413);
    const chunkedGet = await raw(
      srv.url,
      'GET',
      '/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=demo',
      { 'Transfer-Encoding': 'chunked' },
      big,
    );
    expect(chunkedGet.status).toBe(413);
    const unknown = await raw(
      srv.url,
      'POST',
      '/api/reg.asmx/Zzzz',
      { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': big.length },
      big,
    );
    expect(unknown.status).toBe(413);
    const health = await raw(srv.url, 'POST', '/healthz', { 'Content-Length': big.length }, big);
    expect(health.status).toBe(413);
    expect(health.body).toBe('PAYLOAD_TOO_LARGE: Request body is larger than 2048 bytes\n');
    const wsdl = await raw(srv.url, 'GET', '/api/reg.asmx?WSDL', { 'Content-Length': big.length }, big);
    expect(wsdl.status).toBe(413);
  });

  test('a body within the limit where none is taken is read and ignored', async () => {
    const small = 'x=1';
    const get = await raw(
      srv.url,
      'GET',
      '/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=demo',
      { 'Content-Length': small.length },
      small,
    );
    expect(get.status).toBe(200);
    const wsdl = await raw(srv.url, 'GET', '/api/reg.asmx?WSDL', { 'Content-Length': small.length }, small);
    expect(wsdl.status).toBe(200);
    const put = await raw(srv.url, 'PUT', '/api/reg.asmx/Check', { 'Content-Length': small.length }, small);
    expect(put.status).toBe(405);
  });
});
