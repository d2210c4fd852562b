// A PostgreSQL server of the test's own, on a free port, that the test may stop and start again
// (the machine's server on 5432 is shared and left alone). Debian keeps the server binaries under
// /usr/lib/postgresql/<version>/bin. initdb refuses to run as root: as root, the cluster is made
// and run as the `postgres` user, in a temporary folder it owns. privatePrimaryAndReplica() adds a
// streaming replica of such a server (pg_basebackup -R), for the read-replica tests. asServerUser,
// serverDir and serverOf let a test run its own commands (the compose file's replica scripts) the same way.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './port';

/** The newest installed server's bin folder, or null when there is none. */
export function postgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return null;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? path.join(root, versions[0], 'bin') : null;
}

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  readonly url: string;
  readonly port: number;
  /** The server's data folder (its postmaster.pid names the server's process). */
  readonly data: string;
  start(): void;
  /** pg_ctl stop -m fast: connections are ended (57P01), new ones refused. */
  stop(): void;
  /** Stops the server and removes its files. */
  destroy(): void;
}

/**
 * The command line that runs `file args` as the server's user: the `postgres` user when this process
 * is root (initdb refuses root), with `env` added to its environment; else as it is.
 */
export function asServerUser(
  file: string,
  args: string[],
  env: Record<string, string> = {},
): { file: string; args: string[]; env: NodeJS.ProcessEnv } {
  if (process.getuid?.() === 0) {
    return {
      file: 'runuser',
      args: ['-u', 'postgres', '--', 'env', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), file, ...args],
      env: process.env,
    };
  }
  return { file, args, env: { ...process.env, ...env } };
}

/** Runs a server binary, as the `postgres` user when this process is root (initdb refuses root). */
function runner(bin: string, dir: string): (cmd: string, args: string[]) => void {
  return (cmd, args) => {
    const { file, args: argv } = asServerUser(path.join(bin, cmd), args);
    const r = spawnSync(file, argv, { encoding: 'utf8', cwd: dir, timeout: 60_000 });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stdout}${r.stderr}`);
  };
}

/** A server on `data` (already made) in `dir`, on `port`: started, stopped, destroyed with its folder. */
export function serverOf(bin: string, dir: string, data: string, port: number): PrivatePostgres {
  const asRoot = process.getuid?.() === 0;
  const run = runner(bin, dir);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    data,
    start: () =>
      run('pg_ctl', [
        '-D',
        data,
        '-o',
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
        '-l',
        path.join(dir, 'log'),
        '-w',
        'start',
      ]),
    stop: () => run('pg_ctl', ['-D', data, '-w', 'stop', '-m', 'fast']),
    destroy: () => {
      spawnSync(
        asRoot ? 'runuser' : path.join(bin, 'pg_ctl'),
        asRoot
          ? ['-u', 'postgres', '--', path.join(bin, 'pg_ctl'), '-D', data, '-w', 'stop', '-m', 'immediate']
          : ['-D', data, '-w', 'stop', '-m', 'immediate'],
      );
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A fresh temporary folder the server's user owns. */
export function serverDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  if (process.getuid?.() === 0) spawnSync('chown', ['postgres', dir]);
  return dir;
}

/**
 * A private primary (as privatePostgres) and a streaming replica of it made by `pg_basebackup -R`
 * (hot standby: it answers reads), each in its own temporary folder on its own free port.
 */
export async function privatePrimaryAndReplica(): Promise<{ primary: PrivatePostgres; replica: PrivatePostgres }> {
  const primary = await privatePostgres();
  const bin = postgresBin() as string;
  const dir = serverDir('reglookup-pg-replica-');
  const data = path.join(dir, 'data');
  const port = await freePort();
  try {
    runner(bin, dir)('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primary.port),
      '-U',
      'postgres',
      '-D',
      data,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
    ]);
  } catch (e) {
    primary.destroy();
    throw e;
  }
  const replica = serverOf(bin, dir, data, port);
  replica.start();
  return { primary, replica };
}

export async function privatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBin();
  if (!bin) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql (Debian package postgresql)');
  const dir = serverDir('reglookup-pg-');
  const data = path.join(dir, 'data');
  const port = await freePort();
  runner(bin, dir)('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-N']);
  const server = serverOf(bin, dir, data, port);
  server.start();
  return server;
}

/**
 * The server's processes: the postmaster (first line of `postmaster.pid`) and its children (read
 * from /proc), for a test that freezes the whole server with SIGSTOP, as a hung host would.
 */
export function serverProcesses(data: string): number[] {
  const postmaster = Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) children.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return [postmaster, ...children];
}

/**
 * Freezes the server (SIGSTOP to the postmaster, then its children): connections are accepted by
 * the kernel and nothing answers. The returned function thaws it (children first, then the postmaster).
 */
export function freezeServer(data: string): () => void {
  const pids = serverProcesses(data);
  for (const pid of pids) process.kill(pid, 'SIGSTOP');
  return () => {
    for (const pid of [...pids].reverse()) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // Gone meanwhile.
      }
    }
  };
}
