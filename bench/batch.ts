// npm run bench:batch: batch jobs (POST /api/batch), in two parts.
//
//   npm run bench:batch                          both parts, 100,000 rows against the store
//   npm run bench:batch -- --rows 20000          fewer rows (a loaded machine)
//   npm run bench:batch -- --store-only | --upstream-only
//
// 1. Against the store: a job of N rows, every one found (SQLite, N records imported), timed from
//    POST to the end of the results CSV, with this process's RSS sampled every 250 ms through it; then
//    N single GET lookups (JSON API) by the same username at the job's concurrency (8), for rows/s
//    against rows/s. The service runs in this process, so RSS is the service's and the client's.
// 2. Against a DVSA stand-in (test/helpers/upstream-dvsa.ts) held to the DVSA's published quota (15
//    a second, a burst of 10): a job of 1,000 UKMOT rows of distinct plates, which the quota paces:
//    about 66 s, and no row refused for the quota.
// It asserts nothing about speed: the machine is shared.

import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHttpServer, createService } from '../src/app';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/ops/logger';
import { openStore } from '../src/store/open';
import { DVSA_CLIENT, startFakeDvsa } from '../test/helpers/upstream-dvsa';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
};
const ROWS = Number(arg('--rows') ?? 100_000);
const UPSTREAM_ROWS = Number(arg('--upstream-rows') ?? 1_000);
const CONCURRENCY = 8;
const log = (s: string) => process.stderr.write(`bench:batch: ${s}\n`);
const plate = (n: number) => `BB${String(n).padStart(6, '0')}`;

async function serve(env: Record<string, string>, seed?: (store: ReturnType<typeof openStore>) => Promise<void>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-bench-batch-'));
  const config = loadConfig({
    DATABASE_URL: `sqlite:${path.join(dir, 'store.db')}`,
    RATE_LIMIT: '0',
    LOG_LEVEL: 'warn',
    PORT: '0',
    SAMPLE_DATA: 'off',
    ...env,
  });
  const store = openStore(config.databaseUrl);
  if (seed) await seed(store);
  const service = await createService(config, store, createLogger('warn', 'text'));
  const server = createHttpServer(service, config);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await service.close();
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent, headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

/** The lines of a GET's body, counted as it arrives. */
function countLines(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        let n = 0;
        res.on('data', (c: Buffer) => {
          for (let i = c.indexOf(10); i !== -1; i = c.indexOf(10, i + 1)) n++;
        });
        res.on('end', () => resolve(n));
      })
      .on('error', reject);
  });
}

interface Progress {
  id: string;
  status: string;
  done: number;
  found: number;
  notFound: number;
  refused: number;
}

/** Submits the rows, waits for the end, reads the results: seconds, progress, result lines. */
async function runJob(url: string, csv: string, user: string, onPoll: () => void) {
  const t0 = performance.now();
  const res = await fetch(`${url}/api/batch?username=${user}`, {
    method: 'POST',
    headers: { 'Content-Type': 'text/csv' },
    body: csv,
  });
  if (res.status !== 202) throw new Error(`POST /api/batch answered ${res.status}: ${await res.text()}`);
  const { id } = (await res.json()) as Progress;
  let p: Progress;
  for (;;) {
    onPoll();
    const r = await get(`${url}/api/batch/${id}?username=${user}`);
    p = JSON.parse(r.body) as Progress;
    if (r.status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  // The results are counted as they stream in, not held: the RSS sampled is the service's, not this client's copy.
  const lines = await countLines(`${url}/api/batch/${id}?username=${user}&format=csv`);
  const seconds = (performance.now() - t0) / 1000;
  return { seconds, progress: p, lines: lines - 1 };
}

async function storePart(): Promise<void> {
  log(`importing ${ROWS} records`);
  const svc = await serve({}, async (store) => {
    const batch = await store.beginImport();
    for (let i = 0; i < ROWS; i++)
      await batch.put(
        {
          operation: 'Check',
          registration: plate(i),
          state: '',
          payload: JSON.stringify({ Description: `BENCH ${i}`, CarMake: { CurrentTextValue: 'FORD' } }),
        },
        true,
      );
    await batch.commit();
  });
  try {
    const csv = 'operation,registration\n' + Array.from({ length: ROWS }, (_, i) => `Check,${plate(i)}`).join('\n');
    const rss: number[] = [];
    const heldMb = () => {
      global.gc?.();
      return (process.memoryUsage().heapUsed / 1048576).toFixed(0);
    };
    const heldBefore = heldMb();
    const sampler = setInterval(() => rss.push(process.memoryUsage().rss), 250);
    const job = await runJob(svc.url, csv, 'bench', () => undefined);
    clearInterval(sampler);
    // With --expose-gc (the npm script passes it): the heap still held once the job is done, against before it.
    if (global.gc) log(`heap held after a full GC: ${heldBefore} MB before the job, ${heldMb()} MB after it`);
    const mb = (b: number) => (b / 1048576).toFixed(0);
    const tenth = Math.max(1, Math.floor(rss.length / 10));
    log(
      `job: ${ROWS} rows in ${job.seconds.toFixed(1)} s = ${(ROWS / job.seconds).toFixed(0)} rows/s; ` +
        `${job.progress.found} found, ${job.lines} result rows; RSS MB, ${rss.length} samples, at each tenth: ` +
        rss
          .filter((_, i) => i % tenth === 0)
          .map(mb)
          .join(' '),
    );
    const t0 = performance.now();
    let next = 0;
    let bad = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < ROWS) {
          const r = await get(`${svc.url}/api/json.aspx/Check/${plate(next++)}?username=bench`);
          if (r.status !== 200) bad++;
        }
      }),
    );
    const s = (performance.now() - t0) / 1000;
    log(`single GET lookups: ${ROWS} in ${s.toFixed(1)} s = ${(ROWS / s).toFixed(0)} rows/s (${bad} not 200)`);
    log(`job rows/s as a share of single lookups' at concurrency ${CONCURRENCY}: ${(s / job.seconds).toFixed(2)}`);
  } finally {
    await svc.close();
  }
}

async function upstreamPart(): Promise<void> {
  const fake = await startFakeDvsa();
  const svc = await serve({
    PROVIDERS: 'dvsa',
    DVSA_URL: fake.apiUrl,
    DVSA_TOKEN_URL: fake.tokenUrl,
    DVSA_CLIENT_ID: DVSA_CLIENT.clientId,
    DVSA_CLIENT_SECRET: DVSA_CLIENT.clientSecret,
    DVSA_SCOPE: DVSA_CLIENT.scope,
    DVSA_API_KEY: DVSA_CLIENT.apiKey,
  });
  try {
    const rows = Array.from({ length: UPSTREAM_ROWS }, (_, i) => `UKMOT,QB${String(i).padStart(4, '0')}XYZ`);
    log(`upstream: ${UPSTREAM_ROWS} UKMOT rows against the DVSA stand-in (15/s, burst 10)`);
    const job = await runJob(svc.url, 'operation,registration\n' + rows.join('\n'), 'bench', () => undefined);
    const p = job.progress;
    log(
      `upstream job: ${job.seconds.toFixed(1)} s; ${p.found} found, ${p.notFound} not found, ${p.refused} refused; ` +
        `${fake.motRequests} calls to the stand-in`,
    );
  } finally {
    await svc.close();
    await fake.close();
  }
}

async function main(): Promise<void> {
  if (!process.argv.includes('--upstream-only')) await storePart();
  if (!process.argv.includes('--store-only')) await upstreamPart();
  agent.destroy();
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:batch failed: ${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
