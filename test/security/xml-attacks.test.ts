// The attacks of the OWASP XML Security Cheat Sheet, sent to the running server over SOAP 1.1 and
// SOAP 1.2: each is refused with a proper fault, quickly, nothing is expanded or fetched, and the
// server answers an honest caller at the same time.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { NS, SOAP11, SOAP12, soapHeaders } from '../helpers/soap';
import { startServer, type TestServer } from '../helpers/server';
import { leakIn, soapFaultProblem, type Seen } from './answers';
import { exchange, head, send } from './wire';

type Version = '1.1' | '1.2';
const VERSIONS: Version[] = ['1.1', '1.2'];
// "Well under a second", with room for a shared, noisy machine.
const QUICK_MS = 2000;

let server: TestServer;
/** Counts every connection: an external entity or DTD that was fetched would show up here. */
let canary: http.Server;
let canaryHits = 0;
let canaryUrl = '';

beforeAll(async () => {
  server = await startServer();
  canary = http.createServer((_req, res) => {
    canaryHits++;
    res.end('<!ENTITY leak "FETCHED">');
  });
  await new Promise<void>((r) => canary.listen(0, '127.0.0.1', r));
  canaryUrl = `http://127.0.0.1:${(canary.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await server.close();
  await new Promise<void>((r) => canary.close(() => r()));
});

function envelopeAround(version: Version, inner: string, prolog = '<?xml version="1.0" encoding="utf-8"?>'): string {
  return `${prolog}<soap:Envelope xmlns:soap="${version === '1.1' ? SOAP11 : SOAP12}"><soap:Body><Check xmlns="${NS}">${inner}</Check></soap:Body></soap:Envelope>`;
}

const params = (reg = 'RG11 ABC') => `<RegistrationNumber>${reg}</RegistrationNumber><username>demo</username>`;

function soapSend(version: Version, body: Buffer | string, extra: Record<string, string> = {}) {
  return send(server.port, { headers: { ...soapHeaders(version, 'Check'), ...extra }, body });
}

/** An honest GET while the attack is in flight. */
async function honest(): Promise<number> {
  const res = await fetch(`${server.url}/api/reg.asmx/Check?RegistrationNumber=RG11+ABC&username=demo`);
  await res.text();
  return res.status;
}

/** Sends the attack alongside an honest call; expects a proper MALFORMED_REQUEST (or given) fault, fast. */
async function expectRefused(
  version: Version,
  body: Buffer | string,
  opts: { code?: string; reason?: RegExp; extra?: Record<string, string> } = {},
): Promise<Seen> {
  const [a, other] = await Promise.all([soapSend(version, body, opts.extra), honest()]);
  const seen: Seen = { status: a.status, headers: a.headers, text: a.text };
  expect(a.ended).toBe('response');
  expect(await soapFaultProblem(seen, version)).toBeNull();
  expect(a.text).toContain(`<ErrorCode xmlns="${NS}">${opts.code ?? 'MALFORMED_REQUEST'}</ErrorCode>`);
  if (opts.reason) expect(a.text).toMatch(opts.reason);
  expect(leakIn(a.text)).toBeNull();
  expect(a.ms).toBeLessThan(QUICK_MS);
  expect(other).toBe(200);
  return seen;
}

const BILLION_LAUGHS =
  '<!DOCTYPE lolz [<!ENTITY lol "lol">' +
  Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`).join('') +
  ']>';

describe.each(VERSIONS)('SOAP %s', (version) => {
  test('billion laughs: the DOCTYPE is refused and no entity is expanded', async () => {
    const seen = await expectRefused(
      version,
      envelopeAround(version, params('&lol9;'), `<?xml version="1.0"?>${BILLION_LAUGHS}`),
      { reason: /DOCTYPE/ },
    );
    expect(seen.text).not.toContain('lollol');
  });

  test('quadratic blowup: one large entity referenced many times is refused', async () => {
    const big = 'a'.repeat(20_000);
    const body = envelopeAround(
      version,
      params(`${'&a;'.repeat(2_000)}`),
      `<?xml version="1.0"?><!DOCTYPE kaboom [<!ENTITY a "${big}">]>`,
    );
    expect(Buffer.byteLength(body)).toBeLessThan(65_536);
    const seen = await expectRefused(version, body, { reason: /DOCTYPE/ });
    expect(seen.text).not.toContain('aaaaaaaaaa');
  });

  test('recursive entities are refused without looping', async () => {
    await expectRefused(
      version,
      envelopeAround(
        version,
        params('&a;'),
        '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "x&b;"><!ENTITY b "y&a;">]>',
      ),
      { reason: /DOCTYPE/ },
    );
  });

  test('an undeclared entity reference (no DTD at all) is refused, not passed through', async () => {
    await expectRefused(version, envelopeAround(version, params('&xxe;')), {
      reason: /undefined entity reference '&amp;xxe;'/,
    });
  });

  test('external entity (file): refused, and no file content comes back', async () => {
    const seen = await expectRefused(
      version,
      envelopeAround(
        version,
        params('&xxe;'),
        '<?xml version="1.0"?><!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>',
      ),
      { reason: /DOCTYPE/ },
    );
    expect(seen.text).not.toMatch(/root:|\/bin\/(?:ba)?sh/);
  });

  test('external entity (http): refused, and nothing is fetched', async () => {
    const before = canaryHits;
    await expectRefused(
      version,
      envelopeAround(
        version,
        params('&xxe;'),
        `<?xml version="1.0"?><!DOCTYPE foo [<!ENTITY xxe SYSTEM "${canaryUrl}/xxe">]>`,
      ),
    );
    await expectRefused(
      version,
      envelopeAround(version, params('x'), `<?xml version="1.0"?><!DOCTYPE foo SYSTEM "${canaryUrl}/external.dtd">`),
    );
    expect(canaryHits).toBe(before);
  });

  test('parameter entities: refused, and the external DTD is not fetched', async () => {
    const before = canaryHits;
    await expectRefused(
      version,
      envelopeAround(
        version,
        params('&leak;'),
        `<?xml version="1.0"?><!DOCTYPE foo [<!ENTITY % remote SYSTEM "${canaryUrl}/evil.dtd"> %remote;]>`,
      ),
      { reason: /DOCTYPE/ },
    );
    await expectRefused(
      version,
      envelopeAround(
        version,
        params('x'),
        '<?xml version="1.0"?><!DOCTYPE foo [<!ENTITY % p "<!ENTITY q \'Q\'>"> %p;]>',
      ),
    );
    expect(canaryHits).toBe(before);
  });

  test('a DOCTYPE after the XML declaration but with no internal subset is still refused', async () => {
    await expectRefused(version, envelopeAround(version, params(), '<!DOCTYPE soap:Envelope>'), { reason: /DOCTYPE/ });
  });

  test('XInclude and SOAP-encoding references are not followed', async () => {
    const before = canaryHits;
    await expectRefused(
      version,
      envelopeAround(
        version,
        `<RegistrationNumber><xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="${canaryUrl}/x"/></RegistrationNumber><username>demo</username>`,
      ),
      {
        reason: /href/,
      },
    );
    await expectRefused(
      version,
      envelopeAround(version, '<RegistrationNumber href="#r"/><username id="r">demo</username>'),
      { reason: /href/ },
    );
    expect(canaryHits).toBe(before);
  });

  test('a schema location is not fetched: the lookup is simply served', async () => {
    const before = canaryHits;
    const xsi = `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="${NS} ${canaryUrl}/reg.xsd"`;
    const body = envelopeAround(version, params()).replace(`<Check xmlns="${NS}">`, `<Check xmlns="${NS}" ${xsi}>`);
    const a = await soapSend(version, body);
    expect(a.status).toBe(200);
    expect(a.text).toContain('<CheckResult>');
    expect(canaryHits).toBe(before);
  });

  test('processing instructions other than the XML declaration are refused', async () => {
    await expectRefused(version, envelopeAround(version, `<?xml-stylesheet href="${canaryUrl}/x.xsl"?>${params()}`), {
      reason: /processing instructions/,
    });
    await expectRefused(
      version,
      `<?xml-stylesheet type="text/xsl" href="x.xsl"?>${envelopeAround(version, params(), '')}`,
      { reason: /processing instructions/ },
    );
  });

  test('coercive parsing: 100,000 unclosed nested tags are refused as too large before parsing', async () => {
    const seen = await expectRefused(version, envelopeAround(version, '<a>'.repeat(100_000)), {
      code: 'PAYLOAD_TOO_LARGE',
    });
    expect(seen.status).toBe(413);
  });

  test('jumbo payload, very deep: 40 nested elements are refused at the depth limit', async () => {
    await expectRefused(version, envelopeAround(version, `${'<a>'.repeat(40)}${'</a>'.repeat(40)}${params()}`), {
      reason: /nested deeper than 32/,
    });
  });

  test('jumbo payload, very wide: 1,200 sibling elements are refused at the element limit', async () => {
    await expectRefused(version, envelopeAround(version, `${'<a/>'.repeat(1_200)}${params()}`), {
      reason: /more than 1000 elements/,
    });
  });

  test('jumbo payload, huge attribute value: refused at the text limit', async () => {
    await expectRefused(
      version,
      envelopeAround(
        version,
        `<RegistrationNumber a="${'x'.repeat(9_000)}">RG11 ABC</RegistrationNumber><username>demo</username>`,
      ),
      {
        reason: /attribute a of &lt;RegistrationNumber&gt; is longer than 8192 characters/,
      },
    );
  });

  test('jumbo payload, many attributes: refused at the attribute limit', async () => {
    const attrs = Array.from({ length: 40 }, (_, i) => `a${i}="${i}"`).join(' ');
    await expectRefused(
      version,
      envelopeAround(version, `<RegistrationNumber ${attrs}>RG11 ABC</RegistrationNumber><username>demo</username>`),
      { reason: /more than 32 attributes/ },
    );
  });

  test('jumbo payload, huge text and huge names: refused at the text limit', async () => {
    await expectRefused(version, envelopeAround(version, params('R'.repeat(9_000))), {
      reason: /text of &lt;RegistrationNumber&gt; is longer than 8192/,
    });
    const name = `n${'x'.repeat(9_000)}`;
    await expectRefused(version, envelopeAround(version, `<${name}/>${params()}`), {
      reason: /name is longer than 8192/,
    });
  });

  test('invalid UTF-8 (a stray continuation byte, an overlong form, an encoded surrogate) is refused', async () => {
    for (const bad of [[0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xff]]) {
      const [before, after] = envelopeAround(version, params('RG11 @ABC')).split('@');
      await expectRefused(version, Buffer.concat([Buffer.from(before), Buffer.from(bad), Buffer.from(after)]), {
        reason: /not valid UTF-8/,
      });
    }
  });

  test('a UTF-16 body is refused, with its byte-order mark, without it, or announced in the charset', async () => {
    const xml = envelopeAround(version, params(), '<?xml version="1.0" encoding="utf-16"?>');
    await expectRefused(version, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(xml, 'utf16le')]), {
      reason: /UTF-16/,
    });
    await expectRefused(version, Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(xml, 'utf16le').swap16()]), {
      reason: /UTF-16/,
    });
    await expectRefused(version, Buffer.from(xml, 'utf16le'));
    const ct = version === '1.1' ? 'text/xml; charset=utf-16' : 'application/soap+xml; charset=utf-16';
    await expectRefused(version, Buffer.from(xml, 'utf16le'), {
      extra: { 'Content-Type': ct },
      reason: /charset 'utf-16' is not supported/,
    });
    await expectRefused(version, xml, { reason: /encoding 'utf-16'/ });
  });

  test('NUL bytes are refused, raw or as a character reference', async () => {
    await expectRefused(version, envelopeAround(version, params('RG11\u0000ABC')), {
      reason: /character XML does not allow/,
    });
    await expectRefused(version, envelopeAround(version, params('RG11&#0;ABC')), {
      reason: /character reference &amp;#0; is not a character XML allows/,
    });
    await expectRefused(version, Buffer.concat([Buffer.from(envelopeAround(version, params())), Buffer.alloc(16)]));
  });

  test('a body that stops mid-element is refused', async () => {
    const full = envelopeAround(version, params());
    for (const cut of [full.indexOf('<RegistrationNumber>') + 10, full.indexOf('RG11') + 2, full.length - 5]) {
      await expectRefused(version, full.slice(0, cut), { reason: /the body ends inside/ });
    }
  });
});

describe('the connection itself', () => {
  const soap11 = { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${NS}/Check"` };

  test('a client that stops sending half-way and closes gets an error, and the server keeps serving', async () => {
    const body = Buffer.from(envelopeAround('1.1', params()));
    const a = await exchange(server.port, [head({ headers: soap11 }, body.length), body.subarray(0, body.length / 2)], {
      endAfterWrite: true,
      timeoutMs: 5000,
    });
    // The request is cut short: the client still gets an answer (a 400 of our table or Node's own), never mere silence.
    // (Node's own 400 has no length: the server closes after it.)
    expect(a.ended).not.toBe('timeout');
    expect(a.status).toBe(400);
    expect(leakIn(a.text)).toBeNull();
    expect(await honest()).toBe(200);
  });
});

describe('a body slower than the request timeout (REQUEST_TIMEOUT_MS=1500)', () => {
  let slow: TestServer;
  beforeAll(async () => {
    slow = await startServer({ REQUEST_TIMEOUT_MS: '1500' });
  });
  afterAll(async () => {
    await slow.close();
  });

  async function honestTo(s: TestServer): Promise<number> {
    const res = await fetch(`${s.url}/api/reg.asmx/Check?RegistrationNumber=RG11+ABC&username=demo`);
    await res.text();
    return res.status;
  }

  test('a SOAP body trickling in is cut off with 408 and the connection closed; others are served meanwhile', async () => {
    const body = Buffer.from(envelopeAround('1.1', params()));
    const chunks: Buffer[] = [
      Buffer.from(
        head({ headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${NS}/Check"` } }, body.length),
        'latin1',
      ),
    ];
    for (let i = 0; i < body.length; i += 8) chunks.push(body.subarray(i, i + 8));
    const trickle = exchange(slow.port, chunks, { gapMs: 150, timeoutMs: 15_000 });
    await new Promise((r) => setTimeout(r, 300));
    expect(await honestTo(slow)).toBe(200);
    const a = await trickle;
    expect(a.status).toBe(408);
    expect(a.headers.connection).toBe('close');
    // Cut off by the server while the client was still sending: it closed the connection, we did not.
    expect(a.ended).toBe('closed');
    expect(await honestTo(slow)).toBe(200);
  });

  test('headers trickling in (slowloris) are cut off the same way', async () => {
    const text =
      'GET /api/reg.asmx/Check?RegistrationNumber=RG11+ABC&username=demo HTTP/1.1\r\nHost: x\r\nX-Slow: ' +
      'a'.repeat(200);
    const a = await exchange(slow.port, text.split(''), { gapMs: 50, timeoutMs: 15_000 });
    expect(a.status).toBe(408);
    expect(a.ended).toBe('closed');
    expect(await honestTo(slow)).toBe(200);
  });

  test('a form POST body trickling in is cut off with 408 too', async () => {
    const body = Buffer.from('RegistrationNumber=RG11+ABC&username=demo');
    const chunks: Buffer[] = [
      Buffer.from(
        head(
          { path: '/api/reg.asmx/Check', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } },
          body.length,
        ),
        'latin1',
      ),
    ];
    for (let i = 0; i < body.length; i += 2) chunks.push(body.subarray(i, i + 2));
    const a = await exchange(slow.port, chunks, { gapMs: 150, timeoutMs: 15_000 });
    expect(a.status).toBe(408);
    expect(await honestTo(slow)).toBe(200);
  });
});
