// Callers against a real server: credits under concurrency over all four transports, daily limits
// and their Retry-After, disabled users, allow-lists with and without TRUST_PROXY, per-user rates,
// usage records, and USERNAME_POLICY=any. Expectations come from the issue and the README.

import { createHash } from 'node:crypto';
import { loadConfig } from '../../src/config';
import { call, TRANSPORTS, type Answer, type Transport } from '../helpers/call';
import { startServer, type TestServer } from '../helpers/server';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

/** The error code of an answer on any transport, or null for a result. */
function codeOf(t: Transport, a: Answer): string | null {
  if (a.status === 200) return null;
  if (t === 'get' || t === 'post') return a.headers.get('x-error-code');
  return /<ErrorCode xmlns="[^"]+">([A-Z_]+)<\/ErrorCode>/.exec(a.body)?.[1] ?? `status ${a.status}`;
}

/** HTTP status for GET/POST; SOAP faults are 500 with the role in the fault code. */
function expectRefusal(t: Transport, a: Answer, code: string, status: number): void {
  expect(codeOf(t, a)).toBe(code);
  if (t === 'get' || t === 'post') expect(a.status).toBe(status);
  else {
    expect(a.status).toBe(500);
    expect(a.body).toContain(
      t === 'soap11' ? '<faultcode>soap:Client</faultcode>' : '<soap:Value>soap:Sender</soap:Value>',
    );
  }
}

const CHECK = { RegistrationNumber: 'RG11ABC' };
const MISSING = { RegistrationNumber: 'ZZ99ZZZ' };

/** Seconds from `ms` to the next midnight UTC, worked out by hand from the calendar. */
function toMidnight(ms: number): number {
  const d = new Date(ms);
  const next = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
  return (next - ms) / 1000;
}

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer({ USERNAME_POLICY: 'any' });
});
afterAll(() => srv.close());

describe('credits', () => {
  test('200 concurrent lookups over the four transports with 50 credits: exactly 50 results, 150 OUT_OF_CREDIT, balance 0', async () => {
    await srv.store.accounts.putAccount({ username: key('fifty'), credits: 50, rate: 0 });
    const plan = Array.from({ length: 200 }, (_, i) => TRANSPORTS[i % 4]);
    const answers = await Promise.all(plan.map((t) => call(srv.url, t, 'Check', { ...CHECK, username: 'fifty' })));
    const codes = answers.map((a, i) => codeOf(plan[i], a));
    expect(codes.filter((c) => c === null)).toHaveLength(50);
    expect(codes.filter((c) => c === 'OUT_OF_CREDIT')).toHaveLength(150);
    answers.forEach((a, i) => {
      if (codes[i] === 'OUT_OF_CREDIT') {
        expect(a.headers.get('retry-after')).toBeNull();
        expect(a.body).toMatch(/Out of credit/);
      } else expect(a.body).toContain('<vehicleJson>');
    });
    expect((await srv.store.accounts.getAccount(key('fifty')))?.credits).toBe(0);
  });

  test('a lookup that finds nothing costs no credit', async () => {
    await srv.store.accounts.putAccount({ username: key('c3'), credits: 3, rate: 0 });
    for (const t of TRANSPORTS)
      expect(codeOf(t, await call(srv.url, t, 'Check', { ...MISSING, username: 'c3' }))).toBe('VEHICLE_NOT_FOUND');
    expect((await srv.store.accounts.getAccount(key('c3')))?.credits).toBe(3);
  });
});

describe('daily limit', () => {
  test('DAILY_LIMIT_REACHED (429, SOAP Client) after the limit, with Retry-After to midnight UTC; refusals and misses cost nothing', async () => {
    await srv.store.accounts.putAccount({ username: key('daily'), credits: 100, dailyLimit: 4, rate: 0 });
    // Misses first: they count neither against the day nor the credits.
    for (const t of TRANSPORTS)
      expect(codeOf(t, await call(srv.url, t, 'Check', { ...MISSING, username: 'daily' }))).toBe('VEHICLE_NOT_FOUND');
    for (const t of TRANSPORTS)
      expect((await call(srv.url, t, 'Check', { ...CHECK, username: 'daily' })).status).toBe(200);
    for (const t of TRANSPORTS) {
      const before = Date.now();
      const a = await call(srv.url, t, 'Check', { ...CHECK, username: 'daily' });
      const after = Date.now();
      expectRefusal(t, a, 'DAILY_LIMIT_REACHED', 429);
      const wait = Number(a.headers.get('retry-after'));
      expect(wait).toBeGreaterThanOrEqual(Math.floor(toMidnight(after)));
      expect(wait).toBeLessThanOrEqual(Math.ceil(toMidnight(before)));
    }
    expect((await srv.store.accounts.getAccount(key('daily')))?.credits).toBe(96);
  });

  test('a caller that has used up its day is told DAILY_LIMIT_REACHED, not sent to retry in a second by the rate limit', async () => {
    // Review finding: with a tight rate, the second lookup after the day was used up was RATE_LIMITED, Retry-After: 1.
    const tight = await startServer({ RATE_LIMIT: '1', RATE_LIMIT_BURST: '0' });
    try {
      await tight.store.accounts.putAccount({ username: key('oneday'), dailyLimit: 1 });
      expect((await call(tight.url, 'get', 'Check', { ...CHECK, username: 'oneday' })).status).toBe(200);
      for (let i = 0; i < 3; i++)
        expectRefusal(
          'get',
          await call(tight.url, 'get', 'Check', { ...CHECK, username: 'oneday' }),
          'DAILY_LIMIT_REACHED',
          429,
        );
      // A raised limit is seen within a second, as every users change is.
      await tight.store.accounts.putAccount({ username: key('oneday'), dailyLimit: 2 });
      await new Promise((r) => setTimeout(r, 1100));
      expect((await call(tight.url, 'get', 'Check', { ...CHECK, username: 'oneday' })).status).toBe(200);
    } finally {
      await tight.close();
    }
  });

  test('the daily count is per UTC day: the store counts a new day from one', async () => {
    await srv.store.accounts.putAccount({ username: key('days'), dailyLimit: 1 });
    expect(await srv.store.accounts.charge(key('days'), '2026-01-01')).toMatchObject({ ok: true, usedToday: 1 });
    expect(await srv.store.accounts.charge(key('days'), '2026-01-01')).toEqual({ ok: false, reason: 'daily' });
    expect(await srv.store.accounts.charge(key('days'), '2026-01-02')).toMatchObject({ ok: true, usedToday: 1 });
  });
});

describe('disabled users', () => {
  test('are refused with UNKNOWN_USERNAME, a message of their own, and no credit taken; enabled again they are served', async () => {
    await srv.store.accounts.putAccount({ username: key('dora'), credits: 5, rate: 0 });
    await srv.store.accounts.setEnabled(key('dora'), false);
    await new Promise((r) => setTimeout(r, 1100)); // the server reads an account at most once a second
    for (const t of TRANSPORTS) {
      const a = await call(srv.url, t, 'Check', { ...CHECK, username: 'dora' });
      expectRefusal(t, a, 'UNKNOWN_USERNAME', 403);
      expect(a.body).toMatch(/username is incorrect/i);
      expect(a.body).toMatch(/disabled/);
    }
    expect((await srv.store.accounts.getAccount(key('dora')))?.credits).toBe(5);
    await srv.store.accounts.setEnabled(key('dora'), true);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await call(srv.url, 'get', 'Check', { ...CHECK, username: 'dora' })).status).toBe(200);
  });
});

describe('allow-lists', () => {
  test('without TRUST_PROXY the socket address decides, and X-Forwarded-For is ignored', async () => {
    await srv.store.accounts.putAccount({ username: key('local'), allow: ['127.0.0.0/8'], rate: 0 });
    await srv.store.accounts.putAccount({ username: key('office'), allow: ['10.0.0.0/8', '2001:db8::/32'], rate: 0 });
    for (const t of TRANSPORTS) {
      expect((await call(srv.url, t, 'Check', { ...CHECK, username: 'local' })).status).toBe(200);
      const a = await call(srv.url, t, 'Check', { ...CHECK, username: 'office' });
      expectRefusal(t, a, 'UNKNOWN_USERNAME', 403);
      expect(a.body).toMatch(/username is incorrect/i);
      expect(a.body).toContain('127.0.0.1');
    }
    const spoofed = await fetch(`${srv.url}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=office`, {
      headers: { 'X-Forwarded-For': '10.1.2.3' },
    });
    expect(spoofed.status).toBe(403);
  });

  test('with TRUST_PROXY the right-most untrusted X-Forwarded-For hop decides', async () => {
    const proxied = await startServer({ TRUST_PROXY: '127.0.0.1,192.168.0.0/16' });
    try {
      await proxied.store.accounts.putAccount({
        username: key('office'),
        allow: ['10.0.0.0/8', '2001:db8::/32'],
        rate: 0,
      });
      const get = (xff?: string) =>
        fetch(`${proxied.url}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=office`, {
          headers: xff ? { 'X-Forwarded-For': xff } : {},
        }).then((r) => r.status);
      expect(await get('10.1.2.3')).toBe(200);
      expect(await get('2001:db8::7')).toBe(200);
      expect(await get('10.1.2.3:51234')).toBe(200);
      expect(await get('203.0.113.9, 10.1.2.3, 192.168.1.1')).toBe(200); // the last proxy is trusted, 10.1.2.3 is the client
      expect(await get('10.1.2.3, 203.0.113.9')).toBe(403); // a forged left-most hop does not help
      expect(await get()).toBe(403); // the trusted proxy's own address is not on the list
      const soap = await call(proxied.url, 'soap11', 'Check', { ...CHECK, username: 'office' });
      expectRefusal('soap11', soap, 'UNKNOWN_USERNAME', 403);
    } finally {
      await proxied.close();
    }
  });
});

describe('allow-lists behind one trusted proxy address', () => {
  // The README's advice: TRUST_PROXY is the proxy's own address. A caller connecting from any other
  // address (here 127.0.0.1, with the proxy at 127.0.0.2) cannot claim an allow-listed address.
  test("X-Forwarded-For from a connection that is not TRUST_PROXY's one address is ignored", async () => {
    const proxied = await startServer({ TRUST_PROXY: '127.0.0.2' });
    try {
      await proxied.store.accounts.putAccount({ username: key('office'), allow: ['10.0.0.0/8'], rate: 0 });
      const get = (xff: string) =>
        fetch(`${proxied.url}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=office`, {
          headers: { 'X-Forwarded-For': xff },
        });
      const forged = await get('10.1.2.3');
      expect(forged.status).toBe(403);
      expect(forged.headers.get('x-error-code')).toBe('UNKNOWN_USERNAME');
      expect(await get('10.1.2.3, 127.0.0.2')).toHaveProperty('status', 403);
    } finally {
      await proxied.close();
    }
    // The same request from the address that is trusted passes: the refusal above is the address's doing.
    const trusted = await startServer({ TRUST_PROXY: '127.0.0.1' });
    try {
      await trusted.store.accounts.putAccount({ username: key('office'), allow: ['10.0.0.0/8'], rate: 0 });
      const ok = await fetch(`${trusted.url}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=office`, {
        headers: { 'X-Forwarded-For': '10.1.2.3' },
      });
      expect(ok.status).toBe(200);
    } finally {
      await trusted.close();
    }
  });
});

describe('rate limits', () => {
  test('a per-user --rate with the burst: what passes is the rate plus the burst, the rest is RATE_LIMITED with Retry-After', async () => {
    const limited = await startServer({ RATE_LIMIT: '0', RATE_LIMIT_BURST: '5' });
    try {
      // One lookup per 1000 s, plus the burst of 5: six in a short run, whatever the transport.
      await limited.store.accounts.putAccount({ username: key('slow'), rate: 0.001 });
      const plan = Array.from({ length: 12 }, (_, i) => TRANSPORTS[i % 4]);
      const answers = [];
      for (const t of plan) answers.push(await call(limited.url, t, 'Check', { ...CHECK, username: 'slow' }));
      expect(answers.filter((a) => a.status === 200)).toHaveLength(6);
      answers.forEach((a, i) => {
        if (a.status === 200) return;
        expectRefusal(plan[i], a, 'RATE_LIMITED', 429);
        expect(Number(a.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      });
      // RATE_LIMIT=0: a username without an account of its own has no limit.
      const free = await Promise.all(
        Array.from({ length: 30 }, () => call(limited.url, 'get', 'Check', { ...CHECK, username: 'free' })),
      );
      expect(free.every((a) => a.status === 200)).toBe(true);
    } finally {
      await limited.close();
    }
  });

  test('RATE_LIMIT_PER_MINUTE is refused at start-up, naming its replacements', () => {
    expect(() => loadConfig({ RATE_LIMIT_PER_MINUTE: '60' })).toThrow(/RATE_LIMIT .*RATE_LIMIT_BURST/);
    expect(() => loadConfig({ RATE_LIMIT: 'fast' })).toThrow(/RATE_LIMIT/);
    expect(() => loadConfig({ RATE_LIMIT_ON_REDIS_ERROR: 'maybe' })).toThrow(/RATE_LIMIT_ON_REDIS_ERROR/);
  });
});

describe('usage records', () => {
  test('count found and not found per operation and UTC day, written in batches', async () => {
    await srv.store.accounts.putAccount({ username: key('counted'), rate: 0 });
    for (const t of TRANSPORTS) {
      await call(srv.url, t, 'Check', { ...CHECK, username: 'counted' });
      await call(srv.url, t, 'UKMOT', { ...CHECK, username: 'counted' });
    }
    await call(srv.url, 'get', 'Check', { ...MISSING, username: 'counted' });
    await call(srv.url, 'get', 'CheckUSA', { RegistrationNumber: 'NOPE1', State: 'CA', username: 'counted' });
    await srv.flushUsage();
    const day = new Date().toISOString().slice(0, 10);
    const rows = await srv.store.accounts.usage(key('counted'), day);
    expect(rows.map((r) => [r.operation, r.found, r.notFound]).sort()).toEqual([
      ['Check', 4, 1],
      ['CheckUSA', 0, 1],
      ['UKMOT', 4, 0],
    ]);
    expect(rows.every((r) => r.day === day)).toBe(true);
    const listed = (await srv.store.accounts.listAccounts(day)).find((a) => a.username === key('counted'));
    expect(listed?.usedToday).toBe(8);
  });
});

describe('USERNAME_POLICY=any', () => {
  test('every non-empty username is still served, over every transport', async () => {
    for (const t of TRANSPORTS) {
      const a = await call(srv.url, t, 'Check', { ...CHECK, username: `anyone-${t}` });
      expect(a.status).toBe(200);
      expect(a.body).toContain('<vehicleJson>');
    }
  });
});
