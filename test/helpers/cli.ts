// Runs the real command line (`reglookup serve`, `reglookup users ...`) in its own process, as an
// operator would, from the sources in this repository.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export const CLI = path.resolve(__dirname, '../../src/cli.ts');

function nodeArgs(extra: readonly string[], args: readonly string[]): string[] {
  return [...extra, '-r', 'ts-node/register/transpile-only', CLI, ...args];
}

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
  const r = spawnSync(process.execPath, nodeArgs([], args), {
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
  const child = spawn(process.execPath, nodeArgs(extraNodeArgs, ['serve']), {
    env: cleanEnv({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
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
      child.stdout!.off('data', look);
      resolve({ url: m[1], child, output: () => out, stop });
    };
    child.stdout!.on('data', look);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited ${code}: ${out}\n${err}`));
    });
  });
}
