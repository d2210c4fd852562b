// The rate limit in Redis, in one test process against a private redis-server on a free port (the
// machine's shared Redis is left alone), held to the README: with REDIS_URL every instance shares one
// limit; every key written starts with REDIS_PREFIX; when Redis goes, one warning is logged, and one
// line when it is back, and the limit applies again. Without the redis-server binary the tests are
// skipped with a message (test/redis/shared-limit.test.ts does the same, and its CI installs it).

import { spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { startRedisServer } from '../helpers/private-redis';
import { Redis } from 'ioredis';
import { FlexibleRateLimiter, type LimiterConfig } from '../../src/accounts/limiter';
import { freePort } from '../helpers/port';
import { fakeLogger } from '../helpers/logger';

const HAVE_REDIS_SERVER = spawnSync('redis-server', ['--version']).status === 0;
const maybe = HAVE_REDIS_SERVER ? describe : describe.skip;
if (!HAVE_REDIS_SERVER) console.warn('limiter-redis.test.ts: skipped, no redis-server (Debian package redis-server)');

jest.setTimeout(30_000);

maybe('in Redis', () => {
  let port: number;
  let server: ChildProcessWithoutNullStreams | null = null;
  const open: FlexibleRateLimiter[] = [];

  async function startRedis(): Promise<void> {
    server = await startRedisServer(port);
  }

  async function stopRedis(): Promise<void> {
    const child = server;
    server = null;
    if (!child || child.exitCode !== null) return;
    child.kill('SIGKILL');
    await new Promise((r) => child.on('close', r));
  }

  function limiter(config: Partial<LimiterConfig> = {}) {
    const { logger, lines } = fakeLogger();
    const l = new FlexibleRateLimiter(
      { burst: 0, redisUrl: `redis://127.0.0.1:${port}`, redisPrefix: 'unit:', onError: 'allow', ...config },
      logger,
    );
    open.push(l);
    return { l, lines };
  }

  beforeAll(async () => {
    port = await freePort();
    await startRedis();
  });
  afterEach(async () => {
    for (const l of open.splice(0)) await l.close();
  });
  afterAll(() => stopRedis());

  test('two instances on one Redis share one limit; every key starts with REDIS_PREFIX', async () => {
    const a = limiter({ redisPrefix: 'one:' });
    const b = limiter({ redisPrefix: 'one:' });
    await Promise.all([a.l.ready(), b.l.ready()]);
    let admitted = 0;
    for (let i = 0; i < 3; i++) {
      if ((await a.l.consume('shared', 0.01)) === null) admitted++;
      if ((await b.l.consume('shared', 0.01)) === null) admitted++;
    }
    // 0.01 a second is one lookup per 100 s: one of the six, whichever instance asked.
    expect(admitted).toBe(1);
    expect(await b.l.consume('shared', 0.01)).toEqual({ retryAfter: 100, unavailable: false });
    // Another prefix is another limit.
    const c = limiter({ redisPrefix: 'two:' });
    await c.l.ready();
    expect(await c.l.consume('shared', 0.01)).toBeNull();
    const client = new Redis(`redis://127.0.0.1:${port}`);
    try {
      const keys = await client.keys('*');
      expect(keys.length).toBeGreaterThan(0);
      for (const k of keys) expect(k.startsWith('one:') || k.startsWith('two:')).toBe(true);
      expect(keys.filter((k) => k.startsWith('two:'))).toHaveLength(1);
    } finally {
      client.disconnect();
    }
    expect([...a.lines, ...b.lines, ...c.lines]).toEqual([]);
  });

  test('ready() resolves as soon as Redis is connected, not after a wait', async () => {
    const { l } = limiter({ redisPrefix: 'ready:' });
    const t = Date.now();
    await l.ready();
    expect(Date.now() - t).toBeLessThan(1500);
  });

  test('a username counted at two rates in turn is counted as in memory: each rate from zero', async () => {
    // 1 a second, then 3 a second, within the same second: 1 + 3 admitted, as separate limits in memory give.
    const { l } = limiter({ redisPrefix: 'tworates:' });
    await l.ready();
    let admitted = 0;
    for (let i = 0; i < 3; i++) if ((await l.consume('changer', 1)) === null) admitted++;
    for (let i = 0; i < 5; i++) if ((await l.consume('changer', 3)) === null) admitted++;
    expect(admitted).toBe(4);
  });

  test('close() lets go of the connection', async () => {
    const { l } = limiter({ redisPrefix: 'close:' });
    await l.ready();
    const client = new Redis(`redis://127.0.0.1:${port}`);
    try {
      const clients = async () =>
        String(await client.client('LIST'))
          .trim()
          .split('\n').length;
      const before = await clients();
      await l.close();
      const until = Date.now() + 3000;
      while ((await clients()) >= before && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(await clients()).toBe(before - 1);
    } finally {
      client.disconnect();
    }
  });

  test('the burst pool is shared too', async () => {
    const a = limiter({ redisPrefix: 'burst:', burst: 2 });
    const b = limiter({ redisPrefix: 'burst:', burst: 2 });
    await Promise.all([a.l.ready(), b.l.ready()]);
    let admitted = 0;
    for (let i = 0; i < 3; i++) {
      if ((await a.l.consume('pool', 0.01)) === null) admitted++;
      if ((await b.l.consume('pool', 0.01)) === null) admitted++;
    }
    // One at the rate, two from the pool.
    expect(admitted).toBe(3);
  });

  test('instances with different RATE_LIMIT_BURST on one Redis each give their own pool in full, as different rates keep their own counts', async () => {
    // A hand-written case: one instance at RATE_LIMIT_BURST=2 uses its pool up; another at 5 on the
    // same Redis (say the same service restarted with a larger burst) still gives its 5 extra lookups.
    const small = limiter({ redisPrefix: 'mixed:', burst: 2 });
    const large = limiter({ redisPrefix: 'mixed:', burst: 5 });
    await Promise.all([small.l.ready(), large.l.ready()]);
    let admitted = 0;
    for (let i = 0; i < 4; i++) if ((await small.l.consume('pools', 0.01)) === null) admitted++;
    // One at the rate, two from the pool of 2.
    expect(admitted).toBe(3);
    admitted = 0;
    for (let i = 0; i < 7; i++) if ((await large.l.consume('pools', 0.01)) === null) admitted++;
    // The rate's count is shared (already used), the pool of 5 is its own.
    expect(admitted).toBe(5);
  });

  test('Redis going and coming back is logged when it happens, without waiting for a lookup', async () => {
    const { l, lines } = limiter({ redisPrefix: 'events:' });
    await l.ready();
    await stopRedis();
    const waitFor = async (level: string) => {
      const until = Date.now() + 8000;
      while (!lines.some((x) => x.level === level) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    };
    await waitFor('warn');
    expect(lines.filter((x) => x.level === 'warn')).toHaveLength(1);
    await startRedis();
    await waitFor('info');
    expect(lines.filter((x) => x.level === 'info').map((x) => x.message)).toEqual([
      'Redis is reachable again; rate limits apply',
    ]);
  });

  test('Redis stopped and started again: one warning, refusals under deny meanwhile, one line when it is back, and the limit applies again', async () => {
    const { l, lines } = limiter({ redisPrefix: 'outage:', onError: 'deny' });
    await l.ready();
    expect(await l.consume('o', 0.01)).toBeNull();
    await stopRedis();
    for (let i = 0; i < 3; i++) expect(await l.consume('o2', 100)).toEqual({ retryAfter: 1, unavailable: true });
    await startRedis();
    // Reconnects within a second (retries at most every second).
    const until = Date.now() + 10_000;
    let back = await l.consume('o3', 100);
    while (back !== null && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 100));
      back = await l.consume('o3', 100);
    }
    expect(back).toBeNull();
    const warns = lines.filter((x) => x.level === 'warn');
    const infos = lines.filter((x) => x.level === 'info');
    expect(warns).toHaveLength(1);
    expect(warns[0].message).toMatch(/^Redis cannot be reached; rate limits are refusing every lookup/);
    expect(infos).toHaveLength(1);
    expect(infos[0].message).toBe('Redis is reachable again; rate limits apply');
    // The new Redis is empty: the limit starts afresh, and applies.
    expect(await l.consume('o', 0.01)).toBeNull();
    expect(await l.consume('o', 0.01)).toEqual({ retryAfter: 100, unavailable: false });
  });
  test('a hung Redis (SIGSTOP): after the first command times out, lookups get the policy at once until a PING finds it back (README, Rate limits)', async () => {
    const { l, lines } = limiter({ redisPrefix: 'hung:', onError: 'deny', burst: 0 });
    await l.ready();
    expect(await l.consume('h', 0.01)).toBeNull();
    const pid = server!.pid!;
    process.kill(pid, 'SIGSTOP');
    try {
      // The first waits for the command's time-out (1 s) and is refused under deny.
      expect(await l.consume('h2', 100)).toEqual({ retryAfter: 1, unavailable: true });
      expect(lines.filter((x) => x.level === 'warn')).toHaveLength(1);
      // Then 20 in a row take far less than one time-out together: none waits for Redis.
      const t = Date.now();
      for (let i = 0; i < 20; i++) expect(await l.consume('h2', 100)).toEqual({ retryAfter: 1, unavailable: true });
      expect(Date.now() - t).toBeLessThan(500);
      // /readyz's probe fails at once too (deny: not ready, as before).
      const p = l.readinessProbe()!;
      expect(p.degraded).toBeUndefined();
      await expect(p.check()).rejects.toThrow(/Redis is failing/);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const until = Date.now() + 10_000;
    while (!lines.some((x) => x.level === 'info') && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(lines.filter((x) => x.level === 'info').map((x) => x.message)).toEqual([
      'Redis is reachable again; rate limits apply',
    ]);
    // The limit applies again: 'h' used its one lookup per 100 s before the outage.
    expect(await l.consume('h', 0.01)).toEqual({ retryAfter: expect.any(Number), unavailable: false });
    expect(lines.filter((x) => x.level === 'warn')).toHaveLength(1);
  });

  test("the readiness probe: PONG on this limiter's client while Redis answers; degraded under allow; failing at once after close", async () => {
    const { l } = limiter({ redisPrefix: 'probe:', onError: 'allow' });
    await l.ready();
    const p = l.readinessProbe()!;
    expect(p.name).toBe('redis');
    expect(p.degraded).toMatch(/rate limits are not applied/);
    await expect(p.check()).resolves.toBe('PONG');
    await l.close();
    await expect(p.check()).rejects.toBeDefined();
  });

  test('without Redis there is no Redis probe', () => {
    const { logger } = fakeLogger();
    expect(
      new FlexibleRateLimiter(
        { burst: 0, redisUrl: null, redisPrefix: 'x:', onError: 'allow' },
        logger,
      ).readinessProbe(),
    ).toBeNull();
  });
});
