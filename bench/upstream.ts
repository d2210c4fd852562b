// npm run bench:upstream: the upstream chain under a Zipf (s = 1) mix over 100,000 plates, against a
// local DVLA-format upstream that adds 50 ms to every answer.
//
//   npm run bench:upstream               20,000 lookups in the mix; writes bench/UPSTREAM.md
//   npm run bench:upstream -- --short    3,000 lookups, printed only
//
// Reports: the hit ratio and upstream calls per 1,000 lookups; p50/p99 of hits and of misses; the
// throughput of cache hits as a share of plain store lookups in the same run (the same client, the
// same concurrency, alternated); then, with the upstream stopped, the share of cached plates still
// served and how long uncached ones take to be refused (held to UPSTREAM_TIMEOUT_MS).
// The service runs as its own process (the compiled dist/, as `npm start` runs it); the upstream
// and the client share this one. It asserts nothing about speed: the machine is shared.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');
const SHORT = process.argv.includes('--short');
const PLATES = 100_000;
const LOOKUPS = SHORT ? 3_000 : 20_000;
const STORE_PLATES = 10_000;
const THROUGHPUT_LOOKUPS = SHORT ? 2_000 : 10_000;
const CONCURRENCY = 32;
const UPSTREAM_DELAY_MS = 50;
const TIMEOUT_MS = 2_000;
const API_KEY = 'bench-key';

const log = (s: string) => process.stderr.write(`bench:upstream: ${s}\n`);
const plate = (n: number) => `UP${String(n).padStart(6, '0')}`;

/** Ranks 1..n drawn with P(k) proportional to 1/k (Zipf, s = 1), by inverse CDF. */
function zipf(n: number): () => number {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let k = 1; k <= n; k++) cdf[k - 1] = sum += 1 / k;
  return () => {
    const u = Math.random() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return lo + 1;
  };
}

function fakeUpstream(): Promise<{ server: http.Server; url: string; calls: () => number }> {
  let calls = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      calls++;
      const reg = (JSON.parse(body) as { registrationNumber: string }).registrationNumber;
      const record = {
        registrationNumber: reg,
        make: 'FORD',
        colour: 'RED',
        fuelType: 'PETROL',
        engineCapacity: 1600,
        yearOfManufacture: 2019,
        monthOfFirstRegistration: '2019-03',
        taxStatus: 'Taxed',
        motStatus: 'Valid',
      };
      setTimeout(
        () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(record)),
        UPSTREAM_DELAY_MS,
      );
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls: () => calls }),
    ),
  );
}

async function startService(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'cli.js'), 'serve'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (c: Buffer) => {
      out += c.toString();
      const m =
        /"message":"listening"[^\n]*?:(\d+)\/api\/reg\.asmx/.exec(out) ??
        /:(\d+)\/api\/reg\.asmx[^\n]*"message":"listening"/.exec(out);
      if (!m) return;
      // From here on its output (the access log) is read and dropped.
      child.stdout.off('data', onData);
      child.stdout.resume();
      resolve(`http://127.0.0.1:${m[1]}`);
    };
    child.stdout.on('data', onData);
    child.on('exit', (code) => reject(new Error(`the service exited (${code}): ${out.slice(-500)}`)));
  });
  return { child, url };
}

interface Timed {
  readonly ms: number;
  readonly status: number;
}

/** Runs `plates` as lookups, CONCURRENCY at a time; each answer timed. */
async function run(base: string, plates: readonly string[]): Promise<{ results: Timed[]; seconds: number }> {
  const results: Timed[] = new Array<Timed>(plates.length);
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < plates.length) {
        const i = next++;
        const t = performance.now();
        const res = await fetch(`${base}/api/reg.asmx/Check?RegistrationNumber=${plates[i]}&username=bench`);
        await res.arrayBuffer();
        results[i] = { ms: performance.now() - t, status: res.status };
      }
    }),
  );
  return { results, seconds: (performance.now() - t0) / 1000 };
}

function pct(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

const ms = (v: number) => `${v.toFixed(1)} ms`;

async function main(): Promise<void> {
  if (!fs.existsSync(path.join(ROOT, 'dist', 'cli.js'))) throw new Error('dist/ is missing: run npm run build first');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-bench-upstream-'));
  const db = `sqlite:${path.join(dir, 'store.db')}`;
  const upstream = await fakeUpstream();
  const lines = Array.from({ length: STORE_PLATES }, (_, i) =>
    JSON.stringify({
      operation: 'Check',
      registration: `ST${String(i).padStart(6, '0')}`,
      vehicle: { Description: 'STORED FORD 1600cc', CarMake: { CurrentTextValue: 'FORD' } },
    }),
  );
  fs.writeFileSync(path.join(dir, 'store.ndjson'), lines.join('\n') + '\n');
  const imp = spawnSync(
    process.execPath,
    [path.join(ROOT, 'dist', 'cli.js'), 'import', '-q', path.join(dir, 'store.ndjson')],
    { env: { ...process.env, DATABASE_URL: db }, encoding: 'utf8' },
  );
  if (imp.status !== 0) throw new Error(`import failed: ${imp.stderr}`);
  const svc = await startService({
    DATABASE_URL: db,
    PORT: '0',
    HOST: '127.0.0.1',
    RATE_LIMIT: '0',
    SAMPLE_DATA: 'false',
    PROVIDERS: 'store,dvla',
    DVLA_URL: upstream.url,
    DVLA_API_KEY: API_KEY,
    UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS),
    UPSTREAM_CONCURRENCY: '64',
    LOG_LEVEL: 'info',
  });
  try {
    // 1. The Zipf mix: a lookup of a plate not asked before is a miss (concurrent repeats of it share its call).
    const draw = zipf(PLATES);
    const mix = Array.from({ length: LOOKUPS }, () => plate(draw()));
    const seen = new Set<string>();
    const firstAsk = mix.map((p) => !seen.has(p) && !!seen.add(p));
    log(`Zipf mix: ${LOOKUPS} lookups over ${PLATES} plates, ${seen.size} distinct, concurrency ${CONCURRENCY}`);
    const { results } = await run(svc.url, mix);
    const bad = results.filter((r) => r.status !== 200).length;
    const hits = results.filter((_, i) => !firstAsk[i]).map((r) => r.ms);
    const misses = results.filter((_, i) => firstAsk[i]).map((r) => r.ms);
    const calls = upstream.calls();

    // 2. Throughput: cached plates against stored plates, alternated, best of two each.
    const cached = [...seen];
    const pickFrom = (list: readonly string[]) =>
      Array.from({ length: THROUGHPUT_LOOKUPS }, () => list[Math.floor(Math.random() * list.length)]);
    const stored = lines.map((_, i) => `ST${String(i).padStart(6, '0')}`);
    const rates = { cache: 0, store: 0 };
    for (let round = 0; round < 2; round++) {
      for (const kind of ['store', 'cache'] as const) {
        const r = await run(svc.url, pickFrom(kind === 'cache' ? cached : stored));
        rates[kind] = Math.max(rates[kind], THROUGHPUT_LOOKUPS / r.seconds);
      }
    }
    const callsAfterThroughput = upstream.calls();

    // 3. The upstream stopped: cached plates still served, uncached ones refused within the time-out.
    upstream.server.closeAllConnections();
    await new Promise<void>((resolve) => upstream.server.close(() => resolve()));
    const down = await run(svc.url, pickFrom(cached));
    const servedDown = down.results.filter((r) => r.status === 200).length / down.results.length;
    const uncached = Array.from({ length: 200 }, (_, i) => `NEW${String(i).padStart(5, '0')}`);
    const refused = await run(svc.url, uncached);
    const refusedOk = refused.results.filter((r) => r.status === 503).length;
    const refusedMax = Math.max(...refused.results.map((r) => r.ms));

    const report = [
      `# Upstream chain (npm run bench:upstream${SHORT ? ' -- --short' : ''})`,
      '',
      `${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} CPU(s) (${os.cpus()[0]?.model ?? '?'}), Node ${process.version}. Zipf s = 1 over ${PLATES} plates; upstream adds ${UPSTREAM_DELAY_MS} ms; concurrency ${CONCURRENCY}; SQLite store.`,
      '',
      '| Measure | Value |',
      '|---|---|',
      `| lookups in the mix | ${LOOKUPS} (${seen.size} distinct plates; ${bad} not answered 200) |`,
      `| hit ratio | ${((1 - calls / LOOKUPS) * 100).toFixed(1)} % |`,
      `| upstream calls per 1,000 lookups | ${((calls / LOOKUPS) * 1000).toFixed(1)} (${calls} calls for ${seen.size} distinct plates) |`,
      `| hits p50 / p99 | ${ms(pct(hits, 50))} / ${ms(pct(hits, 99))} |`,
      `| misses p50 / p99 | ${ms(pct(misses, 50))} / ${ms(pct(misses, 99))} |`,
      `| cache-hit throughput | ${rates.cache.toFixed(0)} lookups/s |`,
      `| store-lookup throughput (same run) | ${rates.store.toFixed(0)} lookups/s |`,
      `| cache hits as a share of store lookups | ${((rates.cache / rates.store) * 100).toFixed(1)} % (target >= 90 %) |`,
      `| upstream calls during the throughput runs | ${callsAfterThroughput - calls} |`,
      `| upstream down: cached plates served | ${(servedDown * 100).toFixed(1)} % of ${down.results.length} (target >= 90 %) |`,
      `| upstream down: uncached plates refused 503 | ${refusedOk} of ${uncached.length}, slowest ${ms(refusedMax)} (UPSTREAM_TIMEOUT_MS ${TIMEOUT_MS}) |`,
      '',
    ].join('\n');
    process.stdout.write(report);
    if (!SHORT) fs.writeFileSync(path.join(ROOT, 'bench', 'UPSTREAM.md'), report);
  } finally {
    svc.child.kill('SIGTERM');
    await new Promise((r) => svc.child.once('exit', r));
    if (upstream.server.listening) upstream.server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:upstream: ${String((e as Error)?.stack ?? e)}\n`);
  process.exit(1);
});
