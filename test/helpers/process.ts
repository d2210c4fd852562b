// `reglookup` run as its own process, the way an operator runs it (through ts-node, so that no
// build is needed): its output collected, its exit awaited; or a service started from any command
// line that serves (an image's CMD), found by the 'listening' line of its log.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';

export const CLI = path.resolve(__dirname, '../../src/cli.ts');

export interface Running {
  readonly child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves when stdout has `count` lines matching `re`. */
  waitFor(re: RegExp, count?: number, timeoutMs?: number): Promise<string[]>;
  exited: Promise<number | null>;
}

export function runCli(args: string[], env: Record<string, string>): Running {
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', CLI, ...args], {
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
  const run = runCli(['serve'], {
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

/** Starts `reglookup serve` from the sources, or `argv` (e.g. an image's CMD) in `cwd`. */
export async function startServeProcess(
  env: Record<string, string>,
  opts: { argv?: string[]; cwd?: string; timeoutMs?: number } = {},
): Promise<ServeProcess> {
  const argv = opts.argv ?? [process.execPath, '-r', 'ts-node/register/transpile-only', CLI, 'serve'];
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
