// `npx reglookup serve` stopped with a SIGTERM to npx alone, as a process manager or a terminal's
// job control that knows only npx's pid sends it: npx runs the command through a shell, which exits
// on the signal without passing it on, and the service must not go on serving on its own.
// The package is laid out as an install puts it (node_modules/reglookup and its bin link), with
// the command compiled for the tests in place of dist/, so that npx runs it without installing.

import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

jest.setTimeout(60_000);

const ROOT = path.resolve(__dirname, '../..');

/** A directory where `npx reglookup` finds the package as installed, with no download. */
function installedLayout(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-npx-'));
  const pkg = path.join(dir, 'node_modules', 'reglookup');
  fs.mkdirSync(path.join(pkg, 'bin'), { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'bin', 'reglookup.js'), path.join(pkg, 'bin', 'reglookup.js'));
  fs.chmodSync(path.join(pkg, 'bin', 'reglookup.js'), 0o755);
  fs.symlinkSync(path.join(ROOT, 'dist-test'), path.join(pkg, 'dist'));
  fs.writeFileSync(
    path.join(pkg, 'package.json'),
    JSON.stringify({ name: 'reglookup', version: '0.0.0', bin: { reglookup: 'bin/reglookup.js' } }),
  );
  fs.mkdirSync(path.join(dir, 'node_modules', '.bin'));
  fs.symlinkSync('../reglookup/bin/reglookup.js', path.join(dir, 'node_modules', '.bin', 'reglookup'));
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: 'npx-stop', private: true, dependencies: { reglookup: '0.0.0' } }),
  );
  return dir;
}

/** The pids below `root`, read from /proc. */
function descendants(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      parentOf.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone since the listing
    }
  }
  const found: number[] = [];
  let frontier = [root];
  while (frontier.length > 0) {
    const next = [...parentOf].filter(([, ppid]) => frontier.includes(ppid)).map(([pid]) => pid);
    found.push(...next);
    frontier = next;
  }
  return found;
}

function commandLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

/** Running, as opposed to gone or a zombie left for whoever reaps orphans. */
function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function status(url: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.get(url, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    req.setTimeout(2000, () => req.destroy());
  });
}

async function until(what: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await what()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return what();
}

describe('npx reglookup serve', () => {
  let dir: string;
  let npx: ChildProcess | undefined;
  let server: number | undefined;

  beforeAll(() => {
    dir = installedLayout();
  });
  afterAll(() => {
    if (server !== undefined && alive(server)) process.kill(server, 'SIGKILL');
    if (npx?.exitCode === null) npx.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('stops serving within a few seconds of a SIGTERM sent to npx alone', async () => {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: 'sqlite::memory:',
      LOG_LEVEL: 'info',
      SHUTDOWN_DRAIN_MS: '0',
      npm_config_update_notifier: 'false',
    };
    npx = spawn('npx', ['--no', 'reglookup', 'serve'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    npx.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    npx.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const listening = await until(() => /"message":"listening"/.test(out), 30_000);
    expect({ listening, out: listening ? '' : out }).toEqual({ listening: true, out: '' });
    const url = /"url":"(http:\/\/[^"]+)\/api\/reg\.asmx"/.exec(out)![1];
    expect(await status(`${url}/healthz`)).toBe(200);

    // The service is a process below npx (npx, a shell, then node), not npx itself.
    server = descendants(npx.pid!).find(
      (pid) => /reglookup(\.js)? serve/.test(commandLine(pid)) && /node/.test(commandLine(pid)),
    );
    expect(server).toBeDefined();
    expect(server).not.toBe(npx.pid);

    process.kill(npx.pid!, 'SIGTERM');
    expect(await until(() => !alive(server!), 8_000)).toBe(true);
    expect(await status(`${url}/healthz`)).toBe('ECONNREFUSED');
  });
});
