// The transport's small pieces on their own (issue 17), on hand-written inputs: form and query
// parsing (README: at most 64 parameters, names ignoring case over HTTP GET/POST, bad
// percent-encoding), Content-Type and Content-Encoding (README: UTF-8 only, 415 for an encoding
// other than identity/gzip/deflate, a declared length over the limit refused before reading), the
// caller's address and the public base behind trusted proxies (README: TRUST_PROXY, plain hosts
// with ports 1-65535), the plain-text error line (README's Errors section: status, X-Error-Code,
// Retry-After, Content-Length), the access log's username, and the DISCO document ASMX writes.

import type http from 'node:http';
import { LookupError } from '../../src/service/errors';
import { addressSet } from '../../src/net/cidr';
import { checkBodyHeaders, checkCharset, decodeUtf8, hasBody, parseMediaType } from '../../src/transport/body';
import { contextOf, note, noteUsername, setContext, type RequestContext } from '../../src/transport/context';
import { callerOf, clientAddress, plainHost, publicBase } from '../../src/transport/forwarded';
import { HTTP_CASE_NOTE, parseForm, queryString } from '../../src/transport/http';
import { sendPlainError } from '../../src/transport/plain';
import { discoDocument } from '../../src/transport/disco';
import type { ContractModel } from '../../src/contract/schema';

function code(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(LookupError);
    return `${(e as LookupError).code}: ${(e as LookupError).message}`;
  }
  throw new Error('no error');
}

describe('parseForm and queryString', () => {
  const names = new Map([
    ['registrationnumber', 'RegistrationNumber'],
    ['RegistrationNumber', 'RegistrationNumber'],
    ['username', 'username'],
    ['state', 'State'],
    ['State', 'State'],
  ]);

  test('pairs, + as a space, percent-encoding, a name without a value, empty pairs skipped', () => {
    const out = parseForm('a=1&b=x+y%20z&&c&d=%C3%A9%3D', undefined);
    expect({ ...out }).toEqual({ a: '1', b: 'x y z', c: '', d: 'é=' });
    expect({ ...parseForm('') }).toEqual({});
    expect({ ...parseForm('a%2Bb+c=1') }).toEqual({ 'a+b c': '1' });
    // A query that is one name and nothing else (spaces and all) is that name with an empty value.
    expect({ ...parseForm('Stryker was here!') }).toEqual({ 'Stryker was here!': '' });
  });

  test('the result has no prototype: a parameter named like an object member is just a parameter', () => {
    const out = parseForm('constructor=1&__proto__=2');
    expect(Object.getPrototypeOf(out)).toBeNull();
    expect(out.constructor).toBe('1');
    expect(out.__proto__).toBe('2');
    expect({ ...parseForm('x=1') }.toString).toBe(Object.prototype.toString);
    expect(Object.getPrototypeOf(parseForm(''))).toBeNull();
  });

  test('repeated names become arrays, in order, without names given', () => {
    expect({ ...parseForm('a=1&a=2&a=3&b=4') }).toEqual({ a: ['1', '2', '3'], b: '4' });
  });

  test('at most 64 parameters (README, Limits): 64 accepted, 65 MALFORMED_REQUEST', () => {
    const q = (n: number) => Array.from({ length: n }, (_, i) => `p${i}=${i}`).join('&');
    expect(Object.keys(parseForm(q(64)))).toHaveLength(64);
    expect(code(() => parseForm(q(65)))).toBe('MALFORMED_REQUEST: More than 64 parameters');
  });

  test('bad percent-encoding, in a name or a value, is MALFORMED_REQUEST', () => {
    for (const q of ['a=%FF', 'a=%C3%28', '%ED%A0%80=1', 'a=%', '%=1']) {
      expect(code(() => parseForm(q))).toBe('MALFORMED_REQUEST: The parameters are not valid percent-encoded UTF-8');
    }
  });

  test("with an operation's names: other spellings are taken under the WSDL's, unknown names kept", () => {
    expect({ ...parseForm('REGISTRATIONNUMBER=A&UserName=u&Other=x&STATE=CA', names) }).toEqual({
      RegistrationNumber: 'A',
      username: 'u',
      Other: 'x',
      State: 'CA',
    });
  });

  test('two spellings of one name are one parameter given twice: INVALID_PARAMETER with the case note', () => {
    expect(code(() => parseForm('State=CA&state=CA', names, HTTP_CASE_NOTE))).toBe(
      `INVALID_PARAMETER: Parameter 'State' was given 2 times; give it once (names are matched ignoring case over HTTP GET/POST)`,
    );
    expect(code(() => parseForm('username=a&username=b&USERNAME=c', names, HTTP_CASE_NOTE))).toMatch(
      /^INVALID_PARAMETER: Parameter 'username' was given 3 times/,
    );
    // Without the note, or for names outside the operation's, repeats are left to the service.
    expect({ ...parseForm('State=CA&state=CA', names) }).toEqual({ State: ['CA', 'CA'] });
    expect({ ...parseForm('x=1&x=2', names, HTTP_CASE_NOTE) }).toEqual({ x: ['1', '2'] });
  });

  test('queryString: what follows the first ?', () => {
    expect(queryString('/api/reg.asmx/Check?a=1&b=2?c')).toBe('a=1&b=2?c');
    expect(queryString('/api/reg.asmx/Check')).toBe('');
    expect(queryString('/x?')).toBe('');
    expect(queryString(undefined)).toBe('');
  });
});

describe('Content-Type, charset, UTF-8', () => {
  test('parseMediaType: the type in lower case, parameters by lower-case name, quotes removed', () => {
    const m = parseMediaType(
      ' Application/SOAP+XML ; Charset="UTF-8"; action="http://regcheck.org.uk/Check" ;bad; x = y ',
    );
    expect(m.type).toBe('application/soap+xml');
    expect([...m.params]).toEqual([
      ['charset', 'UTF-8'],
      ['action', 'http://regcheck.org.uk/Check'],
      ['x', 'y'],
    ]);
    expect(parseMediaType(undefined)).toEqual({ type: '', params: new Map() });
    expect(parseMediaType('text/xml;a="b').params.get('a')).toBe('"b');
    expect(parseMediaType('text/xml;a=b=c').params.get('a')).toBe('b=c');
    // Only a value wholly in quotes loses them.
    expect(parseMediaType('text/xml; a=x"y"').params.get('a')).toBe('x"y"');
    expect(parseMediaType('text/xml; a="x"y').params.get('a')).toBe('"x"y');
  });

  test('checkCharset: UTF-8 in any spelling, or none, passes; anything else is MALFORMED_REQUEST', () => {
    for (const ok of ['text/xml', 'text/xml; charset=utf-8', 'text/xml; charset=UTF8', 'text/xml; charset="Utf-8"'])
      expect(() => checkCharset(parseMediaType(ok))).not.toThrow();
    expect(code(() => checkCharset(parseMediaType('text/xml; charset=utf-16')))).toBe(
      "MALFORMED_REQUEST: charset 'utf-16' is not supported; send UTF-8",
    );
    expect(code(() => checkCharset(parseMediaType('text/xml; charset=iso-8859-1')))).toMatch(
      /^MALFORMED_REQUEST: charset 'iso-8859-1'/,
    );
    expect(code(() => checkCharset(parseMediaType('text/xml; charset=xutf-8')))).toMatch(/^MALFORMED_REQUEST/);
    expect(code(() => checkCharset(parseMediaType('text/xml; charset=utf-8x')))).toMatch(/^MALFORMED_REQUEST/);
    expect(code(() => checkCharset(parseMediaType('text/xml; charset=')))).toMatch(/^MALFORMED_REQUEST/);
  });

  test('decodeUtf8: UTF-8 text, a UTF-8 BOM kept out; UTF-16 by either BOM and invalid bytes refused', () => {
    expect(decodeUtf8(Buffer.from('héllo'))).toBe('héllo');
    expect(decodeUtf8(Buffer.from([0xef, 0xbb, 0xbf, 0x41]))).toBe('A');
    expect(decodeUtf8(Buffer.alloc(0))).toBe('');
    expect(code(() => decodeUtf8(Buffer.from([0xff, 0xfe, 0x3c, 0x00])))).toBe(
      'MALFORMED_REQUEST: The body is UTF-16; only UTF-8 is accepted',
    );
    expect(code(() => decodeUtf8(Buffer.from([0xfe, 0xff, 0x00, 0x3c])))).toBe(
      'MALFORMED_REQUEST: The body is UTF-16; only UTF-8 is accepted',
    );
    expect(code(() => decodeUtf8(Buffer.from([0xff, 0xfe])))).toBe(
      'MALFORMED_REQUEST: The body is UTF-16; only UTF-8 is accepted',
    );
    expect(code(() => decodeUtf8(Buffer.from([0xfe, 0xff])))).toBe(
      'MALFORMED_REQUEST: The body is UTF-16; only UTF-8 is accepted',
    );
    expect(code(() => decodeUtf8(Buffer.from([0x41, 0xc3, 0x28])))).toBe(
      'MALFORMED_REQUEST: The body is not valid UTF-8',
    );
    // Only both bytes of a BOM make UTF-16: 0xFF or 0xFE followed by something else is just invalid UTF-8.
    expect(code(() => decodeUtf8(Buffer.from([0xff, 0x41])))).toBe('MALFORMED_REQUEST: The body is not valid UTF-8');
    expect(code(() => decodeUtf8(Buffer.from([0xfe, 0x41])))).toBe('MALFORMED_REQUEST: The body is not valid UTF-8');
    expect(code(() => decodeUtf8(Buffer.from([0x41, 0xff, 0xfe])))).toBe(
      'MALFORMED_REQUEST: The body is not valid UTF-8',
    );
    expect(code(() => decodeUtf8(Buffer.from([0xfe, 0xfe])))).toBe('MALFORMED_REQUEST: The body is not valid UTF-8');
    expect(code(() => decodeUtf8(Buffer.from([0xff, 0xff])))).toBe('MALFORMED_REQUEST: The body is not valid UTF-8');
  });

  function decodeUtf8OrCode(b: Buffer): string {
    try {
      return decodeUtf8(b);
    } catch (e) {
      return (e as LookupError).code;
    }
  }
  test('a single 0xFF byte is not UTF-8', () => {
    expect(decodeUtf8OrCode(Buffer.from([0xff]))).toBe('MALFORMED_REQUEST');
  });
});

describe('body headers', () => {
  const req = (headers: Record<string, string>) => ({ headers }) as unknown as http.IncomingMessage;

  test('hasBody: a declared length above 0, or chunked', () => {
    expect(hasBody(req({}))).toBe(false);
    expect(hasBody(req({ 'content-length': '0' }))).toBe(false);
    expect(hasBody(req({ 'content-length': '1' }))).toBe(true);
    expect(hasBody(req({ 'transfer-encoding': 'chunked' }))).toBe(true);
  });

  test('checkBodyHeaders: a declared length over the limit is PAYLOAD_TOO_LARGE before reading; at the limit accepted', () => {
    expect(checkBodyHeaders(req({ 'content-length': '1024' }), 1024)).toBe('identity');
    expect(code(() => checkBodyHeaders(req({ 'content-length': '1025' }), 1024))).toBe(
      'PAYLOAD_TOO_LARGE: Request body is larger than 1024 bytes',
    );
  });

  test('checkBodyHeaders: identity, gzip and deflate in any case; anything else UNSUPPORTED_MEDIA_TYPE (415)', () => {
    expect(checkBodyHeaders(req({}), 1024)).toBe('identity');
    expect(checkBodyHeaders(req({ 'content-encoding': ' GZIP ' }), 1024)).toBe('gzip');
    expect(checkBodyHeaders(req({ 'content-encoding': 'Deflate' }), 1024)).toBe('deflate');
    expect(checkBodyHeaders(req({ 'content-encoding': 'identity' }), 1024)).toBe('identity');
    const e = (() => {
      try {
        checkBodyHeaders(req({ 'content-encoding': 'br' }), 1024);
      } catch (err) {
        return err as LookupError;
      }
      throw new Error('accepted');
    })();
    expect(e.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(e.spec.status).toBe(415);
    expect(e.message).toBe("Content-Encoding 'br' is not supported (use identity, gzip or deflate)");
    expect(code(() => checkBodyHeaders(req({ 'content-encoding': 'x'.repeat(30) }), 1024))).toBe(
      `UNSUPPORTED_MEDIA_TYPE: Content-Encoding '${'x'.repeat(20)}' is not supported (use identity, gzip or deflate)`,
    );
  });
});

describe('the caller behind proxies', () => {
  type R = {
    socket: { remoteAddress?: string; localAddress?: string; localPort?: number };
    headers: Record<string, string | string[] | undefined>;
  };
  const req = (
    remote: string | undefined,
    headers: R['headers'] = {},
    local: { localAddress?: string; localPort?: number } = { localAddress: '127.0.0.1', localPort: 8080 },
  ) => ({ socket: { remoteAddress: remote, ...local }, headers }) as unknown as http.IncomingMessage;
  const none = addressSet([]);
  const proxies = addressSet(['10.0.0.0/8', '::1']);

  test('without TRUST_PROXY the socket address, whatever X-Forwarded-For says', () => {
    expect(clientAddress(req('192.0.2.1', { 'x-forwarded-for': '203.0.113.9' }), none)).toBe('192.0.2.1');
    expect(callerOf(req('192.0.2.1', { 'x-forwarded-for': '203.0.113.9' }), none)).toEqual({ address: '192.0.2.1' });
    expect(clientAddress(req(undefined), none)).toBe('');
  });

  test('from an untrusted socket, X-Forwarded-For is ignored', () => {
    expect(clientAddress(req('192.0.2.1', { 'x-forwarded-for': '203.0.113.9' }), proxies)).toBe('192.0.2.1');
  });

  test('from a trusted proxy: the right-most hop that is not a trusted proxy', () => {
    expect(clientAddress(req('10.0.0.1', { 'x-forwarded-for': '198.51.100.7, 203.0.113.9, 10.1.1.1' }), proxies)).toBe(
      '203.0.113.9',
    );
    expect(callerOf(req('10.0.0.1', { 'x-forwarded-for': '203.0.113.9' }), proxies)).toEqual({
      address: '203.0.113.9',
    });
    expect(clientAddress(req('::1', { 'x-forwarded-for': ['198.51.100.7', '203.0.113.9 , 10.0.0.2'] }), proxies)).toBe(
      '203.0.113.9',
    );
  });

  test('hops written with ports, and empty hops', () => {
    expect(clientAddress(req('10.0.0.1', { 'x-forwarded-for': '203.0.113.9:5678' }), proxies)).toBe('203.0.113.9');
    expect(clientAddress(req('10.0.0.1', { 'x-forwarded-for': '198.51.100.77:5678' }), proxies)).toBe('198.51.100.77');
    expect(clientAddress(req('10.0.0.1', { 'x-forwarded-for': '[2001:db8::1]:5678' }), proxies)).toBe('2001:db8::1');
    expect(clientAddress(req('10.0.0.1', { 'x-forwarded-for': '[2001:db8::1]' }), proxies)).toBe('2001:db8::1');
    expect(clientAddress(req('10.0.0.1', { 'x-forwarded-for': '2001:db8::2' }), proxies)).toBe('2001:db8::2');
    expect(clientAddress(req('10.0.0.1', { 'x-forwarded-for': ' ,203.0.113.9,, ' }), proxies)).toBe('203.0.113.9');
    // Not an IPv4 address with a port: kept as written.
    expect(clientAddress(req('10.0.0.1', { 'x-forwarded-for': 'host:80' }), proxies)).toBe('host:80');
    expect(clientAddress(req('10.0.0.1', { 'x-forwarded-for': 'x1.2.3.4:80' }), proxies)).toBe('x1.2.3.4:80');
    expect(clientAddress(req('10.0.0.1', { 'x-forwarded-for': '1.2.3.4:80x' }), proxies)).toBe('1.2.3.4:80x');
    expect(clientAddress(req('10.0.0.1', { 'x-forwarded-for': 'x[::1]:80' }), proxies)).toBe('x[::1]:80');
    expect(clientAddress(req('10.0.0.1', { 'x-forwarded-for': '[::2]:80x' }), proxies)).toBe('[::2]:80x');
    // A trusted proxy's hop written with a port is still a trusted proxy.
    expect(clientAddress(req('10.0.0.1', { 'x-forwarded-for': '203.0.113.9, 10.0.0.5:443' }), proxies)).toBe(
      '203.0.113.9',
    );
  });

  test('every hop a trusted proxy: the left-most; no header: the socket', () => {
    expect(clientAddress(req('10.0.0.1', { 'x-forwarded-for': '10.0.0.3:1, 10.0.0.2' }), proxies)).toBe('10.0.0.3');
    expect(clientAddress(req('10.0.0.1'), proxies)).toBe('10.0.0.1');
    expect(clientAddress(req('10.0.0.1', { 'x-forwarded-for': '' }), proxies)).toBe('10.0.0.1');
  });

  test('plainHost: names, IPv4, bracketed IPv6, ports 1 to 65535; normalised as a URL writes it', () => {
    expect(plainHost('Example.COM')).toBe('example.com');
    expect(plainHost('example.com:80')).toBe('example.com');
    expect(plainHost('example.com:8080')).toBe('example.com:8080');
    expect(plainHost('example.com:1')).toBe('example.com:1');
    expect(plainHost('example.com:65535')).toBe('example.com:65535');
    expect(plainHost('192.0.2.1:443')).toBe('192.0.2.1:443');
    expect(plainHost('[2001:DB8::1]:8443')).toBe('[2001:db8::1]:8443');
    expect(plainHost('a')).toBe('a');
  });

  test("plainHost: the README's refusals (:0, :65536, :99999, 256.1.1.1, two ports) and others", () => {
    for (const bad of [
      undefined,
      '',
      'example.com:0',
      'example.com:65536',
      'example.com:99999',
      '256.1.1.1',
      'example.com:80:80',
      'a b',
      'x/y',
      '-a',
      'a:',
      '[::1',
      '[x]',
      'example.com:123456',
      'user@host',
      `a${'b'.repeat(252)}`,
      '[:::]',
    ]) {
      expect(plainHost(bad)).toBeNull();
    }
    expect(plainHost(`a${'b'.repeat(251)}`)).toBe(`a${'b'.repeat(251)}`);
  });

  test('publicBase: PUBLIC_URL first; then the Host over plain HTTP', () => {
    expect(publicBase(req('192.0.2.1', { host: 'x.example' }), none, 'https://pub.example/reg')).toBe(
      'https://pub.example/reg',
    );
    expect(publicBase(req('192.0.2.1', { host: 'X.example:8080' }), none, null)).toBe('http://x.example:8080');
  });

  test('publicBase: forwarded scheme, host and prefix believed only from a trusted proxy', () => {
    const fwd = {
      host: 'inner:3000',
      'x-forwarded-proto': 'HTTPS, http',
      'x-forwarded-host': 'api.example, other',
      'x-forwarded-prefix': '/reg/',
    };
    expect(publicBase(req('10.0.0.1', fwd), proxies, null)).toBe('https://api.example/reg');
    expect(publicBase(req('192.0.2.1', fwd), proxies, null)).toBe('http://inner:3000');
    expect(publicBase(req('10.0.0.1', { ...fwd, 'x-forwarded-proto': ['http', 'https'] }), proxies, null)).toBe(
      'http://api.example/reg',
    );
    expect(publicBase(req('10.0.0.1', fwd), none, null)).toBe('http://inner:3000');
    // The first value of a list, without the spaces around it.
    expect(
      publicBase(
        req('10.0.0.1', {
          host: 'inner:3000',
          'x-forwarded-host': 'api.example , other',
          'x-forwarded-proto': 'https , http',
          'x-forwarded-prefix': '/reg , /x',
        }),
        proxies,
        null,
      ),
    ).toBe('https://api.example/reg');
  });

  test('publicBase: a forwarded scheme, host or prefix that is not plain is ignored', () => {
    const base = { host: 'inner:3000' };
    expect(publicBase(req('10.0.0.1', { ...base, 'x-forwarded-proto': 'ftp' }), proxies, null)).toBe(
      'http://inner:3000',
    );
    expect(publicBase(req('10.0.0.1', { ...base, 'x-forwarded-host': 'bad host' }), proxies, null)).toBe(
      'http://inner:3000',
    );
    expect(publicBase(req('10.0.0.1', { ...base, 'x-forwarded-prefix': '/../x' }), proxies, null)).toBe(
      'http://inner:3000',
    );
    expect(publicBase(req('10.0.0.1', { ...base, 'x-forwarded-prefix': 'reg' }), proxies, null)).toBe(
      'http://inner:3000',
    );
    expect(publicBase(req('10.0.0.1', { ...base, 'x-forwarded-prefix': '/a/b' }), proxies, null)).toBe(
      'http://inner:3000/a/b',
    );
    expect(publicBase(req('10.0.0.1', { ...base, 'x-forwarded-prefix': '/a/./b' }), proxies, null)).toBe(
      'http://inner:3000',
    );
    expect(publicBase(req('10.0.0.1', { ...base, 'x-forwarded-prefix': '/a/b/c/d/e/f/g/h/i' }), proxies, null)).toBe(
      'http://inner:3000',
    );
    expect(publicBase(req('10.0.0.1', { ...base, 'x-forwarded-prefix': `/${'a'.repeat(65)}` }), proxies, null)).toBe(
      'http://inner:3000',
    );
    expect(publicBase(req('10.0.0.1', { ...base, 'x-forwarded-prefix': '/..x' }), proxies, null)).toBe(
      'http://inner:3000/..x',
    );
    expect(publicBase(req('10.0.0.1', { ...base, 'x-forwarded-prefix': '/x/' }), proxies, null)).toBe(
      'http://inner:3000/x',
    );
  });

  test('publicBase: a Host that is not plain gives the address the request came in on', () => {
    expect(
      publicBase(
        req('192.0.2.1', { host: 'evil.example:0' }, { localAddress: '192.0.2.10', localPort: 8080 }),
        none,
        null,
      ),
    ).toBe('http://192.0.2.10:8080');
    expect(publicBase(req('192.0.2.1', {}, { localAddress: '::1', localPort: 3000 }), none, null)).toBe(
      'http://[::1]:3000',
    );
    expect(publicBase(req('192.0.2.1', {}, {}), none, null)).toBe('http://127.0.0.1:80');
    // Behind a proxy, with its scheme and prefix.
    expect(
      publicBase(
        req(
          '10.0.0.1',
          { 'x-forwarded-proto': 'https', 'x-forwarded-prefix': '/p' },
          { localAddress: '10.0.0.9', localPort: 80 },
        ),
        proxies,
        null,
      ),
    ).toBe('https://10.0.0.9:80/p');
  });
});

describe('the request context and the access log username', () => {
  const fresh = () => {
    const req = {} as http.IncomingMessage;
    const ctx: RequestContext = { id: 'r1', start: 0 };
    setContext(req, ctx);
    return { req, ctx };
  };

  test('note fills in fields; contextOf returns the same object; a request without one is left alone', () => {
    const { req, ctx } = fresh();
    note(req, { transport: 'get', operation: 'Check' });
    expect(contextOf(req)).toBe(ctx);
    expect(ctx).toEqual({ id: 'r1', start: 0, transport: 'get', operation: 'Check' });
    const bare = {} as http.IncomingMessage;
    note(bare, { transport: 'get' });
    noteUsername(bare, 'x');
    expect(contextOf(bare)).toBeUndefined();
  });

  test('noteUsername: a string, the first of repeated values, a SOAP element text, a number; whole, so its fingerprint is the one the CLI prints', () => {
    const cases: Array<[unknown, string | undefined]> = [
      ['alice', 'alice'],
      [['bob', 'carol'], 'bob'],
      [{ $value: 'dave' }, 'dave'],
      [42, '42'],
      ['u'.repeat(65), 'u'.repeat(65)],
      [undefined, undefined],
      [null, undefined],
      [{ other: 'x' }, undefined],
      [true, undefined],
    ];
    for (const [raw, want] of cases) {
      const { req, ctx } = fresh();
      noteUsername(req, raw);
      expect(ctx.username).toBe(want);
    }
  });
});

describe('the text/plain error line (README, Errors)', () => {
  function fakeRes(sent = false) {
    const r = {
      headersSent: sent,
      status: 0,
      headers: {} as Record<string, string | number>,
      body: undefined as unknown,
      ended: false,
      destroyed: false,
      writeHead(status: number, headers: Record<string, string | number>) {
        r.status = status;
        r.headers = headers;
      },
      end(body?: unknown) {
        r.ended = true;
        r.body = body;
      },
      destroy() {
        r.destroyed = true;
      },
    };
    return r;
  }
  const send = (err: LookupError, method = 'GET', extra?: Record<string, string>, sent = false) => {
    const req = { method } as http.IncomingMessage;
    const ctx: RequestContext = { id: 'r', start: 0 };
    setContext(req, ctx);
    const res = fakeRes(sent);
    sendPlainError(req, res as unknown as http.ServerResponse, err, extra);
    return { res, ctx };
  };

  test('status from the table, one line CODE: message, its length, X-Error-Code, nosniff; the code noted', () => {
    const { res, ctx } = send(new LookupError('VEHICLE_NOT_FOUND', "No vehicle found for registration 'ZZ99ZZZ'"));
    expect(res.status).toBe(404);
    expect(res.body).toBe("VEHICLE_NOT_FOUND: No vehicle found for registration 'ZZ99ZZZ'\n");
    expect(res.headers).toEqual({
      'Content-Type': 'text/plain; charset=utf-8',
      'Content-Length': Buffer.byteLength("VEHICLE_NOT_FOUND: No vehicle found for registration 'ZZ99ZZZ'\n"),
      'X-Error-Code': 'VEHICLE_NOT_FOUND',
      'X-Content-Type-Options': 'nosniff',
    });
    expect(ctx.errorCode).toBe('VEHICLE_NOT_FOUND');
  });

  test('line breaks in the message become one space; Content-Length counts bytes', () => {
    const { res } = send(new LookupError('INVALID_PARAMETER', 'a\r\n\nb\rc é'));
    expect(res.body).toBe('INVALID_PARAMETER: a b c é\n');
    expect(res.headers['Content-Length']).toBe(28);
  });

  test('Retry-After where it applies; Connection: close for 413; Allow passed on for 405', () => {
    expect(send(new LookupError('RATE_LIMITED', 'slow down', 7)).res.headers['Retry-After']).toBe(7);
    expect(send(new LookupError('RATE_LIMITED', 'slow down', 7)).res.status).toBe(429);
    expect(send(new LookupError('OUT_OF_CREDIT', 'Out of credit')).res.headers).not.toHaveProperty('Retry-After');
    const big = send(new LookupError('PAYLOAD_TOO_LARGE', 'too big')).res;
    expect(big.status).toBe(413);
    expect(big.headers.Connection).toBe('close');
    expect(send(new LookupError('MALFORMED_REQUEST', 'bad')).res.headers).not.toHaveProperty('Connection');
    const m = send(new LookupError('METHOD_NOT_ALLOWED', 'no'), 'PUT', { Allow: 'GET, HEAD, POST' }).res;
    expect(m.status).toBe(405);
    expect(m.headers.Allow).toBe('GET, HEAD, POST');
  });

  test('HEAD gets the headers and no body; an answer already under way is cut off instead', () => {
    const head = send(new LookupError('VEHICLE_NOT_FOUND', 'No vehicle found'), 'HEAD').res;
    expect(head.status).toBe(404);
    expect(head.ended).toBe(true);
    expect(head.body).toBeUndefined();
    expect(head.headers['Content-Length']).toBe(Buffer.byteLength('VEHICLE_NOT_FOUND: No vehicle found\n'));
    const late = send(new LookupError('INTERNAL_ERROR', 'x'), 'GET', undefined, true);
    expect(late.res.destroyed).toBe(true);
    expect(late.res.status).toBe(0);
    expect(late.res.ended).toBe(false);
    expect(late.ctx.errorCode).toBe('INTERNAL_ERROR');
  });
});

describe('the DISCO document', () => {
  test('as ASMX writes it: a contractRef to ?wsdl and one soap element per SOAP binding', () => {
    const model = { bindings: { soap11: 'RegSoap', soap12: 'RegSoap12' } } as unknown as ContractModel;
    const doc = discoDocument(model, 'http://regcheck.org.uk', 'http://h.example/api/reg.asmx');
    expect(doc).toBe(
      '<?xml version="1.0" encoding="utf-8"?>\r\n' +
        '<discovery xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns="http://schemas.xmlsoap.org/disco/">\r\n' +
        '  <contractRef ref="http://h.example/api/reg.asmx?wsdl" docRef="http://h.example/api/reg.asmx" xmlns="http://schemas.xmlsoap.org/disco/scl/" />\r\n' +
        '  <soap address="http://h.example/api/reg.asmx" xmlns:q1="http://regcheck.org.uk" binding="q1:RegSoap" xmlns="http://schemas.xmlsoap.org/disco/soap/" />\r\n' +
        '  <soap address="http://h.example/api/reg.asmx" xmlns:q2="http://regcheck.org.uk" binding="q2:RegSoap12" xmlns="http://schemas.xmlsoap.org/disco/soap/" />\r\n' +
        '</discovery>',
    );
  });

  test('addresses and names are escaped as attribute values', () => {
    const model = { bindings: { soap11: 'A"B', soap12: 'C<D' } } as unknown as ContractModel;
    const doc = discoDocument(model, 'urn:a&b', 'http://h/x?a=1&b="2"');
    expect(doc).toContain('address="http://h/x?a=1&amp;b=&quot;2&quot;"');
    expect(doc).toContain('xmlns:q1="urn:a&amp;b"');
    expect(doc).toContain('binding="q1:A&quot;B"');
    expect(doc).toContain('binding="q2:C&lt;D"');
  });
});
