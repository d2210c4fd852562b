// A service run as its own process, the way an operator runs it (`reglookup serve`, or any other
// command line that serves), found by the 'listening' line of its log.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';

export const CLI = path.resolve(__dirname, '../../src/cli.ts');

export interface ServeProcess {
  /** http://host:port (without /api/reg.asmx). */
  readonly base: string;
  readonly child: ChildProcessWithoutNullStreams;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  stop(): Promise<void>;
}

/** Starts `reglookup serve` from the sources, or `argv` (e.g. an image's CMD) in `cwd`. */
export async function startServeProcess(env: Record<string, string>, opts: { argv?: string[]; cwd?: string; timeoutMs?: number } = {}): Promise<ServeProcess> {
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
      const timer = setTimeout(() => reject(new Error(`no 'listening' line within the time: ${out}`)), opts.timeoutMs ?? 60_000);
      const look = () => {
        const m = /"message":"listening"[^\n]*"url":"(http:\/\/[^"]+)"|"url":"(http:\/\/[^"]+)"[^\n]*"message":"listening"/.exec(out);
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
