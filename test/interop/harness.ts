// Shared machinery of the interop tests: is a toolkit installed (skip loudly on a developer's
// machine, fail in CI), where build outputs go, and how a toolkit's command is run and its client
// program's one-line JSON report read back.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseReport, type Report } from './calls';

export const BUILD_ROOT = path.resolve(__dirname, '.build');
export const CLIENTS = path.resolve(__dirname, 'clients');

/** Debian's interpreter: the python3 on PATH may be another build without python3-zeep/suds. */
export const PYTHON = '/usr/bin/python3';

/** In CI (CI=true) a missing toolkit fails the run instead of skipping its tests. */
export const IN_CI = /^(1|true|yes)$/i.test(process.env.CI ?? '');

/** Time allowed to generate and compile one stack's clients and run them once. */
export const BUILD_TIMEOUT_MS = 5 * 60_000;

export interface Toolkit {
  /** Short id: names the build folder and the result file. */
  readonly id: string;
  /** What the describe block and the skip message call it. */
  readonly title: string;
  /** Debian packages that provide it (what to apt-get install). */
  readonly packages: readonly string[];
  /** Commands that must be on PATH. */
  readonly commands?: readonly string[];
  /** Files that must exist. */
  readonly files?: readonly string[];
  /** A command that must exit 0 (e.g. an import or module check). */
  readonly check?: readonly string[];
}

function onPath(cmd: string): boolean {
  return spawnSync('sh', ['-c', 'command -v "$1" >/dev/null 2>&1', 'sh', cmd]).status === 0;
}

/** Why the toolkit cannot be used here, or null when it can. */
export function missingPart(tk: Toolkit): string | null {
  for (const c of tk.commands ?? []) if (!onPath(c)) return `command '${c}' is not on PATH`;
  for (const f of tk.files ?? []) if (!fs.existsSync(f)) return `${f} does not exist`;
  if (tk.check) {
    const r = spawnSync(tk.check[0], tk.check.slice(1), { encoding: 'utf8', timeout: 30_000 });
    if (r.status !== 0)
      return `'${tk.check.join(' ')}' failed: ${(r.stderr || r.error?.message || '').trim().split('\n').pop()}`;
  }
  return null;
}

/**
 * describe() for one toolkit's tests. Toolkit missing: in CI one failing test says what to install;
 * elsewhere the tests are skipped with a loud message naming the Debian package.
 */
export function describeToolkit(tk: Toolkit, body: () => void): void {
  const missing = missingPart(tk);
  if (!missing) {
    describe(tk.title, body);
    return;
  }
  const install = `apt-get install ${tk.packages.join(' ')}`;
  if (IN_CI) {
    describe(tk.title, () => {
      test('the toolkit is installed (CI=true: a missing toolkit is a failure)', () => {
        throw new Error(`${tk.title}: ${missing}. Install it with: ${install}`);
      });
    });
    return;
  }
  const bar = '!'.repeat(78);
  console.warn(
    `\n${bar}\n!! SKIPPING the ${tk.title} interop tests: ${missing}.\n!! Install the Debian package(s) to run them: ${install}\n${bar}\n`,
  );
  describe.skip(tk.title, body);
}

/** An empty build folder for this run (test/interop/.build/<id>, git-ignored). */
export function freshBuildDir(id: string): string {
  const dir = path.join(BUILD_ROOT, id);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

export interface RunResult {
  readonly stdout: string;
  readonly stderr: string;
}

export class CommandFailed extends Error {}

/**
 * Runs a command without blocking the event loop (the server under test lives in this process)
 * and resolves with its output; rejects with the command line, exit status and output otherwise.
 */
export function run(
  cmd: string,
  args: readonly string[],
  opts: { cwd?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new CommandFailed(`${cmd}: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = Buffer.concat(err).toString('utf8');
      if (code === 0) resolve({ stdout, stderr });
      else {
        const tail = (s: string) => s.trim().split('\n').slice(-25).join('\n');
        reject(
          new CommandFailed(
            `${[cmd, ...args].join(' ')}\nexited with ${signal ?? code}\n--- stderr\n${tail(stderr)}\n--- stdout\n${tail(stdout)}`,
          ),
        );
      }
    });
  });
}

/**
 * Runs a stack's client program and reads back its one-line JSON report. With `failOnStderr`, any
 * output on stderr (the toolkit warned while calling the service) fails it, under that heading.
 */
export async function runClient(
  cmd: string,
  args: readonly string[],
  opts: { failOnStderr?: string } = {},
): Promise<Report> {
  const { stdout, stderr } = await run(cmd, args);
  if (opts.failOnStderr !== undefined && stderr.trim()) throw new Error(`${opts.failOnStderr}:\n${stderr}`);
  return parseReport(stdout);
}

/** Lines of a generator's output that report a warning or an error. */
export function complaints(output: string): string[] {
  return output.split(/\r?\n/).filter((l) => /\b(warn(ing)?|error|fail(ed|ure)?)\b/i.test(l));
}

/** The installed version of a Debian package, or null when it is not installed. */
export function debianVersion(pkg: string): string | null {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Status} ${Version}', pkg], { encoding: 'utf8' });
  const m = /install ok installed (\S+)/.exec(r.stdout ?? '');
  return r.status === 0 && m ? m[1] : null;
}

/** Each transport's client report, or the error that kept it from being produced. */
export class Reports<K extends string> {
  private readonly got = new Map<K, unknown>();

  /** Runs fn and keeps its report or its error; never rejects, so one broken client fails only its own tests. */
  async collect(key: K, fn: () => Promise<unknown>): Promise<void> {
    try {
      this.got.set(key, await fn());
    } catch (e) {
      this.got.set(key, e instanceof Error ? e : new Error(String(e)));
    }
  }

  get<T>(key: K): T {
    if (!this.got.has(key)) throw new Error(`no report for ${key}: the suite's beforeAll did not get that far`);
    const r = this.got.get(key);
    if (r instanceof Error) throw r;
    return r as T;
  }
}
