// A widely used workshop-software connector (issue 11): it tests the connection with
// GET /ajax/getcredits.aspx?username=..., which answers a bare integer, looks vehicles up over
// HTTP GET, and reads the text of a non-200 answer with two regular expressions, copied here from
// the issue: one for a rejected username, one for "no vehicle". Expected values are the README's.

import { createHash } from 'node:crypto';
import { call, fetchAnswer, type Answer } from '../helpers/call';
import { basic } from '../helpers/json';
import { startServer, type TestServer } from '../helpers/server';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

const USERNAME_REJECTED = /username is incorrect/i;
const NO_VEHICLE = /lookup failed|not found|no (vehicle|data|record|result)|unable to find|could not find|no match/i;
/** README, Credits: what an account without a limit reports. */
const UNMETERED = '2147483647';

type Outcome = 'vehicle' | 'bad username' | 'no vehicle' | 'error';

/** What the connector makes of an answer. */
function classify(a: Answer): Outcome {
  if (a.status === 200) return 'vehicle';
  if (USERNAME_REJECTED.test(a.body)) return 'bad username';
  if (NO_VEHICLE.test(a.body)) return 'no vehicle';
  return 'error';
}

let open: TestServer;
let registered: TestServer;
beforeAll(async () => {
  open = await startServer();
  registered = await startServer({ USERNAME_POLICY: 'registered' });
  await registered.store.accounts.putAccount({ username: key('garage'), credits: 3 });
  await registered.store.accounts.putAccount({ username: key('fleet'), credits: null });
  await registered.store.accounts.putAccount({ username: key('broke'), credits: 0 });
  await registered.store.accounts.putAccount({ username: key('hoard'), credits: 3_000_000_000 });
  // Only a hand edit of the database can leave a negative balance (users credit stops at 0).
  await registered.store.accounts.putAccount({ username: key('owing'), credits: -5 });
});
afterAll(async () => {
  await Promise.all([open.close(), registered.close()]);
});

function credits(base: string, query: string, init: RequestInit = {}): Promise<Answer> {
  return fetchAnswer(base, `/ajax/getcredits.aspx${query}`, init);
}

describe('the connection test: GET /ajax/getcredits.aspx', () => {
  test('a limited account: its credits as a bare integer in text/plain, taken by lookups, not by the check', async () => {
    const first = await credits(registered.url, '?username=garage');
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(first.body).toBe('3');
    expect((await credits(registered.url, '?username=garage')).body).toBe('3');
    expect(
      classify(await call(registered.url, 'get', 'Check', { RegistrationNumber: 'RG11 ABC', username: 'garage' })),
    ).toBe('vehicle');
    expect((await credits(registered.url, '?username=garage')).body).toBe('2');
  });

  test('0 for an unknown username as for an empty account; the large value for an unmetered one', async () => {
    expect(await credits(registered.url, '?username=nobody')).toMatchObject({ status: 200, body: '0' });
    expect(await credits(registered.url, '?username=broke')).toMatchObject({ status: 200, body: '0' });
    expect(await credits(registered.url, '?username=fleet')).toMatchObject({ status: 200, body: UNMETERED });
  });

  test('a balance over the largest 32-bit int is reported as that int (README, Credits)', async () => {
    expect(await credits(registered.url, '?username=hoard')).toMatchObject({ status: 200, body: UNMETERED });
  });

  test('a negative balance is reported as 0: credits left are never below 0 (README, users credit)', async () => {
    expect(await credits(registered.url, '?username=owing')).toMatchObject({ status: 200, body: '0' });
  });

  test('under USERNAME_POLICY=any a username with no account is unmetered', async () => {
    expect(await credits(open.url, '?username=anyone')).toMatchObject({ status: 200, body: UNMETERED });
  });

  test('path and parameter name in any case, as on IIS', async () => {
    expect((await credits(registered.url, '?USERNAME=garage')).body).toMatch(/^\d+$/);
    const res = await fetch(`${registered.url}/Ajax/GetCredits.aspx?UserName=fleet`);
    expect(await res.text()).toBe(UNMETERED);
  });

  test('HEAD answers the headers alone; another method is 405 with Allow; no username is MISSING_PARAMETER', async () => {
    const head = await fetch(`${registered.url}/ajax/getcredits.aspx?username=garage`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await head.text()).toBe('');
    const post = await credits(registered.url, '?username=garage', { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const none = await credits(registered.url, '');
    expect(none.status).toBe(400);
    expect(none.body).toMatch(/^MISSING_PARAMETER: .*'username'/);
    expect((await credits(registered.url, '?username=')).status).toBe(400);
    expect((await credits(registered.url, '?username=a&USERNAME=b')).body).toMatch(/^INVALID_PARAMETER: /);
  });
});

describe('lookups and the error bodies the connector reads', () => {
  test('an unknown username is a rejected username, over GET, POST and the JSON API', async () => {
    for (const t of ['get', 'post'] as const) {
      const a = await call(registered.url, t, 'Check', { RegistrationNumber: 'RG11 ABC', username: 'mallory' });
      expect(a.status).toBe(403);
      expect(classify(a)).toBe('bad username');
      expect(a.body).toMatch(/^UNKNOWN_USERNAME: [^\n]*\n$/);
    }
    const json = await fetch(`${registered.url}/api/json.aspx/Check/RG11ABC`, {
      headers: { Authorization: basic('mallory') },
    });
    expect(classify({ status: json.status, headers: json.headers, body: await json.text() })).toBe('bad username');
  });

  test('a registration not held is "no vehicle", and never a rejected username', async () => {
    for (const t of ['get', 'post'] as const) {
      const a = await call(registered.url, t, 'Check', { RegistrationNumber: 'ZZ99 ZZZ', username: 'fleet' });
      expect(a.status).toBe(404);
      expect(classify(a)).toBe('no vehicle');
      expect(a.body).toContain('No vehicle found');
    }
  });

  test('out of credit says so, and is neither a rejected username nor "no vehicle"', async () => {
    const a = await call(registered.url, 'get', 'Check', { RegistrationNumber: 'RG11 ABC', username: 'broke' });
    expect(a.status).toBe(429);
    expect(a.body).toMatch(/^OUT_OF_CREDIT: .*Out of credit/);
    expect(classify(a)).toBe('error');
  });

  test('other errors are not mistaken for "no vehicle" or a rejected username', async () => {
    const answers = [
      await call(open.url, 'get', 'CheckUSA', { RegistrationNumber: '7ABC123', State: 'Narnia', username: 'demo' }),
      await call(open.url, 'get', 'Check', { RegistrationNumber: 'RG11 ABC' }),
      await call(open.url, 'get', 'Check', { RegistrationNumber: '---', username: 'demo' }),
    ];
    for (const a of answers) {
      expect(a.status).toBe(400);
      expect(classify(a)).toBe('error');
    }
  });

  test('the SOAP fault strings carry the same phrases', async () => {
    const user = await call(registered.url, 'soap11', 'Check', { RegistrationNumber: 'RG11 ABC', username: 'mallory' });
    expect(/<faultstring>([^<]*)<\/faultstring>/.exec(user.body)?.[1]).toMatch(USERNAME_REJECTED);
    const none = await call(registered.url, 'soap12', 'Check', { RegistrationNumber: 'ZZ99 ZZZ', username: 'fleet' });
    expect(/<soap:Text[^>]*>([^<]*)<\/soap:Text>/.exec(none.body)?.[1]).toMatch(/No vehicle found/);
  });
});
