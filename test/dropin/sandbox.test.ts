// The sandbox registrations (README, Sandbox; issue 11): with SANDBOX=on every operation answers
// them over all five transports, without data or an account, at no credit; with it off they are
// ordinary registrations. Expected codes, statuses and SOAP roles are written here from the issue
// and the README's error table, not read from the code.

import { createHash } from 'node:crypto';
import { OPERATIONS } from '../../src/contract/operations';
import type { Answer } from '../helpers/call';
import { callAny, FIVE_TRANSPORTS, type AnyTransport } from '../helpers/json';
import { NS } from '../helpers/soap';
import { startServer, type TestServer } from '../helpers/server';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

let on: TestServer;
let registered: TestServer;
let off: TestServer;
beforeAll(async () => {
  // No sample data: the sandbox needs none.
  on = await startServer({ SANDBOX: 'on' }, { sample: false });
  registered = await startServer({ SANDBOX: 'on', USERNAME_POLICY: 'registered' }, { sample: false });
  await registered.store.accounts.putAccount({ username: key('carol'), credits: 1 });
  off = await startServer({});
});
afterAll(async () => {
  await Promise.all([on, registered, off].map((s) => s.close()));
});

const isSoap = (t: AnyTransport) => t === 'soap11' || t === 'soap12';
/** A valid state for the three subdivision operations (README demo table). */
const STATE: Record<string, string> = { CheckUSA: 'CA', CheckCanada: 'ON', CheckAustralia: 'NSW' };

function params(op: string, reg: string, username = 'demo'): Record<string, string> {
  const p: Record<string, string> = { RegistrationNumber: reg };
  if (op === 'CheckCanada') p.state = STATE[op];
  else if (STATE[op]) p.State = STATE[op];
  p.username = username;
  return p;
}

/** The description of a vehicle answer, whichever transport wrote it. */
function description(t: AnyTransport, a: Answer): string | undefined {
  if (t === 'json') return (JSON.parse(a.body) as { Description?: string }).Description;
  return /<Description>([^<]*)<\/Description>/.exec(a.body)?.[1];
}

describe.each(FIVE_TRANSPORTS)('%s', (t) => {
  test('AA19AAA is a fictional vehicle for every vehicle operation', async () => {
    for (const op of OPERATIONS.filter((o) => o.result === 'Vehicle')) {
      const a = await callAny(on.url, t, op.name, params(op.name, 'AA19AAA'));
      expect([op.name, a.status]).toEqual([op.name, 200]);
      expect(description(t, a)).toMatch(/SANDBOX/);
    }
  });

  test('AA19AAA for UKMOT is a fictional history with a fail and an advisory', async () => {
    const a = await callAny(on.url, t, 'UKMOT', params('UKMOT', 'aa19 aaa'));
    expect(a.status).toBe(200);
    if (t === 'json') {
      const mot = JSON.parse(a.body) as { Tests: Array<{ Result: string; Advisories: string[] }> };
      expect(mot.Tests.some((x) => x.Result === 'Fail')).toBe(true);
      expect(mot.Tests.some((x) => x.Advisories.length > 0)).toBe(true);
    } else {
      expect(a.body).toContain('<Result>Fail</Result>');
      expect(a.body).toMatch(/<Advisories>\s*<string>[^<]+<\/string>/);
    }
  });

  // Issue 11 names each plate's code; the HTTP status and SOAP role are the README error table's,
  // the Retry-After the README's Sandbox table's.
  test.each([
    ['ER19NFD', 'VEHICLE_NOT_FOUND', 404, 'Client', null],
    ['ER19BAD', 'INVALID_PARAMETER', 400, 'Client', null],
    ['ER19USR', 'UNKNOWN_USERNAME', 403, 'Client', null],
    ['ER19CRD', 'OUT_OF_CREDIT', 429, 'Client', null],
    ['ER19THR', 'RATE_LIMITED', 429, 'Client', '30'],
    ['ER19ERR', 'INTERNAL_ERROR', 500, 'Server', null],
    ['ER19MNT', 'SERVICE_UNAVAILABLE', 503, 'Server', '120'],
  ] as const)('%s is %s on every operation', async (plate, code, status, role, retry) => {
    for (const op of OPERATIONS) {
      const a = await callAny(on.url, t, op.name, params(op.name, plate));
      if (isSoap(t)) {
        expect([op.name, a.status]).toEqual([op.name, 500]);
        expect(a.body).toContain(`<ErrorCode xmlns="${NS}">${code}</ErrorCode>`);
        const fault =
          t === 'soap11'
            ? `<faultcode>soap:${role}</faultcode>`
            : `<soap:Value>soap:${role === 'Client' ? 'Sender' : 'Receiver'}</soap:Value>`;
        expect(a.body).toContain(fault);
      } else {
        expect([op.name, a.status]).toEqual([op.name, status]);
        expect(a.headers.get('x-error-code')).toBe(code);
        if (t === 'json') expect(JSON.parse(a.body)).toEqual({ code, message: expect.any(String) });
        else expect(a.body).toMatch(new RegExp(`^${code}: .+\\n$`));
      }
      // README, Sandbox: the Retry-After each plate answers with
      expect([op.name, a.headers.get('retry-after')]).toEqual([op.name, retry]);
    }
  });

  test('the sandbox needs no account and costs no credit', async () => {
    // USERNAME_POLICY=registered and nobody registered under this name: the sandbox still answers.
    expect((await callAny(registered.url, t, 'Check', params('Check', 'AA19AAA', 'nobody'))).status).toBe(200);
    for (let i = 0; i < 3; i++)
      expect((await callAny(registered.url, t, 'Check', params('Check', 'AA19AAA', 'carol'))).status).toBe(200);
    expect(await (await fetch(`${registered.url}/ajax/getcredits.aspx?username=carol`)).text()).toBe('1');
  });

  test('a missing username is still MISSING_PARAMETER (the sandbox exercises the same validation)', async () => {
    const p = params('Check', 'AA19AAA');
    delete p.username;
    const a = await callAny(on.url, t, 'Check', p);
    expect(a.status).toBe(isSoap(t) ? 500 : t === 'json' ? 401 : 400);
    expect(a.body).toContain('MISSING_PARAMETER');
  });

  test('with SANDBOX off (the default) the plates are ordinary registrations, not found', async () => {
    for (const plate of ['AA19AAA', 'ER19MNT', 'ER19USR']) {
      const a = await callAny(off.url, t, 'Check', params('Check', plate));
      expect(a.status).toBe(isSoap(t) ? 500 : 404);
      expect(a.body).toContain('VEHICLE_NOT_FOUND');
    }
  });
});

test('ER19SLO answers as AA19AAA after 5 s on all five transports at once, and other requests are answered meanwhile', async () => {
  const t0 = Date.now();
  const finished: string[] = [];
  const slow = FIVE_TRANSPORTS.map((t) =>
    callAny(on.url, t, 'Check', params('Check', 'ER19SLO')).then((a) => {
      finished.push(`slow-${t}`);
      return [t, a] as const;
    }),
  );
  // Issued after the slow ones, answered before them: the wait does not hold the event loop.
  const quick = await callAny(on.url, 'get', 'Check', params('Check', 'AA19AAA'));
  finished.push('quick');
  expect(quick.status).toBe(200);
  const answers = await Promise.all(slow);
  expect(Date.now() - t0).toBeGreaterThanOrEqual(4900);
  expect(finished[0]).toBe('quick');
  for (const [t, a] of answers) {
    expect(a.status).toBe(200);
    const same = await callAny(on.url, t, 'Check', params('Check', 'AA19AAA'));
    // A sandbox answer is as of now (docs/calling.md, "The age of an answer"): the two may be a second apart.
    const untimed = (body: string) => body.replace(/"AnswerAsOf":"[^"]*"/, '"AnswerAsOf":"…"');
    expect(untimed(a.body)).toBe(untimed(same.body));
  }
});

test('sandbox answers are marked in the access log, with the transport and the caller fingerprint', async () => {
  const server = await startServer({ SANDBOX: 'on', LOG_LEVEL: 'info', LOG_FORMAT: 'json' }, { sample: false });
  const lines: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(...String(chunk).split('\n'));
    return true;
  });
  try {
    await callAny(server.url, 'json', 'Check', params('Check', 'AA19AAA', 'dana'));
    await callAny(server.url, 'soap11', 'Check', params('Check', 'ER19NFD', 'erin'));
    await callAny(server.url, 'get', 'Check', params('Check', 'ZZ99ZZZ', 'fred'));
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 50));
  } finally {
    spy.mockRestore();
    await server.close();
  }
  const requests = lines
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((r) => r.message === 'request');
  // The fingerprints of dana, erin and fred (sha256sum of each, first 12 hex characters).
  const FP: Record<string, string> = { dana: '2c9e0a2585dc', erin: '7cbccb0c4caa', fred: 'd0cfc2e5319b' };
  const by = (u: string) => requests.find((r) => r.caller === `sha256:${FP[u]}`);
  expect(by('dana')).toMatchObject({ transport: 'json', status: 200, sandbox: true });
  expect(by('erin')).toMatchObject({ transport: 'soap11', status: 500, sandbox: true, outcome: 'VEHICLE_NOT_FOUND' });
  expect(by('fred')).toMatchObject({ transport: 'get', status: 404 });
  expect(by('fred')?.sandbox).toBeUndefined();
});
