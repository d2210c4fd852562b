// Redis hangs (SIGSTOP: connections stay open, nothing answers) under a running service whose DVSA
// quota is counted in it (issue 43, point 4): the quota fails over after one short time-out to
// this process's share of it, counted in memory, with one warn line; uncached UKMOT lookups are
// answered without each waiting for Redis, /readyz says the quota is degraded (and stays 200), and
// after SIGCONT the quota is counted in Redis again. The Redis is a private redis-server on a free
// port (the machine's Redis is shared and left alone).

import { spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createDvsaProvider } from '../../src/providers/dvsa';
import { call, type Answer } from '../helpers/call';
import { fetchContext } from '../helpers/upstream-http';
import { startServeProcess, type ServeProcess } from '../helpers/cli';
import { freePort } from '../helpers/port';
import { startRedisServer } from '../helpers/private-redis';
import { DVSA_CLIENT, startFakeDvsa, type FakeDvsa } from '../helpers/upstream-dvsa';
import { recordScenario } from './scenario';

const IN_CI = /^(1|true|yes)$/i.test(process.env.CI ?? '');
const HAVE_REDIS_SERVER = spawnSync('redis-server', ['--version']).status === 0;
if (!HAVE_REDIS_SERVER && !IN_CI)
  console.warn('dvsa-quota-redis-hung.test.ts: skipped, no redis-server (Debian package redis-server)');

jest.setTimeout(90_000);

const STACK = /\n\s+at \S/;
const DOWN_LINE = /"message":"the DVSA quota cannot be counted in Redis/g;
const BACK_LINE = /"message":"the DVSA quota is counted in Redis again/g;
const count = (text: string, re: RegExp) => (text.match(re) ?? []).length;

async function waitFor(what: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (!what() && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  return what();
}

(HAVE_REDIS_SERVER || IN_CI ? describe : describe.skip)('Redis hung under the DVSA quota', () => {
  let redis: ChildProcessWithoutNullStreams | null = null;
  let fake: FakeDvsa | null = null;
  let srv: ServeProcess | null = null;
  afterAll(async () => {
    await srv?.stop();
    await fake?.close();
    if (redis && redis.exitCode === null) {
      redis.kill('SIGCONT');
      redis.kill('SIGKILL');
    }
  });

  test('one short time-out, then the local share: UKMOT answered without waiting, /readyz degraded; back after SIGCONT', async () => {
    const port = await freePort();
    redis = await startRedisServer(port);
    fake = await startFakeDvsa();
    srv = await startServeProcess({
      DATABASE_URL: 'sqlite::memory:',
      PROVIDERS: 'store,dvsa',
      DVSA_URL: fake.apiUrl,
      DVSA_TOKEN_URL: fake.tokenUrl,
      DVSA_CLIENT_ID: DVSA_CLIENT.clientId,
      DVSA_CLIENT_SECRET: DVSA_CLIENT.clientSecret,
      DVSA_API_KEY: DVSA_CLIENT.apiKey,
      DVSA_QUOTA_PROCESSES: '2',
      UPSTREAM_TIMEOUT_MS: '1500',
      REDIS_URL: `redis://127.0.0.1:${port}`,
      REDIS_PREFIX: 'faults-dvsa:',
      RATE_LIMIT: '1000000',
      RATE_LIMIT_ON_REDIS_ERROR: 'allow',
    });
    const s = srv;
    let n = 0;
    const ukmot = async (): Promise<Answer & { ms: number }> => {
      const t = Date.now();
      const a = await call(s.base, 'get', 'UKMOT', {
        RegistrationNumber: `RH${String(n++).padStart(3, '0')}ABC`,
        username: 'tester',
      });
      return { ...a, ms: Date.now() - t };
    };
    // With Redis: answered (a plate the DVSA does not hold is VEHICLE_NOT_FOUND, an answer).
    expect((await ukmot()).status).toBe(404);
    const ready0 = (await (await fetch(`${s.base}/readyz`)).json()) as { checks: Record<string, string> };
    expect(ready0.checks['dvsa-quota']).toBe('ok');

    redis.kill('SIGSTOP');
    let first: Answer & { ms: number };
    const hung: (Answer & { ms: number })[] = [];
    let readyWhileHung: { status: number; body: { status: string; checks: Record<string, string>; degraded?: string } };
    try {
      // The first finds the hang (the rate limiter's and the quota's time-outs); the next ones do not wait for it.
      first = await ukmot();
      // Six: with DVSA_QUOTA_PROCESSES=2 the local share is 7 a second, and the first took one.
      for (let i = 0; i < 6; i++) hung.push(await ukmot());
      const r = await fetch(`${s.base}/readyz`);
      readyWhileHung = { status: r.status, body: (await r.json()) as typeof readyWhileHung.body };
    } finally {
      redis.kill('SIGCONT');
    }
    expect(first.status).toBe(404);
    for (const a of hung) {
      expect(a.status).toBe(404);
      expect(a.ms).toBeLessThan(300);
    }
    expect(count(s.output(), DOWN_LINE)).toBe(1);
    expect(readyWhileHung.status).toBe(200);
    expect(readyWhileHung.body.checks['dvsa-quota']).toBe('degraded');
    expect(readyWhileHung.body.degraded).toMatch(/DVSA quota/);

    // Back: the quota is counted in Redis again, said once.
    expect(await waitFor(() => count(s.output(), BACK_LINE) === 1, 10_000)).toBe(true);
    const ready1 = (await (await fetch(`${s.base}/readyz`)).json()) as { checks: Record<string, string> };
    expect(ready1.checks['dvsa-quota']).toBe('ok');
    expect((await ukmot()).status).toBe(404);
    expect(s.output()).not.toMatch(STACK);

    const slowest = Math.max(...hung.map((a) => a.ms));
    recordScenario({
      scenario: 'Redis hung under the DVSA quota',
      answered: `first uncached UKMOT after SIGSTOP: ${first.status} in ${first.ms} ms; the next ${hung.length}: all ${hung[0].status}, slowest ${slowest} ms; /readyz ${readyWhileHung.status} with dvsa-quota degraded`,
      charged: 'n/a (no credited account)',
      logged: `${count(s.output(), DOWN_LINE)} 'cannot be counted in Redis' line, ${count(s.output(), BACK_LINE)} 'counted in Redis again' line, 0 stack traces`,
    });
  });

  test('Redis hung before the first call: the call is not held past half its budget, and is answered', async () => {
    const port = await freePort();
    const own = await startRedisServer(port);
    const dvsa = await startFakeDvsa();
    own.kill('SIGSTOP');
    const { clientId, clientSecret, scope, apiKey } = DVSA_CLIENT;
    const p = createDvsaProvider(
      { url: dvsa.apiUrl, tokenUrl: dvsa.tokenUrl, clientId, clientSecret, scope, apiKey },
      { redisUrl: `redis://127.0.0.1:${port}`, redisPrefix: 'faults-dvsa-start:' },
    );
    try {
      const t = Date.now();
      const answer = await p.fetch('UKMOT', 'AB12CDE', '', { ...fetchContext(1500), deadline: Date.now() + 1500 });
      const ms = Date.now() - t;
      expect(answer.found).toBe(true);
      expect(ms).toBeLessThan(1500);
      recordScenario({
        scenario: 'Redis hung before the DVSA quota first used it',
        answered: `the first UKMOT call answered in ${ms} ms (budget 1500 ms; at most half of it waits for Redis)`,
        charged: 'n/a (provider only)',
        logged: 'the quota counted in the local share',
      });
    } finally {
      await p.close();
      await dvsa.close();
      own.kill('SIGCONT');
      own.kill('SIGKILL');
    }
  });
});
