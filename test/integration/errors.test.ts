// Every error code over every transport it can occur on, in the form that transport expects:
// a SOAP fault with <ErrorCode> for SOAP, a status and one plain line for GET/POST. What each code
// must look like comes from the README's error table (status, SOAP 1.1 faultcode, SOAP 1.2 Code),
// never from the code's own table.

import { createHash } from 'node:crypto';
import { ERRORS, type ErrorCode } from '../../src/service/errors';
import { SqliteStore } from '../../src/store/sqlite';
import type { FoundRecord, RecordKey } from '../../src/store/store';
import {
  call,
  fetchAnswer as raw,
  postSoap as soapRaw,
  TRANSPORTS,
  type Answer,
  type Transport,
} from '../helpers/call';
import { envelope, NS, SOAP11, SOAP12 } from '../helpers/soap';
import { startServer, type TestServer } from '../helpers/server';
import { leakIn } from '../security/answers';
import { documentedError, documentedErrors } from '../helpers/readme';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

/** A store whose page holding one record is broken: that record's lookup fails, the others are read. */
class BrokenStore extends SqliteStore {
  override async get(key: RecordKey): Promise<FoundRecord | null> {
    if (key.registration === BROKEN_KEY)
      throw new Error(
        'SQLITE_CORRUPT: database disk image is malformed at /var/lib/reglookup/secret.db (SELECT payload FROM records)',
      );
    return super.get(key);
  }
}
const BROKEN_KEY = 'RG11ABC';

let open: TestServer;
let registered: TestServer;
let limited: TestServer;
let broken: TestServer;
let sandbox: TestServer;
beforeAll(async () => {
  open = await startServer();
  registered = await startServer({ USERNAME_POLICY: 'registered' });
  await registered.store.accounts.putAccount({ username: key('alice'), credits: null });
  limited = await startServer({ RATE_LIMIT: '0.01', RATE_LIMIT_BURST: '0' });
  broken = await startServer({}, { store: new BrokenStore(':memory:') });
  sandbox = await startServer({ SANDBOX: 'on' });
});
afterAll(async () => {
  await Promise.all([open, registered, limited, broken, sandbox].map((s) => s.close()));
});

const isSoap = (t: Transport) => t === 'soap11' || t === 'soap12';

function expectError(t: Transport, res: Answer, code: ErrorCode): void {
  const doc = documentedError(code);
  expect(leakIn(res.body)).toBeNull();
  expect(res.body).not.toMatch(/secret\.db|SQLITE/);
  // README: every answer carries a Content-Length, never chunked; and an X-Request-Id.
  expect(res.headers.get('transfer-encoding')).toBeNull();
  expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(res.body));
  expect(res.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._-]{1,64}$/);
  if (isSoap(t)) {
    expect(res.status).toBe(doc.soapStatus);
    expect(res.headers.get('content-type')).toBe(
      t === 'soap11' ? 'text/xml; charset=utf-8' : 'application/soap+xml; charset=utf-8',
    );
    expect(res.body).toContain(`xmlns:soap="${t === 'soap11' ? SOAP11 : SOAP12}"`);
    expect(res.body).toContain(`<ErrorCode xmlns="${NS}">${code}</ErrorCode>`);
    if (t === 'soap11') {
      expect(res.body).toContain(`<faultcode>${doc.faultcode11}</faultcode>`);
      expect(res.body).toMatch(/<faultstring>[^<]{10,}<\/faultstring>/);
    } else {
      expect(res.body).toContain(
        `<soap:Code><soap:Value>${doc.code12}</soap:Value><soap:Subcode><soap:Value xmlns:rl="${NS}">rl:${code}</soap:Value></soap:Subcode></soap:Code>`,
      );
      expect(res.body).toMatch(/<soap:Reason><soap:Text xml:lang="en">[^<]{10,}<\/soap:Text><\/soap:Reason>/);
      expect(res.body).toContain('<soap:Detail>');
    }
  } else {
    expect(res.status).toBe(doc.status);
    // README: "... and `Retry-After` where it applies" (the rows that name it).
    if (doc.retryAfter) expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    else expect(res.headers.get('retry-after')).toBeNull();
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('x-error-code')).toBe(code);
    expect(res.body).toMatch(new RegExp(`^${code}: [^\\n]{10,}\\n$`));
  }
}

/** README: METHOD_NOT_ALLOWED is 'a method other than GET/POST (`Allow` says which)'. */
async function allowSaysWhich(answer: Promise<Answer>, used: string): Promise<Answer> {
  const res = await answer;
  const allowed = (res.headers.get('allow') ?? '').split(',').map((m) => m.trim());
  expect(allowed).toEqual(expect.arrayContaining(['GET', 'POST']));
  expect(allowed).not.toContain(used);
  return res;
}

const big = 'A'.repeat(70 * 1024);
const mismatch = (t: Transport) =>
  envelope(t === 'soap11' ? '1.2' : '1.1', 'Check', { RegistrationNumber: 'RG11ABC', username: 'demo' });

/** How to cause each code on each transport; a code absent for a transport cannot occur there. */
const TRIGGERS: Record<
  ErrorCode,
  Partial<Record<Transport, () => Promise<Answer>>> & { all?: (t: Transport) => Promise<Answer> }
> = {
  MISSING_PARAMETER: { all: (t) => call(open.url, t, 'Check', { RegistrationNumber: 'RG11ABC' }) },
  INVALID_PARAMETER: {
    all: (t) => call(open.url, t, 'CheckUSA', { RegistrationNumber: '7ABC123', State: 'Narnia', username: 'demo' }),
  },
  MALFORMED_REQUEST: {
    soap11: () =>
      soapRaw(open.url, '1.1', envelope('1.1', 'Check', { RegistrationNumber: 'X', username: 'demo' }).slice(0, -30)),
    soap12: () =>
      soapRaw(
        open.url,
        '1.2',
        envelope('1.2', 'Check', { RegistrationNumber: 'X', username: 'demo' }).replace(
          '<soap:Body>',
          '<soap:Body><a><b></a>',
        ),
      ),
    get: () => raw(open.url, '/api/reg.asmx/Check?RegistrationNumber=%FF%FE&username=demo', {}),
    post: () =>
      raw(open.url, '/api/reg.asmx/Check', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'RegistrationNumber=%C3%28&username=demo',
      }),
  },
  UNKNOWN_USERNAME: {
    all: (t) => call(registered.url, t, 'Check', { RegistrationNumber: 'RG11ABC', username: 'mallory' }),
  },
  UNKNOWN_OPERATION: {
    soap11: () =>
      soapRaw(open.url, '1.1', envelope('1.1', 'CheckMars', { RegistrationNumber: 'X', username: 'demo' }), {
        SOAPAction: `"${NS}/CheckMars"`,
      }),
    soap12: () => soapRaw(open.url, '1.2', envelope('1.2', 'CheckMars', { RegistrationNumber: 'X', username: 'demo' })),
    get: () => raw(open.url, '/api/reg.asmx/CheckMars?RegistrationNumber=X&username=demo', {}),
    post: () =>
      raw(open.url, '/api/reg.asmx/CheckMars', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'RegistrationNumber=X&username=demo',
      }),
  },
  VEHICLE_NOT_FOUND: { all: (t) => call(open.url, t, 'Check', { RegistrationNumber: 'ZZ99 ZZZ', username: 'demo' }) },
  METHOD_NOT_ALLOWED: {
    get: () =>
      allowSaysWhich(raw(open.url, '/api/reg.asmx/Check?RegistrationNumber=X&username=demo', { method: 'PUT' }), 'PUT'),
    post: () => allowSaysWhich(raw(open.url, '/api/reg.asmx/Check', { method: 'DELETE' }), 'DELETE'),
  },
  PAYLOAD_TOO_LARGE: {
    soap11: () => soapRaw(open.url, '1.1', envelope('1.1', 'Check', { RegistrationNumber: big, username: 'demo' })),
    soap12: () => soapRaw(open.url, '1.2', envelope('1.2', 'Check', { RegistrationNumber: big, username: 'demo' })),
    post: () =>
      raw(open.url, '/api/reg.asmx/Check', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: `RegistrationNumber=${big}&username=demo`,
      }),
  },
  UNSUPPORTED_MEDIA_TYPE: {
    post: () =>
      raw(open.url, '/api/reg.asmx/Check', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"RegistrationNumber":"RG11ABC"}',
      }),
  },
  OUT_OF_CREDIT: {
    all: async (t) => {
      await registered.store.accounts.putAccount({ username: key('bob'), credits: 1 });
      const first = await call(registered.url, t, 'Check', { RegistrationNumber: 'RG11ABC', username: 'bob' });
      expect(first.status).toBe(200);
      const second = await call(registered.url, t, 'Check', { RegistrationNumber: 'RG11ABC', username: 'bob' });
      // Credits never come back by themselves: nothing to wait for.
      expect(second.headers.get('retry-after')).toBeNull();
      expect(second.body).toMatch(/Out of credit/);
      return second;
    },
  },
  DAILY_LIMIT_REACHED: {
    all: async (t) => {
      const user = `daily-${t}`;
      await registered.store.accounts.putAccount({ username: key(user), dailyLimit: 1 });
      const first = await call(registered.url, t, 'Check', { RegistrationNumber: 'RG11ABC', username: user });
      expect(first.status).toBe(200);
      const second = await call(registered.url, t, 'Check', { RegistrationNumber: 'RG11ABC', username: user });
      const wait = Number(second.headers.get('retry-after'));
      expect(wait).toBeGreaterThanOrEqual(1);
      expect(wait).toBeLessThanOrEqual(86400);
      return second;
    },
  },
  RATE_LIMITED: {
    all: async (t) => {
      const user = `burst-${t}`;
      const first = await call(limited.url, t, 'Check', { RegistrationNumber: 'RG11ABC', username: user });
      expect(first.status).toBe(200);
      const second = await call(limited.url, t, 'Check', { RegistrationNumber: 'RG11ABC', username: user });
      const wait = Number(second.headers.get('retry-after'));
      expect(wait).toBeGreaterThanOrEqual(1);
      expect(wait).toBeLessThanOrEqual(100); // RATE_LIMIT=0.01: one lookup per 100 s
      return second;
    },
  },
  VERSION_MISMATCH: {
    soap11: () => soapRaw(open.url, '1.1', mismatch('soap11')),
    soap12: () => soapRaw(open.url, '1.2', mismatch('soap12')),
  },
  MUST_UNDERSTAND: {
    soap11: () =>
      soapRaw(
        open.url,
        '1.1',
        envelope('1.1', 'Check', { RegistrationNumber: 'RG11ABC', username: 'demo' }).replace(
          '<soap:Body>',
          '<soap:Header><Auth xmlns="urn:x" soap:mustUnderstand="1">t</Auth></soap:Header><soap:Body>',
        ),
      ),
    soap12: () =>
      soapRaw(
        open.url,
        '1.2',
        envelope('1.2', 'Check', { RegistrationNumber: 'RG11ABC', username: 'demo' }).replace(
          '<soap:Body>',
          '<soap:Header><Auth xmlns="urn:x" soap:mustUnderstand="true">t</Auth></soap:Header><soap:Body>',
        ),
      ),
  },
  INTERNAL_ERROR: { all: (t) => call(broken.url, t, 'Check', { RegistrationNumber: 'RG11ABC', username: 'demo' }) },
  // The sandbox's maintenance plate (README, Sandbox); a database outage: test/faults/postgres-outage.test.ts.
  SERVICE_UNAVAILABLE: {
    all: (t) => call(sandbox.url, t, 'Check', { RegistrationNumber: 'ER19MNT', username: 'demo' }),
  },
};

const cases = (Object.keys(TRIGGERS) as ErrorCode[]).flatMap((code) =>
  TRANSPORTS.filter((t) => TRIGGERS[code].all || TRIGGERS[code][t]).map((t) => [code, t] as const),
);

test('every error code of the table has a trigger on at least one transport, and the README documents each', () => {
  expect(Object.keys(TRIGGERS).sort()).toEqual(Object.keys(ERRORS).sort());
  expect([...documentedErrors().keys()].sort()).toEqual(Object.keys(ERRORS).sort());
});

test.each(cases)('%s over %s', async (code, t) => {
  const trigger = TRIGGERS[code].all ? () => TRIGGERS[code].all!(t) : TRIGGERS[code][t]!;
  expectError(t, await trigger(), code);
});

describe('the SOAP endpoint and the paths around it', () => {
  test('a SOAPAction naming another operation than the body is a Client fault', async () => {
    const res = await soapRaw(
      open.url,
      '1.1',
      envelope('1.1', 'Check', { RegistrationNumber: 'RG11ABC', username: 'demo' }),
      { SOAPAction: `"${NS}/CheckUSA"` },
    );
    expectError('soap11', res, 'UNKNOWN_OPERATION');
    expect(res.body).toContain('SOAPAction names CheckUSA but the Body holds Check');
  });

  test('a SOAP 1.2 action parameter naming another operation is a Sender fault', async () => {
    const res = await soapRaw(
      open.url,
      '1.2',
      envelope('1.2', 'Check', { RegistrationNumber: 'RG11ABC', username: 'demo' }),
      {
        'Content-Type': `application/soap+xml; charset=utf-8; action="${NS}/UKMOT"`,
      },
    );
    expectError('soap12', res, 'UNKNOWN_OPERATION');
  });

  test('an operation element in another namespace is refused, naming ours', async () => {
    const res = await soapRaw(
      open.url,
      '1.1',
      envelope('1.1', 'Check', { RegistrationNumber: 'RG11ABC', username: 'demo' }, 'http://example.com/other'),
      { SOAPAction: '""' },
    );
    expectError('soap11', res, 'UNKNOWN_OPERATION');
    expect(res.body).toContain("this service's namespace is 'http://regcheck.org.uk'");
  });

  test('a DOCTYPE is refused and nothing is expanded', async () => {
    const body = `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "EXPANDED">]><soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><Check xmlns="${NS}"><RegistrationNumber>&e;</RegistrationNumber><username>demo</username></Check></soap:Body></soap:Envelope>`;
    const res = await soapRaw(open.url, '1.1', body);
    expectError('soap11', res, 'MALFORMED_REQUEST');
    expect(res.body).not.toContain('EXPANDED');
  });

  test('a non-SOAP body on the SOAP path is 415 with a line pointing to the HTTP forms', async () => {
    const res = await raw(open.url, '/api/reg.asmx', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expectError('get', res, 'UNSUPPORTED_MEDIA_TYPE');
    expect(res.body).toContain('/api/reg.asmx/{Operation}');
  });

  test('PUT on the SOAP path is 405 with Allow', async () => {
    const res = await raw(open.url, '/api/reg.asmx', { method: 'PUT', body: 'x' });
    expectError('get', res, 'METHOD_NOT_ALLOWED');
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
  });

  test('an operation name in the wrong case gets a suggestion', async () => {
    const res = await raw(open.url, '/api/reg.asmx/checkusa?RegistrationNumber=X&username=demo', {});
    expectError('get', res, 'UNKNOWN_OPERATION');
    expect(res.body).toContain("did you mean 'CheckUSA'?");
  });

  test('a parameter in the wrong case is named with the one expected over SOAP, and taken over HTTP GET/POST', async () => {
    for (const t of TRANSPORTS) {
      const res = await call(open.url, t, 'CheckUSA', { RegistrationNumber: '7ABC123', state: 'CA', username: 'demo' });
      if (isSoap(t)) {
        expectError(t, res, 'MISSING_PARAMETER');
        expect(res.body).toContain(
          "Missing required parameter 'State' for CheckUSA (got 'state'; parameter names are case-sensitive in SOAP)",
        );
      } else {
        expect(res.status).toBe(200);
        expect(res.body).toContain('<Vehicle');
      }
    }
  });

  test('an empty username is MISSING_PARAMETER', async () => {
    for (const t of TRANSPORTS)
      expectError(
        t,
        await call(open.url, t, 'Check', { RegistrationNumber: 'RG11ABC', username: '' }),
        'MISSING_PARAMETER',
      );
  });

  test('the broken store leaves the server serving others', async () => {
    for (const t of TRANSPORTS) {
      expectError(
        t,
        await call(broken.url, t, 'Check', { RegistrationNumber: 'RG11ABC', username: 'demo' }),
        'INTERNAL_ERROR',
      );
      const other = await call(broken.url, t, 'Check', { RegistrationNumber: 'RG12 DEF', username: 'demo' });
      expect(other.status).toBe(200);
      expect(other.body).toContain('VOLKSWAGEN');
    }
  });
});
