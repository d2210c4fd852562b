// PostgreSQL goes away under a running `reglookup serve` and comes back. Held to the README
// (Errors: SERVICE_UNAVAILABLE is 503 with Retry-After, SOAP answers it as a soap:Server /
// soap:Receiver fault; Health and readiness; Metrics; Failure modes): callers are told to retry
// later, not that something broke; the log says so once when it goes and once when it is back, with
// no stack trace; lookups are answered again without a restart. The server is a private one the
// test starts and stops (the machine's PostgreSQL is shared and left alone).

import { createHash } from 'node:crypto';
import { PostgresStore } from '../../src/store/postgres';
import { postgresBin, privatePostgres, type PrivatePostgres } from '../helpers/private-postgres';
import { FIVE_TRANSPORTS, callAny, type AnyTransport } from '../helpers/json';
import type { Answer } from '../helpers/call';
import { startServeProcess, type ServeProcess } from '../helpers/cli';
import { recordScenario } from './scenario';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

const IN_CI = /^(1|true|yes)$/i.test(process.env.CI ?? '');
const HAVE_PG = postgresBin() !== null;
if (!HAVE_PG && !IN_CI)
  console.warn('postgres-outage.test.ts: skipped, no PostgreSQL server binaries (Debian package postgresql)');

jest.setTimeout(120_000);

const LOOKUP = { RegistrationNumber: 'RG11ABC' };
const count = (text: string, re: RegExp) => (text.match(re) ?? []).length;
// A stack trace in a log line: JSON escapes its newlines ("\n    at f (file:1:2)").
const STACK = /\\n\s+at |\n\s+at \S/;
const UNAVAILABLE_LINE = /"message":"store unavailable: PostgreSQL cannot be reached/g;
const BACK_LINE = /"message":"store back: PostgreSQL is reachable again after \d+\.\d s"/g;

function metric(text: string, name: string): number {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

/** What the README says a SERVICE_UNAVAILABLE looks like on each transport (hand-written). */
function expectUnavailable(t: AnyTransport, a: Answer): void {
  expect(a.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  expect(a.body).not.toMatch(/\bat \S+:\d+|ECONNREFUSED|127\.0\.0\.1|SELECT/);
  if (t === 'soap11') {
    expect(a.status).toBe(500);
    expect(a.body).toContain('<faultcode>soap:Server</faultcode>');
    expect(a.body).toContain('SERVICE_UNAVAILABLE</ErrorCode>');
  } else if (t === 'soap12') {
    expect(a.status).toBe(500);
    expect(a.body).toMatch(/<soap:Value>soap:Receiver<\/soap:Value>/);
    expect(a.body).toContain('SERVICE_UNAVAILABLE');
  } else if (t === 'json') {
    expect(a.status).toBe(503);
    expect(JSON.parse(a.body)).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  } else {
    expect(a.status).toBe(503);
    expect(a.headers.get('x-error-code')).toBe('SERVICE_UNAVAILABLE');
    expect(a.body).toMatch(/^SERVICE_UNAVAILABLE: /);
  }
}

(HAVE_PG || IN_CI ? describe : describe.skip)('PostgreSQL stopped under a running service', () => {
  let pg: PrivatePostgres;
  let srv: ServeProcess | null = null;

  beforeAll(async () => {
    pg = await privatePostgres();
  });
  afterAll(async () => {
    await srv?.stop();
    pg?.destroy();
  });

  test('503 SERVICE_UNAVAILABLE with Retry-After on every transport while it is down, one line each way, no stack; back without a restart', async () => {
    const seed = new PostgresStore(pg.url);
    await seed.accounts.putAccount({ username: key('paid'), credits: 100 });
    await seed.close();
    srv = await startServeProcess({ DATABASE_URL: pg.url, RATE_LIMIT: '1000' });
    const statuses: Record<string, number> = {};
    const tally = (a: Answer) => (statuses[a.status] = (statuses[a.status] ?? 0) + 1);

    // Up: every transport answers.
    for (const t of FIVE_TRANSPORTS) {
      const a = await callAny(srv.base, t, 'Check', { ...LOOKUP, username: 'paid' });
      tally(a);
      expect(a.status).toBe(200);
    }

    pg.stop();
    const N = 40;
    for (let i = 0; i < N; i++) {
      const t = FIVE_TRANSPORTS[i % FIVE_TRANSPORTS.length];
      const a = await callAny(srv.base, t, 'Check', { ...LOOKUP, username: i % 2 ? 'paid' : `anyone${i}` });
      tally(a);
      expectUnavailable(t, a);
    }
    // Some in parallel too (one read for all of them: each is refused).
    const together = await Promise.all(
      Array.from({ length: 10 }, () => callAny(srv!.base, 'get', 'Check', { ...LOOKUP, username: 'paid' })),
    );
    for (const a of together) {
      tally(a);
      expectUnavailable('get', a);
    }
    const ready = await fetch(`${srv.base}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { checks: Record<string, string> }).checks.store).toBe('failing');
    const down = await (await fetch(`${srv.base}/metrics`)).text();
    expect(metric(down, 'reglookup_store_up')).toBe(0);
    // Every refused lookup counted (and the /readyz probe).
    expect(metric(down, 'reglookup_store_unavailable_total')).toBeGreaterThanOrEqual(N + 10);
    const outageLog = srv.output();
    expect(count(outageLog, UNAVAILABLE_LINE)).toBe(1);
    expect(outageLog).not.toMatch(STACK);
    expect(outageLog).not.toMatch(/"message":"lookup failed"|"level":"error","message":"(?!store unavailable)/);

    pg.start();
    // The pool reconnects on its own: lookups are answered again within seconds.
    const deadline = Date.now() + 30_000;
    let back: Answer | null = null;
    let waited = 0;
    while (Date.now() < deadline) {
      back = await callAny(srv.base, 'get', 'Check', { ...LOOKUP, username: 'paid' });
      tally(back);
      if (back.status === 200) break;
      waited++;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(back?.status).toBe(200);
    for (const t of FIVE_TRANSPORTS) {
      const a = await callAny(srv.base, t, 'Check', { ...LOOKUP, username: 'paid' });
      tally(a);
      expect(a.status).toBe(200);
    }
    expect((await fetch(`${srv.base}/readyz`)).status).toBe(200);
    const up = await (await fetch(`${srv.base}/metrics`)).text();
    expect(metric(up, 'reglookup_store_up')).toBe(1);
    const log = srv.output();
    expect(count(log, UNAVAILABLE_LINE)).toBe(1);
    expect(count(log, BACK_LINE)).toBe(1);
    expect(log).not.toMatch(STACK);

    await srv.stop();
    srv = null;
    // Only answered lookups were charged: 5 + 1 + 5 of the 'paid' ones.
    const check = new PostgresStore(pg.url);
    const paid = await check.accounts.getAccount(key('paid'));
    await check.close();
    expect(paid?.credits).toBe(100 - 11);

    recordScenario({
      scenario: 'PostgreSQL stopped and started under load',
      answered:
        Object.entries(statuses)
          .map(([s, n]) => `${n} x ${s}`)
          .join(', ') +
        ` (503/SOAP 500 with Retry-After; answered again after ${waited} refused retries, 100 ms apart)`,
      charged: `'paid': 100 credits before, ${paid?.credits} after 11 answered lookups (none taken while down)`,
      logged: `${count(log, UNAVAILABLE_LINE)} unavailable line, ${count(log, BACK_LINE)} back line, 0 stack traces; reglookup_store_unavailable_total ${metric(down, 'reglookup_store_unavailable_total')}`,
    });
  });
});
