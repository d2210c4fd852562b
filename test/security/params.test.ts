// Parameter abuse over all four transports: each value is read literally, each refusal is the
// transport's proper error form naming the parameter, and nothing about the store shows.

import { createHash } from 'node:crypto';
import { call, TRANSPORTS, type Answer, type Transport } from '../helpers/call';
import { envelope, NS, soapHeaders } from '../helpers/soap';
import { startServer, type TestServer } from '../helpers/server';
import { fromFetch, leakIn, plainErrorProblem, soapFaultProblem, type Seen } from './answers';
import { send } from './wire';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

let server: TestServer;
let registered: TestServer;
beforeAll(async () => {
  server = await startServer();
  registered = await startServer({ USERNAME_POLICY: 'registered' });
  await registered.store.accounts.putAccount({ username: key('alice'), credits: null });
});
afterAll(async () => {
  await Promise.all([server.close(), registered.close()]);
});

const isSoap = (t: Transport) => t === 'soap11' || t === 'soap12';

function seen(a: Answer): Seen {
  const headers: Record<string, string> = {};
  a.headers.forEach((v, k) => (headers[k.toLowerCase()] = v));
  return { status: a.status, headers, text: a.body };
}

/** The transport's proper error form for `code`, with a message matching `message`, and no leak. */
async function expectError(t: Transport, a: Answer, code: string, message?: RegExp): Promise<void> {
  const s = seen(a);
  if (isSoap(t)) {
    expect(await soapFaultProblem(s, t === 'soap11' ? '1.1' : '1.2')).toBeNull();
    expect(a.body).toContain(`<ErrorCode xmlns="${NS}">${code}</ErrorCode>`);
  } else {
    expect(plainErrorProblem(s)).toBeNull();
    expect(s.headers['x-error-code']).toBe(code);
  }
  if (message) expect(a.body).toMatch(message);
  expect(leakIn(a.body)).toBeNull();
}

function expectVehicle(t: Transport, a: Answer): void {
  expect(a.status).toBe(200);
  expect(a.body).toContain(isSoap(t) ? '<CheckResult>' : '<Vehicle');
}

/** Same parameter twice, in the transport's own way of repeating it. */
async function callRepeated(t: Transport, name: string, first: string, second: string): Promise<Answer> {
  const pairs: Array<[string, string]> = [
    ['RegistrationNumber', 'RG11 ABC'],
    ['username', 'demo'],
  ];
  pairs.push([name, second]);
  const idx = pairs.findIndex(([n]) => n === name);
  pairs[idx] = [name, first];
  if (!isSoap(t)) {
    const qs = new URLSearchParams(pairs).toString();
    const res =
      t === 'get'
        ? await fetch(`${server.url}/api/reg.asmx/Check?${qs}`)
        : await fetch(`${server.url}/api/reg.asmx/Check`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
            body: qs,
          });
    return { status: res.status, headers: res.headers, body: await res.text() };
  }
  const version = t === 'soap11' ? '1.1' : '1.2';
  const children = pairs.map(([k, v]) => `<${k}>${v}</${k}>`).join('');
  const body = envelope(version, 'Check', {}).replace('</Check>', `${children}</Check>`);
  const res = await fetch(`${server.url}/api/reg.asmx`, {
    method: 'POST',
    headers: soapHeaders(version, 'Check'),
    body,
  });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

describe.each(TRANSPORTS)('%s', (t) => {
  const check = (params: Record<string, string>) => call(server.url, t, 'Check', params);

  test('a registration of 32 characters is looked up; 33 is INVALID_PARAMETER naming the limit', async () => {
    await expectError(t, await check({ RegistrationNumber: 'A'.repeat(32), username: 'demo' }), 'VEHICLE_NOT_FOUND');
    await expectError(
      t,
      await check({ RegistrationNumber: 'A'.repeat(33), username: 'demo' }),
      'INVALID_PARAMETER',
      /RegistrationNumber '.*' is longer than 32 characters/,
    );
  });

  test('any parameter over 256 characters is INVALID_PARAMETER naming it', async () => {
    await expectError(
      t,
      await check({ RegistrationNumber: 'RG11 ABC', username: 'u'.repeat(257) }),
      'INVALID_PARAMETER',
      /Parameter 'username' is longer than 256 characters/,
    );
    await expectError(
      t,
      await check({ RegistrationNumber: 'R'.repeat(5000), username: 'demo' }),
      'INVALID_PARAMETER',
      /Parameter 'RegistrationNumber' is longer than 256/,
    );
  });

  test.each([
    ['tab', '\t'],
    ['line feed', '\n'],
    ['DEL', '\u007f'],
    ['C1 NEL', '\u0085'],
    ['line separator', '\u2028'],
  ])('a %s inside a value is INVALID_PARAMETER naming the parameter', async (_what, c) => {
    await expectError(
      t,
      await check({ RegistrationNumber: `RG11${c}ABC`, username: 'demo' }),
      'INVALID_PARAMETER',
      /RegistrationNumber.*contains control characters/,
    );
    await expectError(
      t,
      await check({ RegistrationNumber: 'RG11 ABC', username: `de${c}mo` }),
      'INVALID_PARAMETER',
      /Parameter 'username' contains control characters/,
    );
  });

  test('a C0 control other than tab and line breaks is refused (SOAP: XML does not allow it at all)', async () => {
    for (const c of ['\u0000', '\u0001', '\u001b']) {
      const a = await check({ RegistrationNumber: `RG11${c}ABC`, username: 'demo' });
      if (isSoap(t)) await expectError(t, a, 'MALFORMED_REQUEST', /character XML does not allow/);
      else await expectError(t, a, 'INVALID_PARAMETER', /contains control characters/);
    }
  });

  test.each([
    "' OR 1=1 --",
    "' OR '1'='1",
    "RG11 ABC' OR '1'='1",
    '"; DROP TABLE records; --',
    'RG11%',
    'RG11_ABC',
    '*',
    "RG11 ABC'--",
  ])('SQL metacharacters are looked up literally and simply not found: %s', async (reg) => {
    await expectError(
      t,
      await check({ RegistrationNumber: reg, username: 'demo' }),
      'VEHICLE_NOT_FOUND',
      /No vehicle found for registration/,
    );
    expectVehicle(t, await check({ RegistrationNumber: 'RG11 ABC', username: 'demo' }));
  });

  test('SQL metacharacters in the username are just a username', async () => {
    expectVehicle(t, await check({ RegistrationNumber: 'RG11 ABC', username: "' OR 1=1 --" }));
    const a = await call(registered.url, t, 'Check', { RegistrationNumber: 'RG11 ABC', username: "alice' OR '1'='1" });
    await expectError(t, a, 'UNKNOWN_USERNAME');
    expectVehicle(t, await call(registered.url, t, 'Check', { RegistrationNumber: 'RG11 ABC', username: 'alice' }));
  });

  test('a repeated parameter is INVALID_PARAMETER saying how often it came, even with the same value twice', async () => {
    await expectError(
      t,
      await callRepeated(t, 'RegistrationNumber', 'RG11 ABC', 'RG12 DEF'),
      'INVALID_PARAMETER',
      /Parameter 'RegistrationNumber' was given 2 times; give it once/,
    );
    await expectError(
      t,
      await callRepeated(t, 'username', 'demo', 'demo'),
      'INVALID_PARAMETER',
      /Parameter 'username' was given 2 times/,
    );
  });

  // README, Parameters: SOAP names are case-sensitive (XML names are); HTTP GET and POST match
  // names ignoring case, as ASP.NET does, and two spellings of one name are that name given twice.
  if (isSoap(t)) {
    test('state for CheckUSA (which takes State) is MISSING_PARAMETER naming the expected name', async () => {
      const a = await call(server.url, t, 'CheckUSA', { RegistrationNumber: '7ABC123', state: 'CA', username: 'demo' });
      await expectError(
        t,
        a,
        'MISSING_PARAMETER',
        /Missing required parameter 'State' for CheckUSA \(got 'state'; parameter names are case-sensitive in SOAP\)/,
      );
      const ok = await call(server.url, t, 'CheckUSA', {
        RegistrationNumber: '7ABC123',
        State: 'CA',
        username: 'demo',
      });
      expect(ok.status).toBe(200);
    });

    test('State for CheckCanada (which takes state), and other names in the wrong case, are named too', async () => {
      const a = await call(server.url, t, 'CheckCanada', {
        RegistrationNumber: 'ABCD 123',
        State: 'ON',
        username: 'demo',
      });
      await expectError(t, a, 'MISSING_PARAMETER', /Missing required parameter 'state' for CheckCanada \(got 'State'/);
      await expectError(
        t,
        await check({ registrationnumber: 'RG11 ABC', username: 'demo' }),
        'MISSING_PARAMETER',
        /'RegistrationNumber' for Check \(got 'registrationnumber'/,
      );
      await expectError(
        t,
        await check({ RegistrationNumber: 'RG11 ABC', UserName: 'demo' }),
        'MISSING_PARAMETER',
        /'username' for Check \(got 'UserName'/,
      );
    });
  } else {
    test('names match ignoring case: state for CheckUSA, State for CheckCanada, registrationnumber, USERNAME', async () => {
      expectVehicle(t, await check({ registrationnumber: 'RG11 ABC', USERNAME: 'demo' }));
      expectVehicle(t, await check({ REGISTRATIONNUMBER: 'RG11 ABC', UserName: 'demo' }));
      const usa = await call(server.url, t, 'CheckUSA', {
        RegistrationNumber: '7ABC123',
        state: 'CA',
        username: 'demo',
      });
      expect(usa.status).toBe(200);
      expect(usa.body).toContain('<Vehicle');
      const canada = await call(server.url, t, 'CheckCanada', {
        RegistrationNumber: 'ABCD 123',
        State: 'ON',
        username: 'demo',
      });
      expect(canada.status).toBe(200);
      const mot = await call(server.url, t, 'UKMOT', {
        RegistrationNumber: 'RG11 ABC',
        MODEL: 'FOCUS',
        username: 'demo',
      });
      expect(mot.body).toContain('<UKMOTData');
      await expectError(
        t,
        await call(server.url, t, 'UKMOT', { RegistrationNumber: 'RG11 ABC', model: 'NOT A MODEL', username: 'demo' }),
        'VEHICLE_NOT_FOUND',
      );
    });

    test('two names that differ only in case are one parameter given twice: INVALID_PARAMETER', async () => {
      const qs = 'RegistrationNumber=7ABC123&State=CA&state=CA&username=demo';
      const a =
        t === 'get'
          ? await fetch(`${server.url}/api/reg.asmx/CheckUSA?${qs}`)
          : await fetch(`${server.url}/api/reg.asmx/CheckUSA`, {
              method: 'POST',
              headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
              body: qs,
            });
      await expectError(
        t,
        { status: a.status, headers: a.headers, body: await a.text() },
        'INVALID_PARAMETER',
        /Parameter 'State' was given 2 times/,
      );
      await expectError(
        t,
        await check({ RegistrationNumber: 'RG11 ABC', username: 'demo', USERNAME: 'demo' }),
        'INVALID_PARAMETER',
        /Parameter 'username' was given 2 times/,
      );
    });

    test('the repeated-parameter message says names differing only in case count as the same (README, the case rule)', async () => {
      const qs = 'RegistrationNumber=7ABC123&State=CA&state=CA&username=demo';
      const a =
        t === 'get'
          ? await fetch(`${server.url}/api/reg.asmx/CheckUSA?${qs}`)
          : await fetch(`${server.url}/api/reg.asmx/CheckUSA`, {
              method: 'POST',
              headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
              body: qs,
            });
      await expectError(
        t,
        { status: a.status, headers: a.headers, body: await a.text() },
        'INVALID_PARAMETER',
        /Parameter 'State' was given 2 times; give it once \([^)]*ignoring case[^)]*\)/,
      );
    });
  }

  test('markup in a value is echoed only escaped', async () => {
    const a = await check({ RegistrationNumber: '<b>x</b>&amp;', username: 'demo' });
    await expectError(t, a, 'VEHICLE_NOT_FOUND');
    if (isSoap(t)) expect(a.body).toContain('&lt;b&gt;x&lt;/b&gt;&amp;amp;');
    else expect(a.headers.get('content-type')).toMatch(/^text\/plain/);
  });
});

describe('percent-encoding that is not UTF-8', () => {
  const bad = ['%C3%28', '%FF', '%E9', '%C0%AF', '%ED%A0%80', '%F4%90%80%80', '%', '%G1', 'abc%2'];

  test.each(bad)('in the query string (%s) is MALFORMED_REQUEST, 400', async (enc) => {
    const res = await fetch(`${server.url}/api/reg.asmx/Check?RegistrationNumber=RG11${enc}&username=demo`);
    const s = fromFetch(res, await res.text());
    expect(plainErrorProblem(s)).toBeNull();
    expect(s.headers['x-error-code']).toBe('MALFORMED_REQUEST');
    expect(s.text).toBe('MALFORMED_REQUEST: The parameters are not valid percent-encoded UTF-8\n');
  });

  test.each(bad)('in a form body (%s) is MALFORMED_REQUEST, 400', async (enc) => {
    const res = await fetch(`${server.url}/api/reg.asmx/Check`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `username=demo&RegistrationNumber=RG11${enc}`,
    });
    const s = fromFetch(res, await res.text());
    expect(plainErrorProblem(s)).toBeNull();
    expect(s.headers['x-error-code']).toBe('MALFORMED_REQUEST');
  });

  test('in a parameter name, or in the operation name of the path, too', async () => {
    const a = await fetch(`${server.url}/api/reg.asmx/Check?Registration%FFNumber=RG11&username=demo`);
    expect(a.status).toBe(400);
    expect(a.headers.get('x-error-code')).toBe('MALFORMED_REQUEST');
    const b = await fetch(`${server.url}/api/reg.asmx/Check%FF?RegistrationNumber=RG11&username=demo`);
    expect(b.status).toBe(400);
    expect(b.headers.get('x-error-code')).toBe('MALFORMED_REQUEST');
  });

  test('raw bytes that are not UTF-8 in a form body are MALFORMED_REQUEST', async () => {
    const a = await send(server.port, {
      path: '/api/reg.asmx/Check',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: Buffer.concat([Buffer.from('username=demo&RegistrationNumber=RG11'), Buffer.from([0xe9])]),
    });
    expect(a.status).toBe(400);
    expect(a.text).toBe('MALFORMED_REQUEST: The body is not valid UTF-8\n');
  });

  test('well-formed UTF-8 percent-encoding is decoded, so a plate typed in Cyrillic finds its record', async () => {
    // 'АА1234ВС' in Cyrillic letters is the Ukrainian sample AA1234BC in Latin look-alikes.
    const res = await fetch(
      `${server.url}/api/reg.asmx/CheckUkraine?${new URLSearchParams({ RegistrationNumber: 'АА1234ВС', username: 'demo' }).toString()}`,
    );
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<Vehicle');
  });
});
