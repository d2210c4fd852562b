// `reglookup` run as its own process, the way an operator runs it: one command to its end
// (runCli), one started and watched (startCli), or a service that serves (serve, serveCli,
// startServeProcess, also for any command line that serves, such as an image's CMD). The command is
// the sources compiled once per test run into dist-test/ by the projects' globalSetup
// (test/helpers/build.js), so that a process starts as fast as the installed one.

import { spawn, spawnSync, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The compiled command line; node runs it as bin/reglookup.js runs dist/cli.js. */
export const CLI = path.resolve(__dirname, '../../dist-test/cli.js');
if (!fs.existsSync(CLI))
  throw new Error(`${CLI} is missing: run these tests through jest.config.js, whose globalSetup builds it`);

/** The environment a test process hands down, without the settings of the test run itself. */
function cleanEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (
      !/^(PORT|HOST|DATABASE_URL|LOG_|SAMPLE_DATA|WORKERS|USERNAME_POLICY|RATE_LIMIT|REQUEST_TIMEOUT|MAX_BODY|XML_MAX|NODE_OPTIONS)/.test(
        k,
      )
    )
      out[k] = v;
  return { ...out, ...env };
}

/** One command run to its end. */
export function runCli(
  args: readonly string[],
  env: Record<string, string>,
  input?: string,
): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    env: cleanEnv(env),
    encoding: 'utf8',
    timeout: 60_000,
    input,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export interface Served {
  /** http://127.0.0.1:PORT/api/reg.asmx */
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything written to stdout so far. */
  output(): string;
  stop(): Promise<void>;
}

/** `reglookup serve` on a free loopback port; resolves once it logs the address it listens on. */
export function serve(env: Record<string, string>, extraNodeArgs: readonly string[] = []): Promise<Served> {
  const child = spawn(process.execPath, [...extraNodeArgs, CLI, 'serve'], {
    env: cleanEnv({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await closed;
  };
  return new Promise<Served>((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`no address logged within 30 s: ${out}\n${err}`));
    }, 30_000);
    const look = () => {
      const m = /(http:\/\/127\.0\.0\.1:\d+\/api\/reg\.asmx)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout.off('data', look);
      resolve({ url: m[1], child, output: () => out, stop });
    };
    child.stdout.on('data', look);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited ${code}: ${out}\n${err}`));
    });
  });
}

export interface Running {
  readonly child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves when stdout has `count` lines matching `re`. */
  waitFor(re: RegExp, count?: number, timeoutMs?: number): Promise<string[]>;
  exited: Promise<number | null>;
}

/** `reglookup ARGS` started, with its output collected as it comes. */
export function startCli(args: string[], env: Record<string, string>): Running {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, LOG_FORMAT: 'json', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const waiters: (() => void)[] = [];
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    for (const w of [...waiters]) w();
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(re, count = 1, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const lines = out.split('\n').filter((l) => re.test(l));
          if (lines.length >= count) {
            waiters.splice(waiters.indexOf(check), 1);
            clearTimeout(timer);
            resolve(lines);
          }
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(check), 1);
          reject(new Error(`waited for ${count} x ${re}; stdout:\n${out}\nstderr:\n${err}`));
        }, timeoutMs);
        waiters.push(check);
        void exited.then(() => setTimeout(check, 0));
        check();
      });
    },
  };
}

/** A "listening" line, in either log format. */
export const LISTENING = /"message":"listening"| info listening /;

/** Starts `reglookup serve` on a free loopback port and resolves with its base URL once it listens. */
export async function serveCli(env: Record<string, string>): Promise<{ run: Running; url: string; port: number }> {
  const run = startCli(['serve'], {
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: 'sqlite::memory:',
    LOG_LEVEL: 'info',
    ...env,
  });
  try {
    const [line] = await Promise.race([
      run.waitFor(LISTENING),
      run.exited.then((c) => Promise.reject(new Error(`exited ${c}: ${run.stderr()}`))),
    ]);
    const url = (/(http:\/\/[^"\s]+)\/api\/reg\.asmx/.exec(line) as RegExpExecArray)[1];
    return { run, url, port: Number(new URL(url).port) };
  } catch (e) {
    run.child.kill('SIGKILL');
    throw e;
  }
}

export interface ServeProcess {
  /** http://host:port (without /api/reg.asmx). */
  readonly base: string;
  readonly child: ChildProcessWithoutNullStreams;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  stop(): Promise<void>;
}

/** Starts `reglookup serve`, or `argv` (e.g. an image's CMD) in `cwd`. */
export async function startServeProcess(
  env: Record<string, string>,
  opts: { argv?: string[]; cwd?: string; timeoutMs?: number } = {},
): Promise<ServeProcess> {
  const argv = opts.argv ?? [process.execPath, CLI, 'serve'];
  const child = spawn(argv[0], argv.slice(1), {
    cwd: opts.cwd,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', LOG_FORMAT: 'json', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const closed = new Promise((r) => child.on('close', r));
    child.kill('SIGTERM');
    await closed;
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no 'listening' line within the time: ${out}`)),
        opts.timeoutMs ?? 60_000,
      );
      const look = () => {
        const m =
          /"message":"listening"[^\n]*"url":"(http:\/\/[^"]+)"|"url":"(http:\/\/[^"]+)"[^\n]*"message":"listening"/.exec(
            out,
          );
        if (m) {
          clearTimeout(timer);
          resolve(m[1] ?? m[2]);
        }
      };
      child.stdout.on('data', look);
      child.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`exited with ${code}: ${out}`));
      });
    });
    return { base: url.replace(/\/api\/reg\.asmx$/, ''), child, output: () => out, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
