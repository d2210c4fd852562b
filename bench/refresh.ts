// npm run bench:refresh: the daily refresh on the default SQLite store while callers are served.
//
//   npm run bench:refresh                  2,000,000 generated RDW rows (bench/import.ts's generator): the
//                                          first load into an empty store, then `import --replace-all` of
//                                          the same file twice, alone (the plain import) and while a
//                                          metered caller and an unmetered one each make 50 GET lookups/s
//                                          against a running `reglookup serve`; writes bench/REFRESH.md
//   npm run bench:refresh -- --short       200,000 rows, printed only
//   BENCH_REFRESH_ROWS=1000000             another size (printed only)
//   npm run bench:refresh -- --against REF the same, plain and loaded, on commit REF too (a git worktree
//                                          in the temporary directory, built with tsc, removed after), e.g.
//                                          --against 7998aff^
//
// Every import is `reglookup import` as the daily refresh runs it (nice 10, idle I/O class), a process
// of its own, with its wall time and its peak RSS. The callers are open-loop (a request every 20 ms
// whatever the answers take), so a held-up lookup cannot slow the load down and hide itself; each
// lookup's time runs from when it was due. A lookup is refused when it is not answered 200 with the
// vehicle (a fault, a timeout of 10 s, a connection error). Nothing is asserted about speed: the
// machine is shared, so the import under load is given as a share of the plain import measured in the
// same run.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { generateRdw, keyOf } from './import';

const ROOT = path.resolve(__dirname, '..');
const WORK = path.join(ROOT, 'bench', '.work');
const SHORT = process.argv.includes('--short');
const ROWS = SHORT ? 200_000 : Number(process.env.BENCH_REFRESH_ROWS ?? 2_000_000);
const AGAINST = process.argv.includes('--against') ? process.argv[process.argv.indexOf('--against') + 1] : undefined;
const RATE = 50; // lookups a second, per caller
const BEFORE_S = SHORT ? 10 : 20; // seconds of lookups measured before the import
// As deploy/reglookup-refresh@.service runs it (Nice=10, IOSchedulingClass=idle); BENCH_REFRESH_NICE=0 runs it
// at the service's priority.
const NICE = Number(process.env.BENCH_REFRESH_NICE ?? 10);
const METERED = 'bench-metered';
const UNMETERED = 'bench-unmetered';

function log(s: string): void {
  process.stderr.write(`bench:refresh: ${s}\n`);
}

const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(', ');

// ---------------------------------------------------------------- processes

// Loaded with node -r into the import's process: its peak RSS, written to stderr as it exits.
const RSS_HOOK = path.join(WORK, 'refresh-rss.js');

function cliEnv(db: string): NodeJS.ProcessEnv {
  return { ...process.env, DATABASE_URL: `sqlite:${db}`, SAMPLE_DATA: 'false', LOG_LEVEL: 'warn', NODE_ENV: '' };
}

interface Imported {
  readonly ms: number;
  readonly rssMb: number;
}

/** `reglookup import ARGS` with `root`'s build, to its exit: wall time and peak RSS. */
function runImport(root: string, db: string, args: string[]): Promise<Imported> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const node = [process.execPath, '-r', RSS_HOOK, path.join(root, 'dist', 'cli.js'), 'import', '-q', ...args];
    const [cmd, ...argv] = NICE ? ['ionice', '-c', '3', 'nice', '-n', String(NICE), ...node] : node;
    const child = spawn(cmd, argv, {
      cwd: path.dirname(db),
      env: cliEnv(db),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => {
      const ms = performance.now() - t;
      const m = /rss-kb=(\d+)/.exec(err);
      if (code !== 0 || !m) return reject(new Error(`import ${args.join(' ')} failed (${code}): ${err.slice(-2000)}`));
      resolve({ ms, rssMb: Number(m[1]) / 1024 });
    });
  });
}

function cli(root: string, db: string, args: string[]): void {
  const r = spawnSync(process.execPath, [path.join(root, 'dist', 'cli.js'), ...args], {
    cwd: path.dirname(db),
    env: cliEnv(db),
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`reglookup ${args.join(' ')} failed: ${r.stderr}`);
}

interface Service {
  readonly url: string;
  stop(): Promise<void>;
}

async function serve(root: string, db: string): Promise<Service> {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const child = spawn(process.execPath, ['--max-semi-space-size=8', path.join(root, 'dist', 'cli.js'), 'serve'], {
    cwd: path.dirname(db),
    env: { ...cliEnv(db), PORT: String(port), HOST: '127.0.0.1', WORKERS: '1', RATE_LIMIT: '1000000' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const t = Date.now();
  for (;;) {
    if (child.exitCode !== null || Date.now() - t > 60_000) {
      child.kill('SIGKILL');
      throw new Error('the service did not start');
    }
    if (
      await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('close', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

// ---------------------------------------------------------------- callers

interface Lookup {
  readonly due: number; // ms since the caller started
  readonly ms: number;
  readonly ok: boolean;
  /** A refused lookup's plate, status and the start of its answer (or the error), for the report. */
  readonly why?: string;
}

/** One caller making RATE lookups a second of plates drawn from the first `rows`, until stopped. */
function caller(url: string, username: string, rows: number, seed: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const lookups: Lookup[] = [];
  const inFlight = new Set<Promise<void>>();
  const start = performance.now();
  let n = 0;
  let x = seed;
  const next = () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x % rows;
  };
  const one = (due: number) => {
    const plate = keyOf(next()).registration;
    const p = new Promise<void>((resolve) => {
      const done = (ok: boolean, why: string) => {
        lookups.push({ due: due - start, ms: performance.now() - due, ok, ...(ok ? {} : { why: `${plate}: ${why}` }) });
        resolve();
      };
      const req = http.get(
        `${url}/api/reg.asmx/CheckNetherlands?RegistrationNumber=${plate}&username=${username}`,
        { agent, timeout: 10_000 },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (body += d));
          res.on('end', () =>
            done(res.statusCode === 200 && body.includes('<Description>'), `${res.statusCode} ${body.slice(0, 300)}`),
          );
          res.on('error', (e) => done(false, e.message));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (e) => done(false, e.message));
    });
    inFlight.add(p);
    void p.then(() => inFlight.delete(p));
  };
  // Each lookup is sent when it is due, late or not; a timer that fires late sends the ones it owes.
  const timer = setInterval(() => {
    const now = performance.now();
    while (start + (n * 1000) / RATE <= now) one(start + (n++ * 1000) / RATE);
  }, 5);
  return {
    lookups,
    now: () => performance.now() - start,
    async stop(): Promise<Lookup[]> {
      clearInterval(timer);
      await Promise.all(inFlight);
      agent.destroy();
      return lookups;
    },
  };
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] : NaN;
}

interface Window {
  readonly n: number;
  readonly refused: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** Each refused lookup: when it was due, from the window's start, and what it was answered. */
  readonly refusedHow: string[];
}

function windowOf(lookups: Lookup[], from: number, to: number): Window {
  const w = lookups.filter((l) => l.due >= from && l.due < to);
  const ms = w.map((l) => l.ms);
  return {
    n: w.length,
    refused: w.filter((l) => !l.ok).length,
    refusedHow: w.filter((l) => !l.ok).map((l) => `${((l.due - from) / 1000).toFixed(1)} s in, ${l.why}`),
    p50: quantile(ms, 0.5),
    p99: quantile(ms, 0.99),
    max: ms.length ? Math.max(...ms) : NaN,
  };
}

// ---------------------------------------------------------------- one build

interface Run {
  readonly label: string;
  readonly firstLoad: Imported;
  readonly plain: Imported;
  readonly loaded: Imported;
  readonly metered: { before: Window; during: Window };
  readonly unmetered: { before: Window; during: Window };
}

async function runOn(label: string, root: string, csv: string): Promise<Run> {
  const dir = path.join(WORK, `refresh-${label.replace(/\W+/g, '_')}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const db = path.join(dir, 'reglookup.db');
  const args = ['--replace-all', '--format', 'rdw', csv];

  log(`${label}: first load of ${ROWS} rows into an empty store`);
  const firstLoad = await runImport(root, db, ['--format', 'rdw', csv]);
  cli(root, db, ['users', 'add', METERED, '--credits', '1000000000000']);
  log(`${label}: import --replace-all, no load`);
  const plain = await runImport(root, db, args);

  const service = await serve(root, db);
  try {
    const m = caller(service.url, METERED, ROWS, 1);
    const u = caller(service.url, UNMETERED, ROWS, 2);
    log(`${label}: ${BEFORE_S} s of lookups before the import`);
    await new Promise((r) => setTimeout(r, BEFORE_S * 1000));
    log(`${label}: import --replace-all under load`);
    const from = m.now();
    const fromU = u.now();
    const loaded = await runImport(root, db, args);
    const to = m.now();
    const toU = u.now();
    // A few seconds more, so that the lookups sent while the import ran are all answered.
    await new Promise((r) => setTimeout(r, 3000));
    const ml = await m.stop();
    const ul = await u.stop();
    return {
      label,
      firstLoad,
      plain,
      loaded,
      // The first second is warm-up (connections opened, the service's caches filled).
      metered: { before: windowOf(ml, 1000, from), during: windowOf(ml, from, to) },
      unmetered: { before: windowOf(ul, 1000, fromU), during: windowOf(ul, fromU, toU) },
    };
  } finally {
    await service.stop();
    if (process.env.BENCH_KEEP !== '1') fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Commit `ref` checked out under bench/.work and built, sharing this checkout's node_modules. */
function buildAgainst(ref: string): { root: string; label: string } {
  const git = (...a: string[]) => {
    const r = spawnSync('git', a, { cwd: ROOT, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`git ${a.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  const sha = git('rev-parse', '--verify', `${ref}^{commit}`);
  // Outside this checkout, so that jest and git here never see a second copy of the project.
  const root = path.join(os.tmpdir(), `reglookup-bench-against-${sha.slice(0, 12)}`);
  if (!fs.existsSync(path.join(root, 'dist', 'cli.js'))) {
    log(`building ${ref} (${sha.slice(0, 12)}) in ${root}`);
    if (!fs.existsSync(root)) git('worktree', 'add', '--detach', root, sha);
    if (!fs.existsSync(path.join(root, 'node_modules')))
      fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'));
    const tsc = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', '.bin', 'tsc'), '-p', 'tsconfig.json'], {
      cwd: root,
      encoding: 'utf8',
    });
    if (tsc.status !== 0) throw new Error(`building ${ref} failed: ${tsc.stdout}${tsc.stderr}`);
  }
  return { root, label: `${ref} (${sha.slice(0, 7)})` };
}

// ---------------------------------------------------------------- report

const f0 = (x: number) => Math.round(x).toLocaleString('en-US');
const f1 = (x: number) => (Number.isNaN(x) ? '-' : x.toFixed(1));
const rate = (i: Imported) => f0((ROWS / i.ms) * 1000);

function table(run: Run): string[] {
  const share = (run.plain.ms / run.loaded.ms) * 100;
  const w = (x: Window) => `${f1(x.p50)} / ${f1(x.p99)} (max ${f1(x.max)}; ${f0(x.n)} lookups)`;
  const { metered: m, unmetered: u } = run;
  const within = m.during.p99 <= 2 * m.before.p99 && m.during.p99 <= 250;
  return [
    `### ${run.label}`,
    '',
    '| measure | value | target |',
    '|---|---|---|',
    `| refused during the import: metered / unmetered | ${m.during.refused} / ${u.during.refused} (before: ${m.before.refused} / ${u.before.refused}) | 0 |`,
    `| metered p50 / p99 ms before the import | ${w(m.before)} | |`,
    `| metered p50 / p99 ms during the import | ${w(m.during)} | p99 <= 2 x before and <= 250 ms: ${within ? 'met' : 'not met'} |`,
    `| unmetered p50 / p99 ms before the import | ${w(u.before)} | |`,
    `| unmetered p50 / p99 ms during the import | ${w(u.during)} | |`,
    `| \`import --replace-all\` under load, rows/s | ${rate(run.loaded)} (${(run.loaded.ms / 1000).toFixed(1)} s, peak RSS ${f0(run.loaded.rssMb)} MB) | |`,
    `| the same, no load (plain import), rows/s | ${rate(run.plain)} (${(run.plain.ms / 1000).toFixed(1)} s, peak RSS ${f0(run.plain.rssMb)} MB) | |`,
    `| under load as a share of the plain import | ${share.toFixed(0)} % | >= 90 % |`,
    `| first load into an empty store, rows/s | ${rate(run.firstLoad)} (${(run.firstLoad.ms / 1000).toFixed(1)} s, peak RSS ${f0(run.firstLoad.rssMb)} MB) | |`,
    '',
    ...[
      ...m.before.refusedHow.map((x) => `metered, before: ${x}`),
      ...m.during.refusedHow.map((x) => `metered, during: ${x}`),
      ...u.before.refusedHow.map((x) => `unmetered, before: ${x}`),
      ...u.during.refusedHow.map((x) => `unmetered, during: ${x}`),
    ].map((x) => `- refused: \`${x.replace(/\s+/g, ' ').replace(/`/g, "'")}\``),
    '',
  ];
}

async function main(): Promise<void> {
  fs.mkdirSync(WORK, { recursive: true });
  fs.writeFileSync(
    RSS_HOOK,
    "process.on('exit', () => require('fs').writeSync(2, `rss-kb=${process.resourceUsage().maxRSS}\\n`));\n",
  );
  const csv = path.join(WORK, `import-${ROWS}.rdw.csv`);
  generateRdw(csv, path.join(WORK, `import-${ROWS}.rdw-fuel.csv`), ROWS);
  const builds = [{ root: ROOT, label: 'this build' }];
  if (AGAINST) builds.push(buildAgainst(AGAINST));
  const loadBefore = load();
  const runs: Run[] = [];
  try {
    for (const b of builds) runs.push(await runOn(b.label, b.root, csv));
  } finally {
    for (const b of builds.slice(1)) spawnSync('git', ['worktree', 'remove', '--force', b.root], { cwd: ROOT });
  }
  const cpu = os.cpus();
  const lines = [
    `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${cpu.length} cores (${cpu[0]?.model.trim() ?? '?'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; load average ${loadBefore} before, ${load()} after (the machine shared with other work).`,
    `Reproduce with \`${ROWS !== 2_000_000 && !SHORT ? `BENCH_REFRESH_ROWS=${ROWS} ` : ''}npm run bench:refresh${SHORT || AGAINST ? ' --' : ''}${SHORT ? ' --short' : ''}${AGAINST ? ` --against '${AGAINST}'` : ''}\`. ${f0(ROWS)} generated RDW rows (${(fs.statSync(csv).size / 1e6).toFixed(0)} MB of CSV, \`--format rdw\` without \`--fuel\`), one CheckNetherlands record each; every import ${NICE ? `at nice ${NICE} and the idle I/O class, as deploy/reglookup-refresh@.service runs it` : "at the service's priority"}; the callers look up random plates of the file, GET CheckNetherlands, ${RATE} a second each, open-loop; ${BEFORE_S} s of lookups before the import (the first second left out).`,
    '',
    ...runs.flatMap(table),
  ];
  const text = lines.join('\n');
  process.stdout.write(text + '\n');
  if (!SHORT && ROWS === 2_000_000) {
    fs.writeFileSync(path.join(ROOT, 'bench', 'REFRESH.md'), `# Refresh under metered load\n\n${text}`);
    log('wrote bench/REFRESH.md');
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:refresh: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
