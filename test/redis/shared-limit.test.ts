// One rate limit however the service is run: WORKERS=2 without Redis, two server processes on one
// Redis, and Redis stopped and started again during a run. Servers run as their own processes
// (`reglookup serve`), as an operator runs them. The machine's Redis (127.0.0.1:6379) is shared,
// so these tests use a key prefix of their own and delete their keys; the outage test runs a
// private redis-server on a free port and stops that one.

import { createHash } from 'node:crypto';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { CLI } from '../helpers/cli';
import { startRedisServer } from '../helpers/private-redis';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { SqliteStore } from '../../src/store/sqlite';
import { freePort } from '../helpers/port';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

jest.setTimeout(120_000);

// Without Redis here, the Redis tests are skipped with a message naming what is missing, except under
// CI=true (as the interop toolkits are: .ci/run installs and starts it).
const IN_CI = /^(1|true|yes)$/i.test(process.env.CI ?? '');
const HAVE_REDIS =
  spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', '6379', 'ping'], { encoding: 'utf8' }).stdout?.trim() === 'PONG';
const HAVE_REDIS_SERVER = spawnSync('redis-server', ['--version']).status === 0;
function needs(ok: boolean, what: string): jest.It {
  if (ok || IN_CI) return test;

  console.warn(`skipped: ${what} (Debian package redis-server)`);
  return test.skip;
}

const RATE = { RATE_LIMIT: '0.001', RATE_LIMIT_BURST: '20' }; // one per 1000 s plus a burst of 20: 21 in a short run
const ONE_PROCESS_ADMITS = 21;

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-shared-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

interface Served {
  readonly url: string;
  readonly child: ChildProcessWithoutNullStreams;
  log(): string;
  stop(): Promise<void>;
}

/** `reglookup serve` as its own process; resolves once every worker is listening. */
async function serve(env: Record<string, string>, name: string): Promise<Served> {
  const port = await freePort();
  const workers = Number(env.WORKERS ?? '1');
  const child = spawn(process.execPath, [CLI, 'serve'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${path.join(dir, `${name}.db`)}`,
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not listening: ${out}`)), 60_000);
    const check = () => {
      if ((out.match(/"message":"listening"/g) ?? []).length >= workers) {
        clearTimeout(timer);
        child.stdout.off('data', check);
        resolve();
      }
    };
    child.stdout.on('data', check);
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    log: () => out,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.on('close', r));
    },
  };
}

/** One GET on a connection of its own (so that WORKERS=2 spreads them over both workers). */
function lookup(
  base: string,
  username: string,
): Promise<{ status: number; code: string | undefined; retryAfter: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(
        `${base}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=${encodeURIComponent(username)}`,
        { agent: false },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (body += d));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              code: res.headers['x-error-code'] as string | undefined,
              retryAfter: res.headers['retry-after'],
              body,
            }),
          );
        },
      )
      .on('error', reject);
  });
}

/** Sends n lookups, `parallel` at a time, spread over the servers in turn; counts those admitted. */
async function admitted(bases: string[], username: string, n: number, parallel = 4): Promise<number> {
  let ok = 0;
  for (let i = 0; i < n; i += parallel) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(parallel, n - i) }, (_, j) => lookup(bases[(i + j) % bases.length], username)),
    );
    for (const a of batch) {
      if (a.status === 200) ok++;
      else expect(a.code).toBe('RATE_LIMITED');
    }
  }
  return ok;
}

async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true });
  await redis.connect();
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
}

test('WORKERS=2 without Redis: both workers together admit what one process would, and spend credits exactly', async () => {
  const store = new SqliteStore(path.join(dir, 'workers.db'));
  await store.accounts.putAccount({ username: key('fifty'), credits: 50, rate: 0 });
  await store.close();
  const srv = await serve({ ...RATE, WORKERS: '2' }, 'workers');
  try {
    expect(await admitted([srv.url], 'shared-w', 80)).toBe(ONE_PROCESS_ADMITS);
    const answers = await Promise.all(Array.from({ length: 200 }, () => lookup(srv.url, 'fifty')));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(50);
    expect(answers.filter((a) => a.code === 'OUT_OF_CREDIT')).toHaveLength(150);
  } finally {
    await srv.stop();
  }
});

needs(HAVE_REDIS, 'no Redis answers on 127.0.0.1:6379')(
  'two server processes on one Redis: together they admit what one process would',
  async () => {
    const prefix = `reglookup-i12-test-${process.pid}-${Date.now()}:`;
    const env = { ...RATE, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX: prefix };
    const [a, b] = await Promise.all([serve(env, 'redis-a'), serve(env, 'redis-b')]);
    try {
      expect(await admitted([a.url, b.url], 'shared-r', 80)).toBe(ONE_PROCESS_ADMITS);
      // Another prefix is another limit: instances can be kept apart on one Redis.
      const c = await serve({ ...env, REDIS_PREFIX: `${prefix}other:` }, 'redis-c');
      try {
        expect((await lookup(c.url, 'shared-r')).status).toBe(200);
      } finally {
        await c.stop();
      }
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      await deleteKeys(prefix);
    }
  },
);

describe('Redis stopped during a run', () => {
  let redisPort: number;
  let redis: ChildProcessWithoutNullStreams | null = null;

  async function startRedis(): Promise<void> {
    redis = await startRedisServer(redisPort);
  }

  async function stopRedis(): Promise<void> {
    const child = redis;
    redis = null;
    if (!child || child.exitCode !== null) return;
    child.kill('SIGKILL');
    await new Promise((r) => child.on('close', r));
  }

  beforeAll(async () => {
    if (!HAVE_REDIS_SERVER && !IN_CI) return;
    redisPort = await freePort();
    await startRedis();
  });
  afterAll(() => stopRedis());

  const count = (text: string, re: RegExp) => (text.match(re) ?? []).length;

  needs(HAVE_REDIS_SERVER, 'no redis-server binary')(
    'allow serves without the limit, deny refuses with RATE_LIMITED; one log line per outage; the limit is back with Redis',
    async () => {
      const env = {
        RATE_LIMIT: '0.001',
        RATE_LIMIT_BURST: '2',
        REDIS_URL: `redis://127.0.0.1:${redisPort}`,
        REDIS_PREFIX: 'outage:',
      };
      const [allow, deny] = await Promise.all([
        serve({ ...env, RATE_LIMIT_ON_REDIS_ERROR: 'allow' }, 'allow'),
        serve({ ...env, RATE_LIMIT_ON_REDIS_ERROR: 'deny' }, 'deny'),
      ]);
      try {
        // With Redis: three lookups (one plus the burst of two), then RATE_LIMITED.
        expect(await admitted([allow.url], 'u-allow', 6, 1)).toBe(3);
        expect(await admitted([deny.url], 'u-deny', 6, 1)).toBe(3);

        await stopRedis();
        for (let i = 0; i < 10; i++) {
          expect((await lookup(allow.url, 'u-allow')).status).toBe(200);
          const refused = await lookup(deny.url, 'u-deny');
          expect(refused.status).toBe(429);
          expect(refused.code).toBe('RATE_LIMITED');
          expect(refused.retryAfter).toBe('1');
          expect(refused.body).toMatch(/cannot be checked/);
        }
        for (const srv of [allow, deny]) expect(count(srv.log(), /"message":"Redis cannot be reached/g)).toBe(1);

        await startRedis();
        // Wait for each server to reconnect (deny admits again), then the limit counts anew in the new Redis.
        const deadline = Date.now() + 30_000;
        let back = false;
        while (!back && Date.now() < deadline) {
          back = (await lookup(deny.url, 'u-deny')).status === 200;
          if (!back) await new Promise((r) => setTimeout(r, 200));
        }
        expect(back).toBe(true);
        expect(await admitted([deny.url], 'u-deny', 4, 1)).toBe(2);
        while (Date.now() < deadline && !/"message":"Redis is reachable again/.test(allow.log()))
          await new Promise((r) => setTimeout(r, 200));
        expect(await admitted([allow.url], 'u-allow', 6, 1)).toBe(3);
        for (const srv of [allow, deny]) {
          expect(count(srv.log(), /"message":"Redis cannot be reached/g)).toBe(1);
          expect(count(srv.log(), /"message":"Redis is reachable again/g)).toBe(1);
        }
      } finally {
        await Promise.all([allow.stop(), deny.stop()]);
      }
    },
  );
});
