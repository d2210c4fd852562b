// npm run bench:capacity: what one lookup costs each part of a scaled-out deployment, measured on
// this machine (the capacity plan in docs/scaling.md is built from it). It starts a private
// PostgreSQL primary and a streaming replica (test/helpers/private-postgres.ts), a private Redis,
// and one service instance with DATABASE_READ_URL and REDIS_URL; loads it with GET Check as a
// metered username (every lookup charged) and as an unmetered one; and reports per lookup the CPU
// time of the instance, the primary, the replica and Redis, the transactions each database
// committed, and the Redis commands.
//   CAPACITY_SECONDS (default 10), CAPACITY_CONNECTIONS (default 50).

import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import pg from 'pg';
import { Redis } from 'ioredis';
import { importStream } from '../src/data/import';
import { PostgresStore } from '../src/store/postgres';
import { freePort } from '../test/helpers/port';
import { privatePrimaryAndReplica } from '../test/helpers/private-postgres';
import { startRedisServer } from '../test/helpers/private-redis';
import { cpuSeconds } from './proc';

const ROOT = path.resolve(__dirname, '..');
const SECONDS = Number(process.env.CAPACITY_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.CAPACITY_CONNECTIONS ?? 50);
const RECORDS = 20_000;

const postmaster = (data: string) => Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);

async function commits(url: string): Promise<number> {
  const c = new pg.Client(url);
  await c.connect();
  try {
    return Number(
      (await c.query<{ n: string }>("SELECT xact_commit AS n FROM pg_stat_database WHERE datname = 'postgres'")).rows[0]
        .n,
    );
  } finally {
    await c.end();
  }
}

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-capacity-'));
  const { primary, replica } = await privatePrimaryAndReplica();
  const redisPort = await freePort();
  const redisServer = await startRedisServer(redisPort);
  const redis = new Redis(`redis://127.0.0.1:${redisPort}`);
  let service: ChildProcess | null = null;
  try {
    const store = new PostgresStore(primary.url, { statementTimeoutMs: 0 });
    const regs = Array.from({ length: RECORDS }, (_, i) => `CAP${i}`);
    await importStream(
      store,
      Readable.from(
        regs.map(
          (r) =>
            JSON.stringify({
              operation: 'Check',
              registration: r,
              vehicle: { Description: `capacity ${r}`, RegistrationYear: '2020' },
            }) + '\n',
        ),
      ),
    );
    await store.accounts.putAccount({ username: 'metered', credits: 1_000_000_000 });
    await store.close();
    const regsFile = path.join(work, 'regs.json');
    fs.writeFileSync(regsFile, JSON.stringify({ Check: regs, UKMOT: regs }));

    const port = await freePort();
    service = spawn(process.execPath, ['--max-semi-space-size=8', path.join(ROOT, 'dist', 'cli.js'), 'serve'], {
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: primary.url,
        DATABASE_READ_URL: replica.url,
        REDIS_URL: `redis://127.0.0.1:${redisPort}`,
        RATE_LIMIT: '1000000',
        SAMPLE_DATA: 'false',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      const ok = await fetch(`${base}/readyz`)
        .then(async (r) => ((await r.json()) as { checks?: Record<string, string> }).checks?.replicas === 'ok')
        .catch(() => false);
      if (ok) break;
      if (i > 300) throw new Error('the service did not become ready with its replica in use');
      await new Promise((r) => setTimeout(r, 100));
    }

    const run = async (username: string, seconds: number) => {
      const spec = { url: base, scenario: 'GET Check', seconds, connections: CONNECTIONS, regsFile, username };
      const before = {
        svc: cpuSeconds(service!.pid!),
        pri: cpuSeconds(postmaster(primary.data)),
        rep: cpuSeconds(postmaster(replica.data)),
        red: cpuSeconds(redisServer.pid!),
        priTx: await commits(primary.url),
        repTx: await commits(replica.url),
        redisOps: Number(/total_commands_processed:(\d+)/.exec(await redis.info('stats'))?.[1]),
      };
      const child = spawn(
        process.execPath,
        ['-r', 'ts-node/register/transpile-only', path.join(ROOT, 'bench', 'load.ts'), JSON.stringify(spec)],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      await new Promise((r) => child.on('exit', r));
      const r = JSON.parse(out.trim().split('\n').pop() as string) as {
        requests: { average: number; total: number };
        latency: { p99: number };
        non2xx: number;
        errors: number;
      };
      const n = r.requests.total;
      const per = (a: number, b: number) => ((a - b) * 1e6) / n;
      return {
        username,
        rps: r.requests.average,
        p99: r.latency.p99,
        failed: r.non2xx + r.errors,
        svcUs: per(cpuSeconds(service!.pid!), before.svc),
        priUs: per(cpuSeconds(postmaster(primary.data)), before.pri),
        repUs: per(cpuSeconds(postmaster(replica.data)), before.rep),
        redUs: per(cpuSeconds(redisServer.pid!), before.red),
        priTx: ((await commits(primary.url)) - before.priTx) / n,
        repTx: ((await commits(replica.url)) - before.repTx) / n,
        redisOps: (Number(/total_commands_processed:(\d+)/.exec(await redis.info('stats'))?.[1]) - before.redisOps) / n,
      };
    };
    await run('metered', 3);
    await run('bench', 3);
    const rows = [];
    for (const user of ['bench', 'metered', 'bench', 'metered']) rows.push(await run(user, SECONDS));
    const lines = [
      `## Cost per lookup (${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores, ${os.loadavg()[0].toFixed(1)} load average at the end; one instance, DATABASE_READ_URL and REDIS_URL set; GET Check, ${CONNECTIONS} connections, ${SECONDS} s a run)`,
      '',
      '| username | req/s | p99 ms | instance CPU us | primary CPU us | replica CPU us | Redis CPU us | primary commits | replica commits | Redis commands | failed |',
      '|---|---|---|---|---|---|---|---|---|---|---|',
      ...rows.map(
        (r) =>
          `| ${r.username === 'bench' ? 'unmetered' : 'metered'} | ${Math.round(r.rps)} | ${r.p99} | ${Math.round(r.svcUs)} | ${Math.round(r.priUs)} | ${Math.round(r.repUs)} | ${Math.round(r.redUs)} | ${r.priTx.toFixed(3)} | ${r.repTx.toFixed(3)} | ${r.redisOps.toFixed(2)} | ${r.failed} |`,
      ),
      '',
      'Reproduce with `npm run bench:capacity`. Commits are transactions per lookup (pg_stat_database.xact_commit, which counts read-only statements too); CPU is user + system time of each server and its children.',
    ];
    process.stdout.write(lines.join('\n') + '\n');
    fs.writeFileSync(
      path.join(ROOT, 'bench', 'CAPACITY.md'),
      `# Capacity: what one lookup costs\n\n${lines.join('\n')}\n`,
    );
  } finally {
    service?.kill('SIGTERM');
    redis.disconnect();
    redisServer.kill('SIGTERM');
    replica.destroy();
    primary.destroy();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`bench:capacity: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
