// Each parsing limit holds at its edge (the limit itself is served, one more is refused with a
// fault that names it), moves when its variable is set, and the body limit holds on every route.

import zlib from 'node:zlib';
import { NS, SOAP11, SOAP12, soapHeaders } from '../helpers/soap';
import { startServer, type TestServer } from '../helpers/server';
import { leakIn, plainErrorProblem, soapFaultProblem } from './answers';
import { exchange, head, send, type WireAnswer } from './wire';

type Version = '1.1' | '1.2';

let dflt: TestServer;
let small: TestServer;
let roomy: TestServer;
beforeAll(async () => {
  dflt = await startServer();
  small = await startServer({
    MAX_BODY_BYTES: '2048',
    XML_MAX_DEPTH: '8',
    XML_MAX_TEXT: '100',
    XML_MAX_ELEMENTS: '20',
    XML_MAX_ATTRIBUTES: '2',
  });
  roomy = await startServer({ MAX_BODY_BYTES: String(1024 * 1024) });
});
afterAll(async () => {
  await Promise.all([dflt, small, roomy].map((s) => s.close()));
});

/** A Check envelope whose Header holds `header` (ignored by the service) and whose Body is a lookup that succeeds. */
function withHeader(version: Version, header: string, reg = 'RG11 ABC'): string {
  return (
    `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${version === '1.1' ? SOAP11 : SOAP12}">` +
    `<soap:Header>${header}</soap:Header><soap:Body><Check xmlns="${NS}"><RegistrationNumber>${reg}</RegistrationNumber>` +
    `<username>demo</username></Check></soap:Body></soap:Envelope>`
  );
}

function soap(
  s: TestServer,
  version: Version,
  body: string | Buffer,
  extra: Record<string, string> = {},
): Promise<WireAnswer> {
  return send(s.port, { headers: { ...soapHeaders(version, 'Check'), ...extra }, body });
}

async function expectServed(a: WireAnswer): Promise<void> {
  expect(a.status).toBe(200);
  expect(a.text).toContain('<CheckResult>');
}

async function expectFault(a: WireAnswer, version: Version, code: string, reason: RegExp): Promise<void> {
  expect(await soapFaultProblem({ status: a.status, headers: a.headers, text: a.text }, version)).toBeNull();
  expect(a.text).toContain(`<ErrorCode xmlns="${NS}">${code}</ErrorCode>`);
  expect(a.text).toMatch(reason);
  expect(leakIn(a.text)).toBeNull();
}

const nest = (n: number) => `${'<h>'.repeat(n)}${'</h>'.repeat(n)}`;

describe.each<Version>(['1.1', '1.2'])('defaults, SOAP %s', (version) => {
  // Envelope > Header > h...: the header's elements start at depth 3.
  test('element depth: 32 levels are read, 33 are refused', async () => {
    await expectServed(await soap(dflt, version, withHeader(version, nest(30))));
    await expectFault(
      await soap(dflt, version, withHeader(version, nest(31))),
      version,
      'MALFORMED_REQUEST',
      /elements nested deeper than 32/,
    );
  });

  // Envelope, Header, Body, Check, RegistrationNumber, username: 6, plus the header's.
  test('element count: 1000 elements are read, 1001 are refused', async () => {
    await expectServed(await soap(dflt, version, withHeader(version, '<h/>'.repeat(994))));
    await expectFault(
      await soap(dflt, version, withHeader(version, '<h/>'.repeat(995))),
      version,
      'MALFORMED_REQUEST',
      /more than 1000 elements/,
    );
  });

  test('text of one element: 8192 characters are read, 8193 are refused (CDATA counts too)', async () => {
    await expectServed(await soap(dflt, version, withHeader(version, `<h>${'é'.repeat(8192)}</h>`)));
    await expectFault(
      await soap(dflt, version, withHeader(version, `<h>${'x'.repeat(8193)}</h>`)),
      version,
      'MALFORMED_REQUEST',
      /text of &lt;h&gt; is longer than 8192 characters/,
    );
    await expectFault(
      await soap(dflt, version, withHeader(version, `<h>${'x'.repeat(4096)}<![CDATA[${'y'.repeat(4097)}]]></h>`)),
      version,
      'MALFORMED_REQUEST',
      /longer than 8192 characters/,
    );
  });

  test('attribute value: 8192 characters are read, 8193 are refused', async () => {
    await expectServed(await soap(dflt, version, withHeader(version, `<h a="${'x'.repeat(8192)}"/>`)));
    await expectFault(
      await soap(dflt, version, withHeader(version, `<h a="${'x'.repeat(8193)}"/>`)),
      version,
      'MALFORMED_REQUEST',
      /attribute a of &lt;h&gt; is longer than 8192/,
    );
  });

  test('attributes on one element: 32 are read, 33 are refused (namespace declarations count)', async () => {
    const attrs = (n: number) => Array.from({ length: n }, (_, i) => `a${i}="${i}"`).join(' ');
    await expectServed(await soap(dflt, version, withHeader(version, `<h ${attrs(32)}/>`)));
    await expectFault(
      await soap(dflt, version, withHeader(version, `<h ${attrs(33)}/>`)),
      version,
      'MALFORMED_REQUEST',
      /more than 32 attributes/,
    );
    await expectFault(
      await soap(dflt, version, withHeader(version, `<h xmlns:p="urn:p" ${attrs(32)}/>`)),
      version,
      'MALFORMED_REQUEST',
      /more than 32 attributes/,
    );
  });

  test('body size: 65536 bytes are read, 65537 are refused with 413', async () => {
    const base = withHeader(version, '<!---->');
    const exact = base.replace('<!---->', `<!--${' '.repeat(65_536 - Buffer.byteLength(base))}-->`);
    expect(Buffer.byteLength(exact)).toBe(65_536);
    await expectServed(await soap(dflt, version, exact));
    const over = await soap(dflt, version, exact.replace('<!--', '<!-- '));
    expect(over.status).toBe(413);
    expect(over.ended).toBe('response');
    await expectFault(over, version, 'PAYLOAD_TOO_LARGE', /larger than 65536 bytes/);
  });
});

describe('the body limit before and while reading', () => {
  const soap11 = soapHeaders('1.1', 'Check');

  test('a declared Content-Length over the limit is answered 413 before any of the body is sent', async () => {
    const a = await exchange(dflt.port, [head({ headers: { ...soap11, 'Content-Length': 50_000_000 } }, 0)], {
      timeoutMs: 5000,
    });
    expect(a.status).toBe(413);
    expect(a.ended).toBe('response');
    expect(a.headers.connection).toBe('close');
    await expectFault(a, '1.1', 'PAYLOAD_TOO_LARGE', /larger than 65536 bytes/);
  });

  test('a chunked body with no declared length is cut at the limit, and the client still reads its 413', async () => {
    const body = Buffer.alloc(200_000, 0x20);
    const framed = Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
    const a = await exchange(dflt.port, [
      head({ headers: { ...soap11, 'Transfer-Encoding': 'chunked' }, noLength: true }, 0),
      framed,
    ]);
    expect(a.status).toBe(413);
    expect(a.ended).toBe('response');
    await expectFault(a, '1.1', 'PAYLOAD_TOO_LARGE', /larger than 65536 bytes/);
  });

  test('a gzip bomb is refused at the limit of its inflated size', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(20 * 1024 * 1024, 0x20));
    expect(bomb.length).toBeLessThan(65_536);
    const a = await soap(dflt, '1.1', bomb, { 'Content-Encoding': 'gzip' });
    expect(a.status).toBe(413);
    await expectFault(a, '1.1', 'PAYLOAD_TOO_LARGE', /larger than 65536 bytes/);
    const b = await send(dflt.port, {
      path: '/api/reg.asmx/Check',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Encoding': 'deflate' },
      body: zlib.deflateSync(Buffer.alloc(20 * 1024 * 1024, 0x61)),
    });
    expect(b.status).toBe(413);
    expect(plainErrorProblem({ status: b.status, headers: b.headers, text: b.text })).toBeNull();
  });

  test('coercive parsing is stopped by the depth limit even when the body limit lets it in', async () => {
    const body = withHeader('1.1', '<a>'.repeat(100_000));
    expect(Buffer.byteLength(body)).toBeLessThan(1024 * 1024);
    const a = await soap(roomy, '1.1', body);
    await expectFault(a, '1.1', 'MALFORMED_REQUEST', /elements nested deeper than 32/);
    expect(a.ms).toBeLessThan(2000);
  });

  test.each([
    ['GET', '/api/reg.asmx?WSDL'],
    ['GET', '/api/reg.asmx'],
    ['GET', '/api/reg.asmx/Check?RegistrationNumber=RG11+ABC&username=demo'],
    ['POST', '/api/reg.asmx/Check'],
    ['POST', '/healthz'],
    ['POST', '/api/reg.asmx/NoSuchOperation'],
    ['PUT', '/api/reg.asmx/Check'],
    ['POST', '/no/such/path'],
  ])('%s %s with a body over the limit is 413 (the limit holds on every route)', async (method, path) => {
    const declared = await send(dflt.port, {
      method,
      path,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: Buffer.alloc(70_000, 0x61),
    });
    expect(declared.status).toBe(413);
    expect(plainErrorProblem({ status: declared.status, headers: declared.headers, text: declared.text })).toBeNull();
    const body = Buffer.alloc(70_000, 0x61);
    const chunked = await exchange(dflt.port, [
      head(
        {
          method,
          path,
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Transfer-Encoding': 'chunked' },
          noLength: true,
        },
        0,
      ),
      Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]),
    ]);
    expect(chunked.status).toBe(413);
    expect(chunked.headers['x-error-code']).toBe('PAYLOAD_TOO_LARGE');
  });

  test('a body within the limit on a route that takes none is ignored, not an error', async () => {
    const a = await send(dflt.port, {
      method: 'GET',
      path: '/api/reg.asmx/Check?RegistrationNumber=RG11+ABC&username=demo',
      body: 'ignored=1',
    });
    expect(a.status).toBe(200);
    expect(a.text).toContain('<Vehicle');
  });
});

describe('every limit follows its variable (MAX_BODY_BYTES=2048, XML_MAX_DEPTH=8, XML_MAX_TEXT=100, XML_MAX_ELEMENTS=20, XML_MAX_ATTRIBUTES=2)', () => {
  test('depth', async () => {
    await expectServed(await soap(small, '1.1', withHeader('1.1', nest(6))));
    await expectFault(
      await soap(small, '1.1', withHeader('1.1', nest(7))),
      '1.1',
      'MALFORMED_REQUEST',
      /nested deeper than 8/,
    );
  });

  test('text, attribute values and names', async () => {
    await expectServed(await soap(small, '1.1', withHeader('1.1', `<h>${'x'.repeat(100)}</h>`)));
    await expectFault(
      await soap(small, '1.1', withHeader('1.1', `<h>${'x'.repeat(101)}</h>`)),
      '1.1',
      'MALFORMED_REQUEST',
      /longer than 100 characters/,
    );
    await expectFault(
      await soap(small, '1.1', withHeader('1.1', `<h a="${'x'.repeat(101)}"/>`)),
      '1.1',
      'MALFORMED_REQUEST',
      /longer than 100 characters/,
    );
    await expectFault(
      await soap(small, '1.1', withHeader('1.1', `<h${'x'.repeat(101)}/>`)),
      '1.1',
      'MALFORMED_REQUEST',
      /name is longer than 100 characters/,
    );
  });

  test('elements', async () => {
    await expectServed(await soap(small, '1.1', withHeader('1.1', '<h/>'.repeat(14))));
    await expectFault(
      await soap(small, '1.1', withHeader('1.1', '<h/>'.repeat(15))),
      '1.1',
      'MALFORMED_REQUEST',
      /more than 20 elements/,
    );
  });

  test('attributes', async () => {
    await expectServed(await soap(small, '1.1', withHeader('1.1', '<h a="1" b="2"/>')));
    await expectFault(
      await soap(small, '1.1', withHeader('1.1', '<h a="1" b="2" c="3"/>')),
      '1.1',
      'MALFORMED_REQUEST',
      /more than 2 attributes/,
    );
  });

  test('body size, on SOAP and on the HTTP forms', async () => {
    const a = await soap(small, '1.2', withHeader('1.2', `<!--${' '.repeat(2048)}-->`));
    expect(a.status).toBe(413);
    await expectFault(a, '1.2', 'PAYLOAD_TOO_LARGE', /larger than 2048 bytes/);
    const b = await send(small.port, {
      path: '/api/reg.asmx/Check',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `RegistrationNumber=RG11+ABC&username=demo&pad=${'x'.repeat(2048)}`,
    });
    expect(b.status).toBe(413);
    expect(b.text).toBe('PAYLOAD_TOO_LARGE: Request body is larger than 2048 bytes\n');
  });
});
