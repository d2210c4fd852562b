// The series the alerts watch that the service did not expose before issue 46 (docs/operating.md,
// Metrics and Alerts): Redis failing and back (reglookup_redis_up), the last import's result kept in
// the store for every instance (reglookup_last_import_success), and a restart, of the process or of
// one of its WORKERS (reglookup_start_time_seconds). The read replicas' gauge is checked where a real
// streaming replica falls behind and goes away: test/store/replicas.test.ts.

import { createHash } from 'node:crypto';
import { execFileSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startRedisServer } from '../helpers/private-redis';
import { LISTENING, startCli, serveCli } from '../helpers/cli';
import { startServer, type TestServer } from '../helpers/server';
import { freePort } from '../helpers/port';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

jest.setTimeout(120_000);

/** A GET on a fresh connection (a cluster's workers each take some). */
function getFresh(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
}

/** One unlabelled series' value in a scrape, or undefined when it has no sample. */
async function valueOf(base: string, name: string): Promise<number | undefined> {
  const text = await getFresh(`${base}/metrics`);
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

async function until(what: string, ok: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('reglookup_redis_up', () => {
  let redis: ChildProcessWithoutNullStreams | null = null;
  let srv: TestServer | null = null;
  afterEach(async () => {
    await srv?.close();
    redis?.kill('SIGKILL');
    srv = redis = null;
  });

  test('no sample without REDIS_URL: nothing to alert on', async () => {
    srv = await startServer();
    const text = await getFresh(`${srv.url}/metrics`);
    expect(text).toMatch(/^# TYPE reglookup_redis_up gauge$/m);
    expect(text).not.toMatch(/^reglookup_redis_up /m);
  });

  test('1 while Redis answers, 0 once a lookup finds it gone, 1 again when it is back', async () => {
    const port = await freePort();
    redis = await startRedisServer(port);
    srv = await startServer({ REDIS_URL: `redis://127.0.0.1:${port}`, RATE_LIMIT: '100', REDIS_PREFIX: 'i46-up:' });
    const lookup = () => fetch(`${srv!.url}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=redis-up`);
    expect((await lookup()).status).toBe(200);
    expect(await valueOf(srv.url, 'reglookup_redis_up')).toBe(1);

    redis.kill('SIGKILL');
    await new Promise((r) => redis!.once('exit', r));
    // RATE_LIMIT_ON_REDIS_ERROR=allow: the lookup is still answered, without its limit.
    expect((await lookup()).status).toBe(200);
    await until('the gauge at 0', async () => (await valueOf(srv!.url, 'reglookup_redis_up')) === 0);

    redis = await startRedisServer(port);
    await until('the gauge back at 1', async () => (await valueOf(srv!.url, 'reglookup_redis_up')) === 1);
  });
});

describe('reglookup_last_import_success and reglookup_last_import_timestamp_seconds', () => {
  let dir: string;
  let srv: TestServer | null = null;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-last-import-'));
  });
  afterAll(async () => {
    await srv?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('an import run by another process, failed then committed, is reported by the serving instance', async () => {
    const env = { DATABASE_URL: `sqlite:${path.join(dir, 'store.db')}` };
    const good = path.join(dir, 'good.ndjson');
    const bad = path.join(dir, 'bad.ndjson');
    fs.writeFileSync(good, JSON.stringify({ operation: 'Check', registration: 'LI11AAA', vehicle: {} }) + '\n');
    // docs/data.md: a line that is not JSON fails the whole import, and nothing is imported.
    fs.writeFileSync(bad, `${fs.readFileSync(good, 'utf8')}not json\n`);

    srv = await startServer(env, { sample: false });
    // Nothing imported yet (the sample data, loaded at a first start, is not an operator's import).
    expect(await valueOf(srv.url, 'reglookup_last_import_success')).toBeUndefined();

    const before = Date.now() / 1000;
    const failed = startCli(['import', bad], env);
    expect(await failed.exited).toBe(1);
    const after = Date.now() / 1000;
    await until('the failure reported', async () => (await valueOf(srv!.url, 'reglookup_last_import_success')) === 0);
    const at = (await valueOf(srv.url, 'reglookup_last_import_timestamp_seconds')) as number;
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(after);

    expect(await startCli(['import', '--dry-run', good], env).exited).toBe(0);
    expect(await startCli(['import', good], env).exited).toBe(0);
    await until('the commit reported', async () => (await valueOf(srv!.url, 'reglookup_last_import_success')) === 1);
  });

  test('a file that cannot be read is a failed import too', async () => {
    const env = { DATABASE_URL: `sqlite:${path.join(dir, 'store.db')}` };
    const run = startCli(['import', path.join(dir, 'missing.ndjson')], env);
    expect(await run.exited).not.toBe(0);
    await until('the failure reported', async () => (await valueOf(srv!.url, 'reglookup_last_import_success')) === 0);
  });
});

describe('reglookup_credits_spent_total (the dashboard counts credits spent an hour from it)', () => {
  let srv: TestServer | null = null;
  afterAll(() => srv?.close());

  test('one per lookup that found its record, by a caller with credits; none for a miss or an unmetered caller', async () => {
    srv = await startServer();
    await srv.store.accounts.putAccount({ username: key('payer'), credits: 5 });
    const lookup = (reg: string, username: string) =>
      fetch(`${srv!.url}/api/reg.asmx/Check?RegistrationNumber=${reg}&username=${username}`);
    const before = (await valueOf(srv.url, 'reglookup_credits_spent_total')) ?? 0;
    for (let i = 0; i < 3; i++) expect((await lookup('RG11ABC', 'payer')).status).toBe(200);
    expect((await lookup('ZZ99ZZZ', 'payer')).status).toBe(404);
    expect((await lookup('RG11ABC', 'free-for-all')).status).toBe(200);
    expect(await valueOf(srv.url, 'reglookup_credits_spent_total')).toBe(before + 3);
    expect((await srv.store.accounts.getAccount(key('payer')))?.credits).toBe(2);
  });
});

describe('reglookup_start_time_seconds', () => {
  test('WORKERS=2: a worker the primary replaces moves it forward, as a restart of the process would', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-start-'));
    const t0 = Math.floor(Date.now() / 1000);
    const { run, url } = await serveCli({ WORKERS: '2', DATABASE_URL: `sqlite:${path.join(dir, 'reg.db')}` });
    try {
      await run.waitFor(LISTENING, 2);
      const first = (await valueOf(url, 'reglookup_start_time_seconds')) as number;
      expect(first).toBeGreaterThanOrEqual(t0 - 1);
      expect(first).toBeLessThanOrEqual(Date.now() / 1000 + 1);
      // The gauge has whole seconds: the replacement starts in a later one.
      await new Promise((r) => setTimeout(r, 1500));
      const workers = execFileSync('pgrep', ['-P', String(run.child.pid)], { encoding: 'utf8' })
        .trim()
        .split('\n');
      expect(workers).toHaveLength(2);
      process.kill(Number(workers[0]), 'SIGKILL');
      await run.waitFor(LISTENING, 3);
      await until(
        'a later start time',
        async () => ((await valueOf(url, 'reglookup_start_time_seconds')) as number) > first,
      );
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
