// Two service processes on different ports sharing one PostgreSQL database, as N instances behind
// a load balancer do: credits are shared exactly, and a `users` change reaches both.

import { createHash } from 'node:crypto';
import Redis from 'ioredis';
import { describePostgres, testSchema } from '../helpers/postgres';
import { startServeProcess, type ServeProcess } from '../helpers/cli';
import { openStore } from '../../src/store/open';
import type { VehicleStore } from '../../src/store/store';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

jest.setTimeout(120_000);

describePostgres('two instances on one PostgreSQL', () => {
  const schema = testSchema();
  let a: ServeProcess;
  let b: ServeProcess;
  let admin: VehicleStore;

  beforeAll(async () => {
    // No rate limit here: this is about credits; the shared rate limit has its own test below.
    const env = { DATABASE_URL: schema.url, USERNAME_POLICY: 'registered', RATE_LIMIT: '0' };
    // Started together: the migrations and the sample load must sort themselves out between them.
    [a, b] = await Promise.all([startServeProcess(env), startServeProcess(env)]);
    admin = openStore(schema.url);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await admin?.close();
    await schema.drop();
  });

  const lookup = (srv: ServeProcess, username: string) =>
    fetch(`${srv.base}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=${username}`);

  test('they listen on different ports and both serve the sample data loaded once', async () => {
    expect(a.base).not.toBe(b.base);
    expect(await admin.count()).toBe((await import('../helpers/sample')).SAMPLE.length);
  });

  test('an account with 100 credits, 400 lookups spread over both: exactly 100 are answered', async () => {
    await admin.accounts.putAccount({ username: key('hundred'), credits: 100 });
    const answers = await Promise.all(
      Array.from({ length: 400 }, (_, i) =>
        lookup(i % 2 ? a : b, 'hundred').then(async (r) => ({ status: r.status, body: await r.text() })),
      ),
    );
    expect(answers.filter((r) => r.status === 200)).toHaveLength(100);
    expect(answers.filter((r) => r.status === 402 || r.body.includes('OUT_OF_CREDIT'))).toHaveLength(300);
    expect((await admin.accounts.getAccount(key('hundred')))?.credits).toBe(0);
  });

  /**
   * `total` lookups for `username`, spread over both instances, `concurrency` at a time: their answers' statuses and
   * error codes.
   */
  async function spread(
    username: string,
    total: number,
    concurrency: number,
  ): Promise<{ status: number; code: string | null }[]> {
    const out: { status: number; code: string | null }[] = [];
    let next = 0;
    const loop = async () => {
      while (next < total) {
        const i = next++;
        const r = await lookup(i % 2 ? a : b, username);
        await r.text();
        out.push({ status: r.status, code: r.headers.get('x-error-code') });
      }
    };
    await Promise.all(Array.from({ length: concurrency }, loop));
    return out;
  }

  test('issue 30: 2,000 lookups against 500 credits over both, 200 at a time: exactly 500 answered, 500 taken, 500 in usage at once', async () => {
    await admin.accounts.putAccount({ username: key('fivehundred'), credits: 500 });
    const answers = await spread('fivehundred', 2000, 200);
    expect(answers.filter((r) => r.status === 200)).toHaveLength(500);
    expect(answers.filter((r) => r.code === 'OUT_OF_CREDIT')).toHaveLength(1500);
    expect((await admin.accounts.getAccount(key('fivehundred')))?.credits).toBe(0);
    // The usage of a charged lookup is written with its charge: no flush to wait for.
    const usage = await admin.accounts.usage(key('fivehundred'), '2000-01-01');
    expect(usage.reduce((n, u) => n + u.found, 0)).toBe(500);
  });

  test('issue 30: a daily limit of 300 (credits unlimited), 1,000 lookups over both, 200 at a time: exactly 300 answered, the rest DAILY_LIMIT_REACHED', async () => {
    await admin.accounts.putAccount({ username: key('daily300'), credits: null, dailyLimit: 300 });
    const answers = await spread('daily300', 1000, 200);
    expect(answers.filter((r) => r.status === 200)).toHaveLength(300);
    expect(answers.filter((r) => r.code === 'DAILY_LIMIT_REACHED')).toHaveLength(700);
    const listed = (await admin.accounts.listAccounts(new Date().toISOString().slice(0, 10))).find(
      (x) => x.username === key('daily300'),
    );
    expect(listed?.usedToday).toBe(300);
  });

  test('a user added or removed is seen by both within a second (the README says accounts are read at most once a second)', async () => {
    expect((await lookup(a, 'newbie')).status).not.toBe(200);
    expect((await lookup(b, 'newbie')).status).not.toBe(200);
    await admin.accounts.putAccount({ username: key('newbie'), credits: null });
    await new Promise((r) => setTimeout(r, 1100));
    expect((await lookup(a, 'newbie')).status).toBe(200);
    expect((await lookup(b, 'newbie')).status).toBe(200);
    await admin.accounts.removeAccount(key('newbie'));
    await new Promise((r) => setTimeout(r, 1100));
    expect((await lookup(a, 'newbie')).status).not.toBe(200);
    expect((await lookup(b, 'newbie')).status).not.toBe(200);
  });
});

describePostgres('WORKERS=auto on PostgreSQL', () => {
  const schema = testSchema();
  let srv: ServeProcess;
  afterAll(async () => {
    await srv?.stop();
    await schema.drop();
  });

  test('one worker per core, every one serving lookups from the shared database', async () => {
    srv = await startServeProcess({ DATABASE_URL: schema.url, WORKERS: 'auto' });
    const cores = (await import('node:os')).availableParallelism();
    const listening = () => (srv.output().match(/"message":"listening"/g) ?? []).length;
    for (let i = 0; i < 100 && listening() < cores; i++) await new Promise((r) => setTimeout(r, 100));
    expect(listening()).toBe(cores);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        fetch(`${srv.base}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=demo`),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
  });
});

describePostgres('two instances on one PostgreSQL and one Redis', () => {
  const schema = testSchema();
  const prefix = `reglookup-test-${process.pid}-${Date.now()}:`;
  let a: ServeProcess;
  let b: ServeProcess;
  let admin: VehicleStore;

  beforeAll(async () => {
    // RATE_LIMIT=0.001: one lookup per window of 1,000 s, plus a burst of 4 (README, Managing callers).
    const env = {
      DATABASE_URL: schema.url,
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_PREFIX: prefix,
      RATE_LIMIT: '0.001',
      RATE_LIMIT_BURST: '4',
    };
    [a, b] = await Promise.all([startServeProcess(env), startServeProcess(env)]);
    admin = openStore(schema.url);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await admin?.close();
    await schema.drop();
    const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true });
    await redis.connect();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  test('one rate limit between them: 40 lookups of one username over both, exactly 1 + 4 answered, the rest RATE_LIMITED', async () => {
    const lookup = (srv: ServeProcess) =>
      fetch(`${srv.base}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=limited`);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        lookup(i % 2 ? a : b).then(async (r) => ({
          status: r.status,
          code: r.headers.get('x-error-code'),
          body: await r.text(),
        })),
      ),
    );
    expect(answers.filter((r) => r.status === 200)).toHaveLength(5);
    expect(answers.filter((r) => r.status === 429 && r.code === 'RATE_LIMITED')).toHaveLength(35);
  });
});
