// Redis hangs (SIGSTOP: the connection stays open, nothing answers) under two running services,
// one with RATE_LIMIT_ON_REDIS_ERROR=allow and one with deny, and then resumes (SIGCONT). Held to
// the README (Managing callers: the policy applies while Redis cannot be reached, logged once each
// way; Health and readiness: under allow a failing Redis leaves /readyz 200, "degraded"; under deny
// /readyz is 503): once the hang is known, lookups get the policy's answer without waiting for
// Redis's 1 s command time-out each; after SIGCONT the limit is enforced again. The Redis is a
// private redis-server on a free port (the machine's Redis is shared and left alone).

import { spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { startRedisServer } from '../helpers/private-redis';
import { freePort } from '../helpers/port';
import { call, type Answer } from '../helpers/call';
import { startServeProcess, type ServeProcess } from '../helpers/cli';
import { recordScenario } from './scenario';

const IN_CI = /^(1|true|yes)$/i.test(process.env.CI ?? '');
const HAVE_REDIS_SERVER = spawnSync('redis-server', ['--version']).status === 0;
if (!HAVE_REDIS_SERVER && !IN_CI)
  console.warn('redis-outage.test.ts: skipped, no redis-server (Debian package redis-server)');

jest.setTimeout(120_000);

/** The limiter's Redis command time-out (src/accounts/limiter.ts: commandTimeout). */
const REDIS_TIMEOUT_MS = 1000;
const count = (text: string, re: RegExp) => (text.match(re) ?? []).length;
const STACK = /\\n\s+at |\n\s+at \S/;
const DOWN_LINE = /"message":"Redis cannot be reached/g;
const BACK_LINE = /"message":"Redis is reachable again/g;

const startRedis = startRedisServer;

const lookup = (srv: ServeProcess, username: string): Promise<Answer> =>
  call(srv.base, 'get', 'Check', { RegistrationNumber: 'RG11ABC', username });

async function waitFor(what: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (!what() && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  return what();
}

(HAVE_REDIS_SERVER || IN_CI ? describe : describe.skip)('Redis hung under running services', () => {
  let redis: ChildProcessWithoutNullStreams | null = null;
  const servers: ServeProcess[] = [];

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    if (redis && redis.exitCode === null) {
      redis.kill('SIGCONT');
      redis.kill('SIGKILL');
    }
  });

  test('after the first time-out, the policy applies at once (allow: 200, ready and degraded; deny: 429, not ready); after SIGCONT the limit is enforced again', async () => {
    const port = await freePort();
    redis = await startRedis(port);
    // One lookup per 1000 s plus a burst of 2: three admitted, then RATE_LIMITED.
    const env = {
      DATABASE_URL: 'sqlite::memory:',
      RATE_LIMIT: '0.001',
      RATE_LIMIT_BURST: '2',
      REDIS_URL: `redis://127.0.0.1:${port}`,
      REDIS_PREFIX: 'faults:',
    };
    const [allow, deny] = await Promise.all([
      startServeProcess({ ...env, RATE_LIMIT_ON_REDIS_ERROR: 'allow' }),
      startServeProcess({ ...env, RATE_LIMIT_ON_REDIS_ERROR: 'deny' }),
    ]);
    servers.push(allow, deny);
    const statuses = { allow: {} as Record<number, number>, deny: {} as Record<number, number> };
    const tally = (which: 'allow' | 'deny', a: Answer) =>
      (statuses[which][a.status] = (statuses[which][a.status] ?? 0) + 1);

    // With Redis: the limit is enforced ('limited-a' / 'limited-d' use theirs up).
    for (const [which, srv] of [
      ['allow', allow],
      ['deny', deny],
    ] as const) {
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await lookup(srv, `limited-${which}`));
      answers.forEach((a) => tally(which, a));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
      expect((await fetch(`${srv.base}/readyz`)).status).toBe(200);
    }

    redis.kill('SIGSTOP');
    const timings: Record<string, number> = {};
    try {
      // The first lookup on each finds the hang (it waits for the time-out); the outage is logged once.
      tally('allow', await lookup(allow, 'first'));
      tally('deny', await lookup(deny, 'first'));
      expect(
        await waitFor(() => count(allow.output(), DOWN_LINE) === 1 && count(deny.output(), DOWN_LINE) === 1, 10_000),
      ).toBe(true);

      // Then N sequential lookups together take far less than N time-outs: none waits for Redis.
      const N = 20;
      for (const [which, srv] of [
        ['allow', allow],
        ['deny', deny],
      ] as const) {
        const t = Date.now();
        for (let i = 0; i < N; i++) {
          const a = await lookup(srv, `hung-${i % 3}`);
          tally(which, a);
          if (which === 'allow') expect(a.status).toBe(200);
          else {
            expect(a.status).toBe(429);
            expect(a.headers.get('x-error-code')).toBe('RATE_LIMITED');
            expect(a.headers.get('retry-after')).toBe('1');
            expect(a.body).toMatch(/cannot be checked/);
          }
        }
        timings[which] = Date.now() - t;
        expect(timings[which]).toBeLessThan(5 * REDIS_TIMEOUT_MS);
      }

      // Readiness: allow stays ready, saying the limit is degraded; deny is not ready (as before).
      const r1 = await fetch(`${allow.base}/readyz`);
      expect(r1.status).toBe(200);
      const body = (await r1.json()) as { status: string; checks: Record<string, string>; degraded?: string };
      expect(body.status).toBe('ready');
      expect(body.checks).toMatchObject({ store: 'ok', redis: 'degraded' });
      expect(body.degraded).toMatch(/redis.*rate limits are not applied/i);
      const r2 = await fetch(`${deny.base}/readyz`);
      expect(r2.status).toBe(503);
      expect(((await r2.json()) as { reason: string }).reason).toMatch(/redis/);
    } finally {
      redis.kill('SIGCONT');
    }

    // Back: one line each, and the limit is enforced again (the limited callers are refused again).
    expect(
      await waitFor(() => count(allow.output(), BACK_LINE) === 1 && count(deny.output(), BACK_LINE) === 1, 15_000),
    ).toBe(true);
    for (const [which, srv] of [
      ['allow', allow],
      ['deny', deny],
    ] as const) {
      const a = await lookup(srv, `limited-${which}`);
      tally(which, a);
      expect(a.status).toBe(429);
      expect(a.headers.get('x-error-code')).toBe('RATE_LIMITED');
      expect(a.body).toMatch(/Too many requests/);
      const ready = await fetch(`${srv.base}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready', checks: { store: 'ok', redis: 'ok' } });
    }
    for (const srv of [allow, deny]) {
      expect(count(srv.output(), DOWN_LINE)).toBe(1);
      expect(count(srv.output(), BACK_LINE)).toBe(1);
      expect(srv.output()).not.toMatch(STACK);
    }

    const fmt = (s: Record<number, number>) =>
      Object.entries(s)
        .map(([k, n]) => `${n} x ${k}`)
        .join(', ');
    recordScenario({
      scenario: 'Redis hung (SIGSTOP) then resumed',
      answered: `allow: ${fmt(statuses.allow)}; deny: ${fmt(statuses.deny)} (429 RATE_LIMITED, Retry-After: 1); 20 sequential lookups while hung took ${timings.allow} ms (allow), ${timings.deny} ms (deny) against a ${REDIS_TIMEOUT_MS} ms time-out each; /readyz allow 200 degraded, deny 503`,
      charged: 'n/a (no credited account; the rate limit counted again after SIGCONT)',
      logged: `per server: ${count(allow.output(), DOWN_LINE)} 'cannot be reached' line, ${count(allow.output(), BACK_LINE)} 'reachable again' line, 0 stack traces`,
    });
  });
});
