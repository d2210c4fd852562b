// npm run bench: the service against its physical limit (a bare node:http server) and its ceiling
// (a bare Express app), both replaying the service's own answers, measured in the same rounds.
//
//   npm run bench                  full run: 5 rounds x 4 s per scenario and target, fixed-rate tails (with the
// baselines' beside them),
//                                  a 60 s memory soak, WORKERS=2 vs 1; writes bench/RESULTS.md
//   npm run bench -- --short       about 35 s: one short round and 2 s at a fixed rate, printed only (CI); then the
//                                  --against comparison, briefly, with the newest release tag (or a line saying there
// is none)
//   npm run bench -- --against REF builds REF (a commit, tag or branch) in a git worktree of its own under the
// temporary
//                                  folder (kept for the next run), imports the same generated records with REF's own
//                                  import, and runs both builds and bare Express in interleaved rounds (BENCH_ROUNDS,
//                                  default 3): req/s, CPU us a request, p99 and peak RSS side by side with the ratios.
//                                  BENCH_HERE_ENV='METRICS=off LOG_LEVEL=warn' sets variables for the working tree's
//                                  service only: with --against HEAD, what a feature costs a request (bench/PROFILE.md)
//   npm run bench -- --profile     CPU profile of the service under each scenario, top frames printed
//   npm run bench -- --prepare     only generate the bench store (bench/.work/)
//   npm run bench -- --store postgres
//                                  also serve the same records from PostgreSQL (BENCH_DATABASE_URL, default
//                                  postgres://root@127.0.0.1:5432/test; kept in schema reglookup_bench_N for the next
//                                  run), each transport as a share of the SQLite service and of bare Express in the
// same
//                                  rounds, and the tails at 1,000 requests/s; writes bench/RESULTS-postgres.md
//   npm run bench -- --metered     metered against unmetered lookups (GET Check, one username with credits against one
//                                  without an account, interleaved rounds): SQLite with one instance, PostgreSQL
//                                  (BENCH_DATABASE_URL) with BENCH_INSTANCES instances (default 1,2; e.g. 1,2,4), each
//                                  instance loaded at once; and the p99 of metered lookups at 1,000 requests/s; then
//                                  every transport's Check with one instance of each store (at most 3 rounds).
//                                  Writes bench/RESULTS-metered.md. The full run prints these rows too.
//   npm run bench -- --metered --against REF
//                                  the PostgreSQL rows only (BENCH_INSTANCES, default 2,4), the working tree's
//                                  instances and REF's in interleaved rounds, each build on a schema of its own
//                                  imported by its own build: what a change to metered lookups across instances buys
//   npm run bench -- --quick       the throughput rounds only, printed, RESULTS.md untouched (for
//                                  trying a change; BENCH_SCENARIOS="GET Check,SOAP 1.1 Check" narrows it,
//                                  BENCH_HOT=1000 draws registrations from only the first 1,000)
//
// It asserts nothing about speed; it exits non-zero only if a request failed.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import pg from 'pg';
import { importStream } from '../src/data/import';
import { PostgresStore } from '../src/store/postgres';
import { SqliteStore } from '../src/store/sqlite';
import { comparisonTable, parseBenchArgs, parseEnvList, previousReleaseTag, type Samples } from './compare';
import { cpuSeconds } from './proc';

const ROOT = path.resolve(__dirname, '..');
const WORK = path.join(ROOT, 'bench', '.work');
const TS = ['-r', 'ts-node/register/transpile-only'];
const ALL_SCENARIOS = ['GET Check', 'POST Check', 'SOAP 1.1 Check', 'SOAP 1.2 Check', 'SOAP 1.1 UKMOT'] as const;
type Scenario = (typeof ALL_SCENARIOS)[number];

const ARGS = parseBenchArgs(process.argv.slice(2));
const SHORT = ARGS.short;
const PROFILE = ARGS.profile;
const PREPARE_ONLY = ARGS.prepareOnly;
const QUICK = ARGS.quick;
const METERED = ARGS.metered;
// --store postgres (or --store=postgres): the PostgreSQL store beside the SQLite one.
const STORE = ARGS.store;
const PG = STORE === 'postgres';
// BENCH_HOT=N: draw registrations from only N of them, to see the service with its store reads cached.
const HOT = process.env.BENCH_HOT ? Number(process.env.BENCH_HOT) : undefined;
const SCENARIOS: readonly Scenario[] = (() => {
  const wanted = process.env.BENCH_SCENARIOS?.split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  if (!wanted) return ALL_SCENARIOS;
  const unknown = wanted.filter((w) => !(ALL_SCENARIOS as readonly string[]).includes(w));
  if (unknown.length)
    throw new Error(`BENCH_SCENARIOS: unknown scenario(s) ${unknown.join(', ')}; known: ${ALL_SCENARIOS.join(', ')}`);
  return ALL_SCENARIOS.filter((s) => wanted.includes(s));
})();
const VEHICLES = SHORT ? 20_000 : 100_000;
const MOTS = SHORT ? 2_000 : 10_000;
const SECONDS = SHORT ? 1 : Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = SHORT ? 1 : Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = 50;
// The service runs with the Node flags `npm start` gives it, read from package.json so the two agree
// (from the other build's own package.json under --against).
function startFlags(root: string): string[] {
  const start = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } })
    .scripts.start;
  const m = /^(?:exec )?node((?: --?[\w-]+(?:=\S+)?)*) (?:dist\/cli\.js|bin\/reglookup\.js) serve$/.exec(start);
  if (!m) throw new Error(`bench: cannot read the node flags from the start script '${start}'`);
  return m[1].trim().split(/\s+/).filter(Boolean);
}
const START_FLAGS = startFlags(ROOT);

// ---------------------------------------------------------------- data

function plate(i: number): string {
  const L = 'ABCDEFGHJKLMNPRSTUVWXYZ';
  const a = L[i % 23] + L[Math.floor(i / 23) % 23];
  const d = String(Math.floor(i / 529) % 100).padStart(2, '0');
  const b = L[Math.floor(i / 52900) % 23] + L[(i * 7) % 23] + L[(i * 13) % 23];
  return `${a}${d} ${b}`;
}

function vehicle(i: number): Record<string, unknown> {
  const makes = ['FORD', 'VAUXHALL', 'VOLKSWAGEN', 'TOYOTA', 'BMW', 'AUDI', 'NISSAN', 'PEUGEOT'];
  const make = makes[i % makes.length];
  const year = 2000 + (i % 25);
  return {
    ABICode: String(30000000 + i),
    Description: `${make} MODEL ${i % 97} 1.${i % 9}L (bench)`,
    RegistrationYear: String(year),
    ManufactureYearFrom: year - 1,
    ManufactureYearTo: year + 5,
    CarMake: { CurrentTextValue: make },
    CarModel: { CurrentTextValue: `MODEL ${i % 97}` },
    BodyStyle: { CurrentValue: null, CurrentTextValue: 'Hatchback' },
    EngineSize: { CurrentValue: 1000 + (i % 2000), CurrentTextValue: `${1000 + (i % 2000)}cc` },
    NumberOfDoors: { CurrentValue: 5, CurrentTextValue: '5' },
    Transmission: { CurrentValue: null, CurrentTextValue: i % 3 ? 'Manual' : 'Automatic' },
    FuelType: { CurrentValue: null, CurrentTextValue: i % 2 ? 'Petrol' : 'Diesel' },
    MakeDescription: { CurrentValue: null, CurrentTextValue: make },
    ModelDescription: { CurrentValue: null, CurrentTextValue: `MODEL ${i % 97}` },
    Immobiliser: { CurrentTextValue: 'Fitted' },
    NumberOfSeats: { CurrentValue: 5, CurrentTextValue: '5' },
    IndicativeValue: { CurrentTextValue: String(2000 + (i % 30000)) },
    DriverSide: { CurrentTextValue: 'RHD' },
    Colour: 'Grey',
    VehicleIdentificationNumber: `BENCH${String(i).padStart(12, '0')}`,
    ImageUrl: `http://localhost/image.aspx/@${Buffer.from(make).toString('base64')}`,
  };
}

function* records(): Generator<string> {
  for (let i = 0; i < VEHICLES; i++)
    yield JSON.stringify({ operation: 'Check', registration: plate(i), vehicle: vehicle(i) }) + '\n';
  for (let i = 0; i < MOTS; i++) {
    yield (
      JSON.stringify({
        operation: 'UKMOT',
        registration: plate(i),
        mot: {
          make: 'FORD',
          model: 'FOCUS',
          taxDate: '2026-09-01',
          tests: [0, 1, 2].map((k) => ({
            TestDate: `202${5 - k}-08-20`,
            ExpiryDate: `202${6 - k}-08-19`,
            Result: k === 1 ? 'Fail' : 'Pass',
            Odometer: String(60000 - k * 9000),
            TestNumber: String(100000000000 + i * 3 + k),
            FailureReasons: k === 1 ? ['Brake pipe corroded'] : [],
            Advisories: ['Tyre worn close to limit'],
          })),
          extendedInformation: [
            ['Colour', 'Grey'],
            ['Fuel type', 'Petrol'],
          ],
        },
      }) + '\n'
    );
  }
}

async function prepareStore(): Promise<{ db: string; regsFile: string }> {
  fs.mkdirSync(WORK, { recursive: true });
  const db = path.join(WORK, `bench-${VEHICLES}.db`);
  const regsFile = path.join(WORK, `regs-${VEHICLES}.json`);
  const store = new SqliteStore(db);
  const have = await store.count();
  if (have !== VEHICLES + MOTS) {
    const t = Date.now();
    const report = await importStream(store, Readable.from(records()));
    if (!report.committed) throw new Error(`bench data invalid: ${JSON.stringify(report.errors[0])}`);
    log(`generated ${report.imported} records in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  }
  await store.close();
  const regs = {
    Check: Array.from({ length: VEHICLES }, (_, i) => plate(i)),
    UKMOT: Array.from({ length: MOTS }, (_, i) => plate(i)),
  };
  fs.writeFileSync(regsFile, JSON.stringify(regs));
  return { db, regsFile };
}

/** The same records in PostgreSQL, imported through the store's COPY path unless already there. */
async function preparePostgres(schema = `reglookup_bench_${VEHICLES}`): Promise<string> {
  const u = new URL(process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test');
  u.searchParams.set('schema', schema);
  const url = u.toString();
  const store = new PostgresStore(url, { statementTimeoutMs: 0 });
  if ((await store.count()) !== VEHICLES + MOTS) {
    const t = Date.now();
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 100);
    const report = await importStream(store, Readable.from(records()));
    clearInterval(sampler);
    if (!report.committed) throw new Error(`bench data invalid: ${JSON.stringify(report.errors[0])}`);
    const s = (Date.now() - t) / 1000;
    log(
      `PostgreSQL: imported ${report.imported} records in ${s.toFixed(1)} s (${Math.round(report.imported / s)} records/s; bench process peak RSS ${Math.round(peak / 2 ** 20)} MB)`,
    );
  }
  await store.close();
  return url;
}

// ---------------------------------------------------------------- processes

function log(s: string): void {
  process.stderr.write(`bench: ${s}\n`);
}

interface Running {
  readonly child: ChildProcess;
  readonly url: string;
  readonly startMs: number;
  /** The service's own time per request (ms, from its access log), gathered while this is an array. */
  ownMs?: number[] | null;
}

function waitFor(child: ChildProcess, re: RegExp, what: string): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not start: ${out.slice(-500)}`)), 30000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = re.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        resolve(m);
      }
    };
    child.stdout?.on('data', onData);
    child.on('exit', (code) => reject(new Error(`${what} exited with ${code}: ${out.slice(-500)}`)));
  });
}

/**
 * Every request is sent as one username, far faster than the default RATE_LIMIT admits: the limit is
 * kept on (its cost is part of what is measured) but set above any rate reached. BENCH_RATE_LIMIT=0
 * measures without it.
 */
const BENCH_RATE_LIMIT = process.env.BENCH_RATE_LIMIT ?? '1000000';

/** One service process on a free port (WORKERS > 1 needs a fixed port: startServiceOnPort). */
async function startService(
  db: string,
  extraArgs: string[] = [],
  databaseUrl = `sqlite:${db}`,
  root = ROOT,
  extraEnv: Record<string, string> = {},
): Promise<Running> {
  const t = process.hrtime.bigint();
  // Below info (BENCH_HERE_ENV='LOG_LEVEL=warn', the access log's cost) there is no "listening" line
  // to read the port from: a port is chosen here, and /healthz asked until it answers.
  const quiet = extraEnv.LOG_LEVEL !== undefined && !['info', 'debug'].includes(extraEnv.LOG_LEVEL);
  const port = quiet ? 20000 + Math.floor(Math.random() * 20000) : 0;
  const child = spawn(
    process.execPath,
    [...startFlags(root), ...extraArgs, path.join(root, 'dist', 'cli.js'), 'serve'],
    {
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: databaseUrl,
        SAMPLE_DATA: 'false',
        LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
        RATE_LIMIT: BENCH_RATE_LIMIT,
        WORKERS: '1',
        ...extraEnv,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let url: string;
  if (quiet) {
    url = `http://127.0.0.1:${port}`;
    for (let ok = false; !ok;) {
      if (child.exitCode !== null || Number(process.hrtime.bigint() - t) > 30e9) {
        child.kill('SIGKILL');
        throw new Error('service did not start');
      }
      ok = await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (!ok) await new Promise((r) => setTimeout(r, 100));
    }
    child.stdout?.resume();
  } else {
    const m = await waitFor(
      child,
      /"message":"listening"[^\n]*"url":"(http:\/\/[^"]+)\/api\/reg\.asmx"|"url":"(http:\/\/[^"]+)\/api\/reg\.asmx"[^\n]*"message":"listening"/,
      'service',
    );
    url = m[1] ?? m[2];
  }
  const startMs = Number(process.hrtime.bigint() - t) / 1e6;
  const running: Running = { child, url, startMs, ownMs: null };
  let partial = '';
  child.stdout?.on('data', (d: Buffer) => {
    if (!running.ownMs) {
      partial = '';
      return;
    }
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop() as string;
    for (const line of lines) {
      if (!line.includes('"message":"request"')) continue;
      const ms = (JSON.parse(line) as { ms?: unknown }).ms;
      if (typeof ms === 'number') running.ownMs.push(ms);
    }
  });
  return running;
}

/** The q-quantile of xs (0 < q < 1), nearest rank. */
function quantile(xs: number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] : 0;
}

async function startServiceOnPort(db: string, workers: number, port: number): Promise<Running> {
  const child = spawn(process.execPath, [...START_FLAGS, path.join(ROOT, 'dist', 'cli.js'), 'serve'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${db}`,
      SAMPLE_DATA: 'false',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
      RATE_LIMIT: BENCH_RATE_LIMIT,
      WORKERS: String(workers),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const t = Date.now();
  let seen = 0;
  child.stdout?.on('data', (d: Buffer) => (seen += (d.toString().match(/"message":"listening"/g) ?? []).length));
  while (seen < workers) {
    if (Date.now() - t > 30000) throw new Error('workers did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, url: `http://127.0.0.1:${port}`, startMs: Date.now() - t };
}

async function startBaseline(kind: 'node' | 'express', answersFile: string): Promise<Running> {
  const child = spawn(process.execPath, [...TS, path.join(ROOT, 'bench', 'targets.ts'), kind, answersFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const m = await waitFor(child, /listening (\d+)/, kind);
  return { child, url: `http://127.0.0.1:${m[1]}`, startMs: 0 };
}

async function stop(r: Running): Promise<void> {
  if (r.child.exitCode !== null) return;
  r.child.kill('SIGTERM');
  await new Promise((res) => r.child.on('exit', res));
}

/** Resident memory of a process and its children (cluster workers), in MB. */
function rssMb(pid: number): number {
  let total = 0;
  const visit = (p: number) => {
    try {
      const status = fs.readFileSync(`/proc/${p}/status`, 'utf8');
      total += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
      const children = fs.readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim();
      for (const c of children ? children.split(/\s+/) : []) visit(Number(c));
    } catch {
      /* gone */
    }
  };
  visit(pid);
  return total;
}

interface LoadResult {
  rps: number;
  /** CPU time the target spent per request, in microseconds: steadier than req/s on a shared machine. */
  cpuUs: number;
  p50: number;
  p99: number;
  p999: number;
  errors: number;
  non2xx: number;
  total: number;
  peakRss: number;
  rssSamples: number[];
}

async function load(
  target: Running,
  scenario: Scenario,
  regsFile: string,
  seconds: number,
  rate?: number,
  username?: string,
): Promise<LoadResult> {
  const spec = {
    url: target.url,
    scenario,
    seconds,
    connections: rate ? 10 : CONNECTIONS,
    rate,
    regsFile,
    hot: HOT,
    username,
  };
  const child = spawn(process.execPath, [...TS, path.join(ROOT, 'bench', 'load.ts'), JSON.stringify(spec)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  const samples: number[] = [];
  const sampler = setInterval(() => samples.push(rssMb(target.child.pid as number)), 250);
  const cpu0 = cpuSeconds(target.child.pid as number);
  await new Promise((res) => child.on('exit', res));
  const cpu = cpuSeconds(target.child.pid as number) - cpu0;
  clearInterval(sampler);
  const r = JSON.parse(out.trim().split('\n').pop() as string);
  return {
    rps: r.requests.average,
    cpuUs: r.requests.total ? (cpu * 1e6) / r.requests.total : 0,
    p50: r.latency.p50,
    p99: r.latency.p99,
    p999: r.latency.p99_9 ?? r.latency.p999,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
    total: r.requests.total,
    peakRss: Math.max(0, ...samples),
    rssSamples: samples,
  };
}

// ---------------------------------------------------------------- answers the baselines replay

async function captureAnswers(service: Running, regsFile: string): Promise<string> {
  const regs = JSON.parse(fs.readFileSync(regsFile, 'utf8')) as { Check: string[]; UKMOT: string[] };
  const NS = 'http://regcheck.org.uk';
  const env = (v: string, op: string, reg: string) =>
    `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${v}"><soap:Body><${op} xmlns="${NS}"><RegistrationNumber>${reg}</RegistrationNumber><username>bench</username></${op}></soap:Body></soap:Envelope>`;
  const reqs: Record<Scenario, [string, RequestInit]> = {
    'GET Check': [`/api/reg.asmx/Check?RegistrationNumber=${encodeURIComponent(regs.Check[0])}&username=bench`, {}],
    'POST Check': [
      '/api/reg.asmx/Check',
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `RegistrationNumber=${encodeURIComponent(regs.Check[0])}&username=bench`,
      },
    ],
    'SOAP 1.1 Check': [
      '/api/reg.asmx',
      {
        method: 'POST',
        headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${NS}/Check"` },
        body: env('http://schemas.xmlsoap.org/soap/envelope/', 'Check', regs.Check[0]),
      },
    ],
    'SOAP 1.2 Check': [
      '/api/reg.asmx',
      {
        method: 'POST',
        headers: { 'content-type': 'application/soap+xml; charset=utf-8' },
        body: env('http://www.w3.org/2003/05/soap-envelope', 'Check', regs.Check[0]),
      },
    ],
    'SOAP 1.1 UKMOT': [
      '/api/reg.asmx',
      {
        method: 'POST',
        headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${NS}/UKMOT"` },
        body: env('http://schemas.xmlsoap.org/soap/envelope/', 'UKMOT', regs.UKMOT[0]),
      },
    ],
  };
  const answers: Record<string, { status: number; contentType: string; body: string }> = {};
  for (const s of ALL_SCENARIOS) {
    const [p, init] = reqs[s];
    const res = await fetch(service.url + p, init);
    const body = await res.text();
    if (res.status !== 200) throw new Error(`${s}: the service answered ${res.status}: ${body.slice(0, 200)}`);
    answers[s] = { status: res.status, contentType: res.headers.get('content-type') ?? '', body };
  }
  const file = path.join(WORK, 'answers.json');
  fs.writeFileSync(file, JSON.stringify(answers));
  const sizes = ALL_SCENARIOS.map((s) => `${s} ${Buffer.byteLength(answers[s].body)} B`).join(', ');
  log(`answer sizes: ${sizes}`);
  return file;
}

// ---------------------------------------------------------------- CPU profile summary

function summarizeProfile(file: string, top = 15): string {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  prof.samples.forEach((id, i) => {
    const n = byId.get(id);
    const dt = prof.timeDeltas[i] ?? 0;
    total += dt;
    if (!n) return;
    const url = n.callFrame.url.replace(/^file:\/\//, '').replace(ROOT + '/', '');
    const key =
      `${n.callFrame.functionName || '(anonymous)'} ${url ? `${url}:${n.callFrame.lineNumber + 1}` : ''}`.trim();
    self.set(key, (self.get(key) ?? 0) + dt);
  });
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, v]) => `| ${((100 * v) / total).toFixed(1)} % | \`${k}\` |`)
    .join('\n');
}

// ---------------------------------------------------------------- --against REF

function git(args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/**
 * REF checked out in a git worktree of its own under the system's temporary folder and built there,
 * once: kept for the next run (a marker file says the build finished); `git worktree remove DIR`
 * removes it. Its node_modules is a hard-link copy of this checkout's when the two package-lock.json
 * files are the same, else `npm ci` (slow, once).
 */
function buildRef(ref: string): { dir: string; sha: string } {
  const sha = git(['rev-parse', '--verify', `${ref}^{commit}`]);
  const dir = path.join(os.tmpdir(), `reglookup-bench-${sha.slice(0, 12)}`);
  const ready = path.join(dir, '.bench-ready');
  if (fs.existsSync(ready)) return { dir, sha };
  if (!fs.existsSync(path.join(dir, 'package.json'))) {
    fs.rmSync(dir, { recursive: true, force: true });
    git(['worktree', 'prune']);
    git(['worktree', 'add', '--detach', dir, sha]);
  }
  const run = (cmd: string, args: string[]) =>
    execFileSync(cmd, args, { cwd: dir, stdio: ['ignore', process.stderr, process.stderr] });
  fs.rmSync(path.join(dir, 'node_modules'), { recursive: true, force: true });
  if (
    fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8') ===
    fs.readFileSync(path.join(dir, 'package-lock.json'), 'utf8')
  ) {
    log(`${ref}: same package-lock.json, node_modules hard-linked from this checkout`);
    run('cp', ['-al', path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules')]);
  } else {
    log(`${ref}: package-lock.json differs, npm ci in ${dir} (once)`);
    run('npm', ['ci', '--no-audit', '--no-fund']);
  }
  log(`${ref}: building in ${dir}`);
  run('npm', ['run', 'build']);
  fs.writeFileSync(ready, `${sha}\n`);
  return { dir, sha };
}

/**
 * The bench's records imported into a store of REF's own making, by REF's own `import` (the two builds' schemas may
 * differ).
 */
function refStore(dir: string, sha: string): string {
  const ndjson = path.join(WORK, `records-${VEHICLES}.ndjson`);
  if (!fs.existsSync(ndjson)) fs.writeFileSync(ndjson, [...records()].join(''));
  const db = path.join(WORK, `against-${sha.slice(0, 12)}-${VEHICLES}.db`);
  if (!fs.existsSync(`${db}.ok`)) {
    for (const f of [db, `${db}-wal`, `${db}-shm`]) fs.rmSync(f, { force: true });
    const t = Date.now();
    execFileSync(process.execPath, [path.join(dir, 'dist', 'cli.js'), 'import', ndjson], {
      env: { ...process.env, DATABASE_URL: `sqlite:${db}`, SAMPLE_DATA: 'false', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', process.stderr],
    });
    fs.writeFileSync(`${db}.ok`, '');
    log(
      `imported the bench records into ${path.basename(db)} with the other build in ${((Date.now() - t) / 1000).toFixed(1)} s`,
    );
  }
  return db;
}

type Gathered = { rps: number[]; cpuUs: number[]; p99: number[]; peakRss: number[] };
const gathered = (): Gathered => ({ rps: [], cpuUs: [], p99: [], peakRss: [] });

/** The working tree and REF, with bare Express beside them, in interleaved rounds; returns the failed requests. */
async function against(ref: string, db: string, regsFile: string, out: (s?: string) => void): Promise<number> {
  const { dir, sha } = buildRef(ref);
  const refDb = refStore(dir, sha);
  const hereEnv = parseEnvList(process.env.BENCH_HERE_ENV ?? '');
  if (Object.keys(hereEnv).length) log(`the working tree runs with ${JSON.stringify(hereEnv)} (BENCH_HERE_ENV)`);
  const here = await startService(db, [], `sqlite:${db}`, ROOT, hereEnv);
  // A failure below (REF not starting, say) must not leave the services running: killed at exit.
  process.once('exit', () => here.child.kill('SIGTERM'));
  const other = await startService(refDb, [], `sqlite:${refDb}`, dir);
  process.once('exit', () => other.child.kill('SIGTERM'));
  const answersFile = await captureAnswers(here, regsFile);
  for (const s of SCENARIOS) for (const t of [here, other]) await load(t, s, regsFile, SHORT ? 1 : 3);
  const exp = await startBaseline('express', answersFile);
  const rounds = SHORT ? 1 : Number(process.env.BENCH_ROUNDS ?? 3);
  type Who = 'here' | 'ref' | 'express';
  const data = new Map(SCENARIOS.map((s) => [s, { here: gathered(), ref: gathered(), express: gathered() }]));
  let failed = 0;
  for (let round = 0; round < rounds; round++) {
    for (const s of SCENARIOS) {
      const order: [Who, Running][] = [
        ['here', here],
        ['ref', other],
        ['express', exp],
      ];
      for (let k = 0; k < round % 3; k++) order.push(order.shift() as [Who, Running]);
      for (const [name, target] of order) {
        const r = await load(target, s, regsFile, SECONDS);
        failed += r.errors + r.non2xx;
        const g = (data.get(s) as Record<Who, Gathered>)[name];
        g.rps.push(r.rps);
        g.cpuUs.push(r.cpuUs);
        g.p99.push(r.p99);
        g.peakRss.push(r.peakRss);
      }
      const d = data.get(s) as Record<Who, Gathered>;
      log(
        `round ${round + 1} ${s}: CPU us/request here ${d.here.cpuUs[round].toFixed(0)}, ${ref} ${d.ref.cpuUs[round].toFixed(0)}, express ${d.express.cpuUs[round].toFixed(0)}`,
      );
    }
  }
  for (const t of [here, other, exp]) await stop(t);
  out(
    `## The working tree against ${ref} (${sha.slice(0, 12)}): ${rounds} interleaved round(s) x ${SECONDS} s, ${CONNECTIONS} connections, medians`,
  );
  out();
  out(
    comparisonTable(
      ref,
      SCENARIOS.map((s) => ({ scenario: s, ...(data.get(s) as { here: Samples; ref: Samples; express: Samples }) })),
    ),
  );
  out();
  out(
    'Ratios are the working tree over the other, per round, median: CPU below 1.00 and req/s above 1.00 favour the working tree.',
  );
  return failed;
}

/** `--short`: the same comparison, briefly, against the newest release tag, or a line saying there is none. */
async function againstLastRelease(db: string, regsFile: string, out: (s?: string) => void): Promise<number> {
  let described: string | null;
  try {
    // A tag on HEAD itself names this build, not a previous release: the newest one before it.
    const atHead = git(['tag', '--points-at', 'HEAD']).split('\n').filter(Boolean);
    described = git(['describe', '--tags', '--abbrev=0', ...atHead.map((t) => `--exclude=${t}`), 'HEAD']);
  } catch {
    described = null;
  }
  const tag = previousReleaseTag(described);
  out();
  if (!tag) {
    out('No release tag before HEAD (git tag lists none reachable): no comparison against a previous release.');
    return 0;
  }
  return against(tag, db, regsFile, out);
}

// ---------------------------------------------------------------- main

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : 0;
};
const pct = (x: number) => `${Math.round(x * 100)} %`;

async function main(): Promise<void> {
  const t0 = Date.now();
  const { db, regsFile } = await prepareStore();
  if (PREPARE_ONLY) return;
  let failed = 0;
  const lines: string[] = [];
  const out = (s = '') => {
    lines.push(s);
    process.stdout.write(s + '\n');
  };
  if (ARGS.against && METERED) {
    failed += await meteredAgainst(ARGS.against, regsFile, out);
    log(`done in ${((Date.now() - t0) / 1000).toFixed(0)} s; ${failed} failed request(s)`);
    process.exit(failed ? 1 : 0);
  }
  if (ARGS.against) {
    failed += await against(ARGS.against, db, regsFile, out);
    log(`done in ${((Date.now() - t0) / 1000).toFixed(0)} s; ${failed} failed request(s)`);
    process.exit(failed ? 1 : 0);
  }

  if (PROFILE) {
    const dir = path.join(WORK, 'profiles');
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    for (const s of SCENARIOS) {
      const svc = await startService(db, [
        '--cpu-prof',
        '--cpu-prof-dir',
        dir,
        '--cpu-prof-name',
        `${s.replace(/\W+/g, '-')}.cpuprofile`,
      ]);
      const r = await load(svc, s, regsFile, Number(process.env.BENCH_SECONDS ?? 8));
      await stop(svc);
      failed += r.errors + r.non2xx;
      out(
        `### ${s} (${Math.round(r.rps)} req/s under the profiler)\n\n| self | frame |\n|---|---|\n${summarizeProfile(path.join(dir, `${s.replace(/\W+/g, '-')}.cpuprofile`))}\n`,
      );
    }
    process.exit(failed ? 1 : 0);
  }

  if (METERED) {
    failed += await meteredRows(db, regsFile, out);
    writeResults(
      'RESULTS-metered.md',
      '# Benchmark results: metered lookups',
      'Reproduce with `npm run bench -- --metered` (BENCH_INSTANCES=1,2,4 for four instances).',
      lines,
    );
    process.exit(failed ? 1 : 0);
  }

  const pgUrl = PG ? await preparePostgres() : null;
  const service = await startService(db);
  log(`service started in ${service.startMs.toFixed(0)} ms (process start to listening)`);
  const pgService = pgUrl ? await startService(db, [], pgUrl) : null;
  if (pgService) log(`PostgreSQL service started in ${pgService.startMs.toFixed(0)} ms`);
  const answersFile = await captureAnswers(service, regsFile);
  // Warm-up: let the JIT and the page cache settle before anything is measured.
  for (const s of SCENARIOS) await load(service, s, regsFile, SHORT ? 1 : 3);
  if (pgService) for (const s of SCENARIOS) await load(pgService, s, regsFile, SHORT ? 1 : 3);
  const node = await startBaseline('node', answersFile);
  const exp = await startBaseline('express', answersFile);

  type Row = {
    rps: number[];
    vsNode: number[];
    vsExpress: number[];
    p50: number[];
    p99: number[];
    errors: number;
    peakRss: number;
    nodeRps: number[];
    expressRps: number[];
    cpuUs: number[];
    expressCpuUs: number[];
  };
  const rows = new Map<Scenario, Row>(
    SCENARIOS.map((s) => [
      s,
      {
        rps: [],
        vsNode: [],
        vsExpress: [],
        p50: [],
        p99: [],
        errors: 0,
        peakRss: 0,
        nodeRps: [],
        expressRps: [],
        cpuUs: [],
        expressCpuUs: [],
      },
    ]),
  );
  type PgRow = {
    rps: number[];
    vsSqlite: number[];
    vsExpress: number[];
    p50: number[];
    p99: number[];
    errors: number;
    cpuUs: number[];
  };
  const pgRows = new Map<Scenario, PgRow>(
    SCENARIOS.map((s) => [s, { rps: [], vsSqlite: [], vsExpress: [], p50: [], p99: [], errors: 0, cpuUs: [] }]),
  );
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of SCENARIOS) {
      const order = pgService ? [node, exp, service, pgService] : [node, exp, service];
      for (let k = 0; k < round % 3; k++) order.push(order.shift() as Running);
      const results = new Map<Running, LoadResult>();
      for (const target of order) results.set(target, await load(target, s, regsFile, SECONDS));
      const svc = results.get(service) as LoadResult;
      const n = results.get(node) as LoadResult;
      const e = results.get(exp) as LoadResult;
      const row = rows.get(s) as Row;
      row.rps.push(svc.rps);
      row.nodeRps.push(n.rps);
      row.expressRps.push(e.rps);
      row.cpuUs.push(svc.cpuUs);
      row.expressCpuUs.push(e.cpuUs);
      row.vsNode.push(svc.rps / n.rps);
      row.vsExpress.push(svc.rps / e.rps);
      row.p50.push(svc.p50);
      row.p99.push(svc.p99);
      row.errors += svc.errors + svc.non2xx;
      row.peakRss = Math.max(row.peakRss, svc.peakRss);
      failed += svc.errors + svc.non2xx + n.errors + n.non2xx + e.errors + e.non2xx;
      if (pgService) {
        const pg = results.get(pgService) as LoadResult;
        const pr = pgRows.get(s) as PgRow;
        pr.rps.push(pg.rps);
        pr.vsSqlite.push(pg.rps / svc.rps);
        pr.vsExpress.push(pg.rps / e.rps);
        pr.p50.push(pg.p50);
        pr.p99.push(pg.p99);
        pr.cpuUs.push(pg.cpuUs);
        pr.errors += pg.errors + pg.non2xx;
        failed += pg.errors + pg.non2xx;
        log(
          `round ${round + 1} ${s}: PostgreSQL service ${Math.round(pg.rps)} req/s (${pct(pg.rps / svc.rps)} of SQLite), CPU per request ${pg.cpuUs.toFixed(0)} us`,
        );
      }
      log(
        `round ${round + 1} ${s}: service ${Math.round(svc.rps)}, express ${Math.round(e.rps)}, node ${Math.round(n.rps)} req/s; CPU per request: service ${svc.cpuUs.toFixed(0)}, express ${e.cpuUs.toFixed(0)}, node ${n.cpuUs.toFixed(0)} us`,
      );
    }
  }

  out(`## Throughput (${ROUNDS} round(s) x ${SECONDS} s, ${CONNECTIONS} connections, medians)`);
  out();
  out(
    '| scenario | req/s | % of bare Node | % of bare Express | p50 ms | p99 ms | errors | peak RSS MB | bare Node req/s | bare Express req/s | CPU us/request | bare Express CPU us/request |',
  );
  out('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const s of SCENARIOS) {
    const r = rows.get(s) as Row;
    out(
      `| ${s} | ${Math.round(median(r.rps))} | ${pct(median(r.vsNode))} | ${pct(median(r.vsExpress))} | ${median(r.p50)} | ${median(r.p99)} | ${r.errors} | ${Math.round(r.peakRss)} | ${Math.round(median(r.nodeRps))} | ${Math.round(median(r.expressRps))} | ${Math.round(median(r.cpuUs))} | ${Math.round(median(r.expressCpuUs))} |`,
    );
  }
  out();
  out(`Start-up (process start to listening, WSDL loaded and store open): ${service.startMs.toFixed(0)} ms.`);

  if (pgService) {
    out();
    out(
      `## The PostgreSQL store (same records, same rounds${process.env.CACHE_TTL_MS ? `, CACHE_TTL_MS=${process.env.CACHE_TTL_MS}` : ''})`,
    );
    out();
    out(
      '| scenario | req/s | % of the SQLite service | % of bare Express | p50 ms | p99 ms | errors | CPU us/request |',
    );
    out('|---|---|---|---|---|---|---|---|');
    for (const s of SCENARIOS) {
      const r = pgRows.get(s) as PgRow;
      out(
        `| ${s} | ${Math.round(median(r.rps))} | ${pct(median(r.vsSqlite))} | ${pct(median(r.vsExpress))} | ${median(r.p50)} | ${median(r.p99)} | ${r.errors} | ${Math.round(median(r.cpuUs))} |`,
      );
    }
    if (!SHORT) {
      out();
      out('Fixed rate, 1,000 requests/s for 10 s (open loop: bench/load.ts), each store in turn:');
      out();
      out('| scenario | store | achieved req/s | p50 ms | p99 ms | p99.9 ms | errors |');
      out('|---|---|---|---|---|---|---|');
      for (const s of ['GET Check', 'SOAP 1.1 Check', 'SOAP 1.2 Check'] as const) {
        for (const [name, target] of [
          ['PostgreSQL', pgService],
          ['SQLite', service],
        ] as const) {
          const r = await load(target, s, regsFile, 10, 1000);
          failed += r.errors + r.non2xx;
          out(`| ${s} | ${name} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.p999} | ${r.errors + r.non2xx} |`);
        }
      }
    }
    await stop(pgService);
  }

  if (SHORT) {
    // The open-loop sender of the full run's fixed-rate rows, run briefly so that CI exercises it too.
    const r = await load(service, 'GET Check', regsFile, 2, 500);
    failed += r.errors + r.non2xx;
    out();
    out(
      `Fixed rate, 500 requests/s for 2 s (GET Check): ${Math.round(r.rps)} req/s answered, p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.errors + r.non2xx} errors.`,
    );
  }

  if (!SHORT && !QUICK && !PG) {
    out();
    out('## Fixed rate: 1,000 requests/s for 10 s');
    out();
    out(
      'Open loop: a request is sent every millisecond whatever became of the ones before it, over up to 10 keep-alive connections;',
    );
    out(
      "latency runs from sending to the answer's last byte (bench/load.ts). Beside it, the service's own p99 from its access log",
    );
    out(
      "(request read to answer written), and the two baselines' p99 at the same rate in the same run: what the machine itself adds.",
    );
    out();
    out(
      "| scenario | achieved req/s | p50 ms | p99 ms | p99.9 ms | errors | service's own p99 ms | bare Node p99 ms | bare Express p99 ms |",
    );
    out('|---|---|---|---|---|---|---|---|---|');
    for (const s of ['GET Check', 'SOAP 1.1 Check', 'SOAP 1.2 Check'] as const) {
      service.ownMs = [];
      const r = await load(service, s, regsFile, 10, 1000);
      const own = service.ownMs;
      service.ownMs = null;
      const n = await load(node, s, regsFile, 10, 1000);
      const e = await load(exp, s, regsFile, 10, 1000);
      failed += r.errors + r.non2xx + n.errors + n.non2xx + e.errors + e.non2xx;
      out(
        `| ${s} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.p999} | ${r.errors + r.non2xx} | ${quantile(own, 0.99).toFixed(1)} | ${n.p99} | ${e.p99} |`,
      );
    }

    out();
    out('## Memory over a 60 s SOAP 1.1 load');
    out();
    const soak = await load(service, 'SOAP 1.1 Check', regsFile, 60);
    failed += soak.errors + soak.non2xx;
    const per10 = soak.rssSamples.filter((_, i) => i % 40 === 39).map((x) => Math.round(x));
    out(
      `RSS every 10 s (MB): ${per10.join(', ')}; peak ${Math.round(soak.peakRss)} MB; ${Math.round(soak.rps)} req/s; ${soak.errors + soak.non2xx} errors.`,
    );
  }
  // Metered against unmetered: SQLite, and with --store postgres PostgreSQL with BENCH_INSTANCES instances.
  if (!SHORT && !QUICK) failed += await meteredRows(db, regsFile, out);
  await stop(service);
  await stop(node);
  await stop(exp);
  if (SHORT) failed += await againstLastRelease(db, regsFile, out);

  if (PG && !SHORT && !QUICK) {
    const header = [
      '# Benchmark results: the PostgreSQL store',
      '',
      `${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}; ${VEHICLES.toLocaleString('en')} vehicles and ${MOTS.toLocaleString('en')} MOT histories in SQLite and in PostgreSQL (same machine).`,
      "Reproduce with `npm run bench -- --store postgres`. The SQLite table is the same run's; bench/RESULTS.md holds the full SQLite run.",
      '',
    ];
    fs.writeFileSync(path.join(ROOT, 'bench', 'RESULTS-postgres.md'), [...header, ...lines].join('\n') + '\n');
  }
  if (!SHORT && !QUICK && !PG) {
    out();
    out('## WORKERS=2 against WORKERS=1 (the load generator shares the two cores)');
    out();
    // CPU a request counts every process of the service (the primary and its workers): what a second
    // worker costs, which the req/s of two cores shared with the load generator cannot show.
    out(
      '| scenario | WORKERS=1 req/s | WORKERS=2 req/s | ratio | WORKERS=1 CPU us/request | WORKERS=2 CPU us/request | bare Express CPU us/request (throughput rounds) |',
    );
    out('|---|---|---|---|---|---|---|');
    for (const s of ['GET Check', 'SOAP 1.1 Check'] as const) {
      const rps: number[] = [];
      const cpuUs: number[] = [];
      for (const w of [1, 2]) {
        const port = 20000 + Math.floor(Math.random() * 20000);
        const svc = await startServiceOnPort(db, w, port);
        const r = await load(svc, s, regsFile, SECONDS * 2);
        failed += r.errors + r.non2xx;
        rps.push(r.rps);
        cpuUs.push(r.cpuUs);
        await stop(svc);
      }
      const measured = rows.get(s);
      const expressCpu = measured ? String(Math.round(median(measured.expressCpuUs))) : 'not run';
      out(
        `| ${s} | ${Math.round(rps[0])} | ${Math.round(rps[1])} | ${(rps[1] / rps[0]).toFixed(2)} | ${Math.round(cpuUs[0])} | ${Math.round(cpuUs[1])} | ${expressCpu} |`,
      );
    }
    const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
    const header = [
      '# Benchmark results',
      '',
      `${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores (${cpu}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; store: SQLite with ${VEHICLES.toLocaleString('en')} vehicles and ${MOTS.toLocaleString('en')} MOT histories; one service process unless said.`,
      "Reproduce with `npm run bench` (about 9 minutes). The baselines replay the service's own answer bytes.",
      '',
    ];
    fs.writeFileSync(path.join(ROOT, 'bench', 'RESULTS.md'), [...header, ...lines].join('\n') + '\n');
  }
  log(`done in ${((Date.now() - t0) / 1000).toFixed(0)} s; ${failed} failed request(s)`);
  if (failed) {
    process.stderr.write(`bench: ${failed} request(s) failed\n`);
    process.exit(1);
  }
}

// ---------------------------------------------------------------- metered lookups (issue 30)

const METERED_USER = 'metered';

function writeResults(file: string, title: string, how: string, lines: string[]): void {
  const header = [
    title,
    '',
    `${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}; ${VEHICLES.toLocaleString('en')} vehicles.`,
    how,
    '',
  ];
  fs.writeFileSync(path.join(ROOT, 'bench', file), [...header, ...lines].join('\n') + '\n');
}

/** Gives the metered username (far) more credits than a run takes, in the store at `url`. */
async function meterAccount(url: string): Promise<void> {
  const store = url.startsWith('sqlite:')
    ? new SqliteStore(url.slice('sqlite:'.length))
    : new PostgresStore(url, { statementTimeoutMs: 0 });
  await store.accounts.putAccount({ username: METERED_USER, credits: 1_000_000_000_000, dailyLimit: null });
  await store.close();
}

/**
 * Every target loaded at once, each with its share of the connections (or of the rate), or with
 * `each` all of them (each instance as loaded as one alone): total req/s, the worst p99.
 */
async function loadAll(
  targets: Running[],
  username: string,
  regsFile: string,
  seconds: number,
  rate?: number,
  scenario: Scenario = 'GET Check',
  each = false,
): Promise<{ rps: number; p99: number; failed: number }> {
  const results = await Promise.all(
    targets.map(async (t) => {
      const spec = {
        url: t.url,
        scenario,
        seconds,
        connections: rate ? 10 : each ? CONNECTIONS : Math.max(4, Math.round(CONNECTIONS / targets.length)),
        rate: rate && rate / targets.length,
        regsFile,
        hot: HOT,
        username,
      };
      const child = spawn(process.execPath, [...TS, path.join(ROOT, 'bench', 'load.ts'), JSON.stringify(spec)], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let text = '';
      child.stdout?.on('data', (d: Buffer) => (text += d.toString()));
      await new Promise((res) => child.on('exit', res));
      return JSON.parse(text.trim().split('\n').pop() as string) as {
        requests: { average: number };
        latency: { p99: number };
        errors: number;
        timeouts: number;
        non2xx: number;
      };
    }),
  );
  return {
    rps: results.reduce((n, r) => n + r.requests.average, 0),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    failed: results.reduce((n, r) => n + r.errors + r.timeouts + r.non2xx, 0),
  };
}

/**
 * Metered (a username with credits: every lookup charged) against unmetered (a username without an
 * account) GET Check lookups, in interleaved rounds, on SQLite with one instance and on PostgreSQL
 * with each count of instances in BENCH_INSTANCES, all instances loaded at once.
 */
async function meteredRows(db: string, regsFile: string, out: (s?: string) => void): Promise<number> {
  let failed = 0;
  const byTransport: string[] = [];
  const counts = (process.env.BENCH_INSTANCES ?? '1,2').split(',').map(Number);
  const setups: { store: string; url: string; n: number; each: boolean }[] = [
    { store: 'SQLite', url: `sqlite:${db}`, n: 1, each: false },
  ];
  if (PG || METERED) {
    const pgUrl = await preparePostgres();
    for (const n of counts) setups.push({ store: 'PostgreSQL', url: pgUrl, n, each: false });
    // The same instances each loaded as one alone is: what adding instances for more load looks like.
    for (const n of counts.filter((c) => c > 1)) setups.push({ store: 'PostgreSQL', url: pgUrl, n, each: true });
  }
  out();
  out(`## Metered lookups (GET Check, ${ROUNDS} interleaved round(s) x ${SECONDS} s, medians)`);
  out();
  out(
    '| store | instances | connections | unmetered req/s | metered req/s | metered / unmetered | metered p99 ms at 1,000 req/s | unmetered p99 ms at 1,000 req/s | errors |',
  );
  out('|---|---|---|---|---|---|---|---|---|');
  for (const { store, url, n, each } of setups) {
    await meterAccount(url);
    const targets: Running[] = [];
    for (let i = 0; i < n; i++) targets.push(await startService(db, [], url));
    await loadAll(targets, METERED_USER, regsFile, SHORT ? 1 : 2, undefined, 'GET Check', each);
    await loadAll(targets, 'bench', regsFile, SHORT ? 1 : 2, undefined, 'GET Check', each);
    const plain: number[] = [];
    const metered: number[] = [];
    const ratio: number[] = [];
    let errors = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 ? [METERED_USER, 'bench'] : ['bench', METERED_USER];
      const got = new Map<string, number>();
      for (const user of order) {
        const r = await loadAll(targets, user, regsFile, SECONDS, undefined, 'GET Check', each);
        errors += r.failed;
        got.set(user, r.rps);
      }
      plain.push(got.get('bench') as number);
      metered.push(got.get(METERED_USER) as number);
      ratio.push((got.get(METERED_USER) as number) / (got.get('bench') as number));
      log(
        `metered round ${round + 1} ${store} x${n}${each ? ' (each loaded alone)' : ''}: unmetered ${Math.round(got.get('bench') as number)}, metered ${Math.round(got.get(METERED_USER) as number)} req/s`,
      );
    }
    if (n === 1 && !each) {
      const exp = await startBaseline('express', await captureAnswers(targets[0], regsFile));
      const t = await meteredByTransport(store, targets[0], exp, regsFile);
      await stop(exp);
      byTransport.push(...t.rows);
      failed += t.errors;
    }
    const fixedSeconds = SHORT ? 2 : 10;
    const mp = await loadAll(targets, METERED_USER, regsFile, fixedSeconds, 1000);
    const up = await loadAll(targets, 'bench', regsFile, fixedSeconds, 1000);
    errors += mp.failed + up.failed;
    failed += errors;
    for (const t of targets) await stop(t);
    out(
      `| ${store} | ${n} | ${each ? `${CONNECTIONS} each` : `${CONNECTIONS} shared`} | ${Math.round(median(plain))} | ${Math.round(median(metered))} | ${pct(median(ratio))} | ${mp.p99} | ${up.p99} | ${errors} |`,
    );
  }
  out();
  out(
    "Each instance is its own process with the start script's flags; the load generators run on the same cores. Connections: shared, the load's connections split over the instances (the same load, more instances); each, every instance loaded with all of them, as one instance alone is (more load, more instances, as when instances are added to serve it). At 1,000 req/s the rate is split evenly over the instances and the worst instance's p99 is given.",
  );
  out();
  out(
    `### Every transport, one instance (${BY_TRANSPORT_ROUNDS} interleaved round(s) x ${SECONDS} s, ${CONNECTIONS} connections, medians)`,
  );
  out();
  out(
    '| store | scenario | unmetered req/s | metered req/s | bare Express req/s | metered / unmetered | metered / bare Express | metered CPU us/request | unmetered CPU us/request | bare Express CPU us/request | errors |',
  );
  out('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const line of byTransport) out(line);
  out();
  out(
    "Bare Express replays the service's own answer bytes (as in the throughput table); CPU is the serving process's alone, not the database's.",
  );
  return failed;
}

const BY_TRANSPORT_ROUNDS = Math.min(ROUNDS, 3);

/** The metered username with (far) more credits than a run takes, in SQL any build's schema accepts. */
async function meterAccountSql(url: string): Promise<void> {
  const u = new URL(url);
  const schema = u.searchParams.get('schema') as string;
  u.searchParams.delete('schema');
  const client = new pg.Client({ connectionString: u.toString(), options: `-c search_path=${schema}` });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO accounts (username, credits, daily_limit) VALUES ($1, 1000000000000, NULL)
       ON CONFLICT (username) DO UPDATE SET credits = EXCLUDED.credits, daily_limit = NULL`,
      [METERED_USER],
    );
    // A build with credit shards leaves none behind on close, but a killed run may have.
    if ((await client.query("SELECT to_regclass('credit_shards') AS t")).rows[0].t !== null)
      await client.query('DELETE FROM credit_shards WHERE username = $1', [METERED_USER]);
  } finally {
    await client.end();
  }
}

/** The bench's records in a PostgreSQL schema of REF's own, imported by REF's own build (once). */
function refPostgres(dir: string, sha: string): string {
  const u = new URL(process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test');
  u.searchParams.set('schema', `reglookup_bench_${sha.slice(0, 12)}_${VEHICLES}`);
  const url = u.toString();
  const ok = path.join(WORK, `against-pg-${sha.slice(0, 12)}-${VEHICLES}.ok`);
  if (!fs.existsSync(ok)) {
    const ndjson = path.join(WORK, `records-${VEHICLES}.ndjson`);
    if (!fs.existsSync(ndjson)) fs.writeFileSync(ndjson, [...records()].join(''));
    execFileSync(process.execPath, [path.join(dir, 'dist', 'cli.js'), 'import', ndjson], {
      env: { ...process.env, DATABASE_URL: url, SAMPLE_DATA: 'false', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', process.stderr],
    });
    fs.writeFileSync(ok, '');
  }
  return url;
}

/**
 * `--metered --against REF`: metered against unmetered GET Check on PostgreSQL with each count of
 * instances in BENCH_INSTANCES (default 2,4), the load's connections shared by the instances, for
 * the working tree and REF: both builds' instances run throughout and are loaded in turn, in an
 * order that rotates each round. The load average (1 min) is logged with each round.
 */
async function meteredAgainst(ref: string, regsFile: string, out: (s?: string) => void): Promise<number> {
  const { dir, sha } = buildRef(ref);
  const builds = [
    // A schema of the working tree's own: its migrations may be newer than another build of the same name knows.
    { name: 'here', root: ROOT, url: await preparePostgres(`reglookup_bench_here_${VEHICLES}`) },
    { name: ref, root: dir, url: refPostgres(dir, sha) },
  ];
  const counts = (process.env.BENCH_INSTANCES ?? '2,4').split(',').map(Number);
  let failed = 0;
  out(
    `## Metered against unmetered, the working tree against ${ref} (${sha.slice(0, 12)}): PostgreSQL, GET Check, ${ROUNDS} interleaved round(s) x ${SECONDS} s, ${CONNECTIONS} connections shared`,
  );
  out();
  out(
    '| instances | build | unmetered req/s | metered req/s | metered / unmetered, median | min-max over rounds | here / REF ratio, median | errors |',
  );
  out('|---|---|---|---|---|---|---|---|');
  for (const n of counts) {
    const running: Running[][] = [];
    for (const b of builds) {
      await meterAccountSql(b.url);
      const targets: Running[] = [];
      for (let i = 0; i < n; i++) targets.push(await startService('', [], b.url, b.root));
      running.push(targets);
      await loadAll(targets, METERED_USER, regsFile, 2);
      await loadAll(targets, 'bench', regsFile, 2);
    }
    const got = builds.map(() => ({ plain: [] as number[], metered: [] as number[], ratio: [] as number[] }));
    const legs = builds.flatMap((_, bi) => [METERED_USER, 'bench'].map((user) => ({ bi, user })));
    let errors = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const order = [...legs.slice(round % legs.length), ...legs.slice(0, round % legs.length)];
      const rps = new Map<string, number>();
      for (const { bi, user } of order) {
        const r = await loadAll(running[bi], user, regsFile, SECONDS);
        errors += r.failed;
        rps.set(`${bi}/${user}`, r.rps);
      }
      builds.forEach((b, bi) => {
        const m = rps.get(`${bi}/${METERED_USER}`) as number;
        const p = rps.get(`${bi}/bench`) as number;
        got[bi].metered.push(m);
        got[bi].plain.push(p);
        got[bi].ratio.push(m / p);
      });
      log(
        `metered-against round ${round + 1} x${n}: ${builds.map((b, bi) => `${b.name} ${pct(got[bi].ratio[round])} (${Math.round(got[bi].metered[round])}/${Math.round(got[bi].plain[round])})`).join(', ')}; load average ${os.loadavg()[0].toFixed(1)}`,
      );
    }
    for (const targets of running) for (const t of targets) await stop(t);
    failed += errors;
    const cross = got[0].ratio.map((r, i) => r / got[1].ratio[i]);
    builds.forEach((b, bi) => {
      const g = got[bi];
      out(
        `| ${n} | ${b.name} | ${Math.round(median(g.plain))} | ${Math.round(median(g.metered))} | ${pct(median(g.ratio))} | ${pct(Math.min(...g.ratio))}-${pct(Math.max(...g.ratio))} | ${bi === 0 ? `${median(cross).toFixed(2)} (${Math.min(...cross).toFixed(2)}-${Math.max(...cross).toFixed(2)})` : ''} | ${bi === 0 ? errors : ''} |`,
      );
    });
  }
  out();
  out(
    "Each round loads every leg (a build, metered or not) in turn, in an order rotated each round; ratios are taken within a round. here / REF: the working tree's metered share over REF's.",
  );
  return failed;
}

/**
 * Metered against unmetered for each scenario but UKMOT (BENCH_SCENARIOS), on one running instance,
 * and both against bare Express in the same rounds (issue 29's targets for a metered account): a
 * table row each, with requests/s and the serving process's CPU a request.
 */
async function meteredByTransport(
  store: string,
  target: Running,
  exp: Running,
  regsFile: string,
): Promise<{ rows: string[]; errors: number }> {
  const rows: string[] = [];
  let failed = 0;
  const legs = ['bench', METERED_USER, 'express'] as const;
  for (const scenario of SCENARIOS.filter((s) => s.endsWith('Check'))) {
    const got = new Map<string, { rps: number[]; cpuUs: number[] }>(legs.map((l) => [l, { rps: [], cpuUs: [] }]));
    const ratio: number[] = [];
    const vsExpress: number[] = [];
    let errors = 0;
    for (let round = 0; round < BY_TRANSPORT_ROUNDS; round++) {
      const order = [...legs.slice(round % 3), ...legs.slice(0, round % 3)];
      const rps = new Map<string, number>();
      for (const leg of order) {
        const r =
          leg === 'express'
            ? await load(exp, scenario, regsFile, SECONDS)
            : await load(target, scenario, regsFile, SECONDS, undefined, leg);
        errors += r.errors + r.non2xx;
        rps.set(leg, r.rps);
        const samples = got.get(leg) as { rps: number[]; cpuUs: number[] };
        samples.rps.push(r.rps);
        samples.cpuUs.push(r.cpuUs);
      }
      ratio.push((rps.get(METERED_USER) as number) / (rps.get('bench') as number));
      vsExpress.push((rps.get(METERED_USER) as number) / (rps.get('express') as number));
    }
    const [plain, metered, express] = legs.map((l) => got.get(l) as { rps: number[]; cpuUs: number[] });
    log(`metered ${store} ${scenario}: ${pct(median(ratio))} of unmetered, ${pct(median(vsExpress))} of bare Express`);
    rows.push(
      `| ${store} | ${scenario} | ${Math.round(median(plain.rps))} | ${Math.round(median(metered.rps))} | ${Math.round(median(express.rps))} | ${pct(median(ratio))} | ${pct(median(vsExpress))} | ${Math.round(median(metered.cpuUs))} | ${Math.round(median(plain.cpuUs))} | ${Math.round(median(express.cpuUs))} | ${errors} |`,
    );
    failed += errors;
  }
  return { rows, errors: failed };
}

main().catch((e) => {
  process.stderr.write(`bench: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
