// A read replica hangs (its postmaster and every process of it frozen with SIGSTOP) under load, then
// resumes. Held to docs/configuration.md (DATABASE_READ_TIMEOUT_MS, 300 ms by default: a lookup the
// replica does not answer in time is asked of the primary) and issue 43, 3: no caller waits out the
// hang, metered or not; every lookup is answered 200; the metered ones are charged once each.
// The primary and the replica are private servers the test makes (pg_basebackup -R).

import { createHash } from 'node:crypto';
import { PostgresStore } from '../../src/store/postgres';
import { freezeServer, postgresBin, privatePrimaryAndReplica, type PrivatePostgres } from '../helpers/private-postgres';
import { startServeProcess, type ServeProcess } from '../helpers/cli';
import { recordScenario } from './scenario';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

const IN_CI = /^(1|true|yes)$/i.test(process.env.CI ?? '');
const HAVE_PG = postgresBin() !== null && process.platform === 'linux';
if (!HAVE_PG && !IN_CI)
  console.warn('replica-hung.test.ts: skipped, no PostgreSQL server binaries (Debian package postgresql)');

jest.setTimeout(180_000);

const CREDITS = 1_000_000;
const HANG_MS = 7_000;

interface Tally {
  ok: number;
  other: Record<string, number>;
  slowest: number;
}

async function client(base: string, username: string, running: () => boolean, t: Tally): Promise<void> {
  const url = `${base}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=${username}`;
  while (running()) {
    const t0 = performance.now();
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
      await res.text();
      t.slowest = Math.max(t.slowest, performance.now() - t0);
      if (res.status === 200) t.ok++;
      else t.other[res.status] = (t.other[res.status] ?? 0) + 1;
    } catch (e) {
      t.other[(e as Error).name] = (t.other[(e as Error).name] ?? 0) + 1;
    }
  }
}

async function until(what: string, ok: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok().catch(() => false))) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

(HAVE_PG || IN_CI ? describe : describe.skip)('a read replica hung under load', () => {
  let primary: PrivatePostgres;
  let replica: PrivatePostgres;
  let srv: ServeProcess | null = null;
  let thaw: (() => void) | null = null;

  beforeAll(async () => {
    ({ primary, replica } = await privatePrimaryAndReplica());
  });
  afterAll(async () => {
    thaw?.();
    await srv?.stop();
    replica?.destroy();
    primary?.destroy();
  });

  test('lookups go to the primary after the read deadline: none waits the hang, every one answered', async () => {
    const seed = new PostgresStore(primary.url);
    await seed.accounts.putAccount({ username: key('paid'), credits: CREDITS });
    await seed.close();
    srv = await startServeProcess({ DATABASE_URL: primary.url, DATABASE_READ_URL: replica.url, RATE_LIMIT: '0' });
    const base = srv.base;
    // The sample is imported at start-up: the replica is used once it holds it.
    await until('the replica in use', async () => {
      const r = (await (await fetch(`${base}/readyz`)).json()) as { checks: Record<string, string> };
      return r.checks.replicas === 'ok';
    });

    let running = true;
    const free: Tally = { ok: 0, other: {}, slowest: 0 };
    const paid: Tally = { ok: 0, other: {}, slowest: 0 };
    const clients = [
      ...Array.from({ length: 6 }, (_, i) => client(base, `anyone${i}`, () => running, free)),
      ...Array.from({ length: 6 }, () => client(base, 'paid', () => running, paid)),
    ];
    await new Promise((r) => setTimeout(r, 1500));
    thaw = freezeServer(replica.data);
    await new Promise((r) => setTimeout(r, HANG_MS));
    const readyDuring = (await (await fetch(`${base}/readyz`)).json()) as { checks: Record<string, string> };
    thaw();
    thaw = null;
    await new Promise((r) => setTimeout(r, 2000));
    running = false;
    await Promise.all(clients);
    await srv.stop();
    srv = null;

    const check = new PostgresStore(primary.url);
    const account = await check.accounts.getAccount(key('paid'));
    await check.close();
    const charged = CREDITS - (account?.credits ?? 0);

    recordScenario({
      scenario: 'read replica hung under load',
      answered: `${free.ok + paid.ok} x 200 (${free.ok} unmetered, ${paid.ok} metered), others ${JSON.stringify({ ...free.other, ...paid.other })}; slowest ${Math.round(Math.max(free.slowest, paid.slowest))} ms; replica frozen ${HANG_MS / 1000} s`,
      charged: `${charged} credits taken for ${paid.ok} metered answers`,
      logged: `/readyz during the hang: replicas ${readyDuring.checks.replicas}`,
    });

    expect(free.other).toEqual({});
    expect(paid.other).toEqual({});
    // The read deadline (300 ms) and the primary's answer; nowhere near the 7 s hang.
    expect(Math.max(free.slowest, paid.slowest)).toBeLessThan(1500);
    expect(readyDuring.checks.replicas).toBe('degraded');
    expect(charged).toBe(paid.ok);
  });
});
