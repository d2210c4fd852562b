// The deployment files, checked without a Docker engine: the compose file as `docker-compose config`
// reads it, the nginx configuration as `nginx -t` reads it and as nginx serves through it, and the
// image's start command (the Dockerfile's CMD, in the image's layout) run against PostgreSQL.
// Expectations come from the issue and the README: three replicas, PostgreSQL with a volume, Redis,
// nginx on 8080, health checks, start order, SAMPLE_DATA=false, a non-root user. The read replica
// (docs/scaling.md, "Docker and compose"): docker-compose.replica.yml on top
// of it, checked the same way, and its two scripts run outside Docker against a private primary.

import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describePostgres, testSchema } from '../helpers/postgres';
import {
  asServerUser,
  postgresBin,
  privatePostgres,
  serverDir,
  serverOf,
  type PrivatePostgres,
} from '../helpers/private-postgres';
import { startServeProcess, type ServeProcess } from '../helpers/cli';
import { freePort } from '../helpers/port';

jest.setTimeout(240_000);

const ROOT = path.resolve(__dirname, '../..');
const ci = process.env.CI === 'true';

function have(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
}

function describeIf(tool: string, pkg: string, name: string, fn: () => void): void {
  const ok = have(tool);
  if (!ok && !ci) process.stderr.write(`${name}: skipped, ${tool} is not installed (Debian package ${pkg})\n`);
  (ok || ci ? describe : describe.skip)(name, fn);
}

type Service = {
  image?: string;
  build?: unknown;
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: { published: number | string; target: number }[] | string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  deploy?: { replicas?: number };
  command?: string[];
  entrypoint?: string[];
  user?: string;
  networks?: Record<string, { ipv4_address?: string } | null>;
  profiles?: string[];
};

type Network = { ipam?: { config?: { subnet?: string; ip_range?: string }[] } };

/** An IPv4 address as a number, for range checks written out here rather than taken from the service's code. */
function ipv4(a: string): number {
  const parts = a.split('.').map(Number);
  expect(parts).toHaveLength(4);
  return parts.reduce((n, p) => n * 256 + p, 0);
}

function inCidr(addr: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  return Math.floor(ipv4(addr) / size) === Math.floor(ipv4(base) / size);
}

type Compose = {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
  networks: Record<string, Network>;
};

/** `docker-compose config` of these files, one on top of the other, as JSON. */
function composeConfig(files: readonly string[]): Compose {
  const yaml = execFileSync('docker-compose', [...files.flatMap((f) => ['-f', path.join(ROOT, f)]), 'config'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  // PyYAML comes with docker-compose: the normalised file as JSON.
  const json = execFileSync(
    'python3',
    ['-c', 'import sys, json, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)'],
    { input: yaml, encoding: 'utf8' },
  );
  return JSON.parse(json) as Compose;
}

/** The services `docker compose up -d` starts: those in no profile (monitoring is opt-in: monitoring.test.ts). */
function startedByDefault(services: Record<string, Service>): string[] {
  return Object.keys(services)
    .filter((name) => services[name].profiles === undefined)
    .sort();
}

/** The named volume mounted at `target`, if any. */
function namedVolumeAt(svc: Service, target: string): string | undefined {
  return (svc.volumes ?? []).find((v) => v.split(':')[1] === target)?.split(':')[0];
}

const BASE = ['docker-compose.yml'];
const WITH_REPLICA = ['docker-compose.yml', 'docker-compose.replica.yml'];

// Everything docker-compose.yml promises holds alone and with the replica file on top: the replica
// adds a service and one variable, and changes nothing else (TRUST_PROXY, nginx's address, order).
describeIf('docker-compose', 'docker-compose', 'docker-compose.yml', () => {
  describe.each([[BASE.join(' + ')], [WITH_REPLICA.join(' + ')]])('%s', (files) => {
    let services: Record<string, Service>;
    let volumes: Record<string, unknown>;
    let networks: Record<string, Network>;
    beforeAll(() => {
      ({ services, volumes, networks } = composeConfig(files.split(' + ')));
    });

    test('PostgreSQL keeps its data in a named volume and has a health check', () => {
      const pg = services.postgres;
      expect(pg.image).toMatch(/^postgres:/);
      const data = (pg.volumes ?? []).find((v) => v.split(':')[1] === '/var/lib/postgresql/data');
      expect(data).toBeDefined();
      expect(Object.keys(volumes)).toContain(data!.split(':')[0]);
      expect(pg.healthcheck?.test.join(' ')).toMatch(/pg_isready/);
    });

    test('Redis, with a health check', () => {
      expect(services.redis.image).toMatch(/^redis:/);
      expect(services.redis.healthcheck?.test.join(' ')).toMatch(/redis-cli ping/);
    });

    test('three service replicas on PostgreSQL and Redis, without the sample data, started after both are healthy', () => {
      const svc = services.reglookup;
      expect(svc.build).toBeDefined();
      expect(svc.deploy?.replicas).toBe(3);
      expect(svc.environment?.DATABASE_URL).toMatch(/^postgres:\/\/[^@]+@postgres:5432\//);
      expect(svc.environment?.REDIS_URL).toBe('redis://redis:6379');
      expect(svc.environment?.SAMPLE_DATA).toBe('false');
      expect(svc.environment?.TRUST_PROXY).toBeTruthy();
      expect(svc.depends_on?.postgres.condition).toBe('service_healthy');
      expect(svc.depends_on?.redis.condition).toBe('service_healthy');
      expect(svc.healthcheck?.test.join(' ')).toMatch(/\/healthz/);
      // Replicas publish no port of their own: only nginx is reachable.
      expect(svc.ports).toBeUndefined();
    });

    test("TRUST_PROXY names nginx's own fixed address and nothing else, so no other container or host can forge X-Forwarded-For", () => {
      // nginx has a fixed address on the one network, inside its fixed subnet...
      const ngxNets = Object.entries(services.nginx.networks ?? {});
      expect(ngxNets).toHaveLength(1);
      const [net, attach] = ngxNets[0];
      const nginxAddr = attach?.ipv4_address;
      expect(nginxAddr).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      const ipam = networks[net]?.ipam?.config ?? [];
      expect(ipam).toHaveLength(1);
      expect(inCidr(nginxAddr!, ipam[0].subnet!)).toBe(true);
      // ...that no other container can be given: dynamic addresses come from an ip_range without it.
      expect(ipam[0].ip_range).toBeDefined();
      expect(inCidr(ipam[0].ip_range!.split('/')[0], ipam[0].subnet!)).toBe(true);
      expect(inCidr(nginxAddr!, ipam[0].ip_range!)).toBe(false);
      // Every service that reads TRUST_PROXY trusts exactly that address: no range, no second entry.
      const readers = Object.entries(services).filter(([, s]) => s.environment?.TRUST_PROXY !== undefined);
      expect(readers.map(([name]) => name).sort()).toEqual(['migrate', 'reglookup']);
      for (const [, s] of readers) expect(s.environment!.TRUST_PROXY.trim()).toBe(nginxAddr);
      // Replicas are on the same network as nginx (the default one when none is named).
      expect(Object.keys(services.reglookup.networks ?? { default: null })).toEqual([net]);
    });

    test('migrations run once, to completion, before the replicas start', () => {
      expect(services.migrate.command).toEqual(['node', 'dist/cli.js', 'migrate']);
      expect(services.reglookup.depends_on?.migrate.condition).toBe('service_completed_successfully');
    });

    test('nginx in front on 8080, with the repository configuration, after the replicas are healthy', () => {
      const ngx = services.nginx;
      expect(ngx.image).toMatch(/^nginx:/);
      expect(JSON.stringify(ngx.ports)).toMatch(/"published":"?8080"?.*"target":8080|8080:8080/);
      expect(
        (ngx.volumes ?? []).some((v) =>
          v.startsWith(path.join(ROOT, 'deploy', 'nginx.conf') + ':/etc/nginx/nginx.conf'),
        ),
      ).toBe(true);
      expect(ngx.depends_on?.reglookup.condition).toBe('service_healthy');
      expect(ngx.healthcheck).toBeDefined();
    });

    test('every new primary is made ready for a replica: its init script mounted, executable, with a role, slot and the compose subnet', () => {
      const pg = services.postgres;
      const init = (pg.volumes ?? []).find((v) =>
        v.startsWith(path.join(ROOT, 'deploy', 'postgres-primary-init.sh') + ':'),
      );
      expect(init).toBeDefined();
      expect(init!.split(':')[1]).toMatch(/^\/docker-entrypoint-initdb\.d\/[^/]+\.sh$/);
      // The image runs an executable script in its own shell (and sources one that is not, into its own).
      expect(fs.statSync(path.join(ROOT, 'deploy', 'postgres-primary-init.sh')).mode & 0o111).not.toBe(0);
      expect(pg.environment?.REPLICATION_USER).toBeTruthy();
      expect(pg.environment?.REPLICATION_PASSWORD).toBeTruthy();
      expect(pg.environment?.REPLICATION_SLOT).toBeTruthy();
      expect(pg.environment?.REPLICATION_NETWORK).toBe(networks.default.ipam!.config![0].subnet);
    });
  });

  test('`docker compose up -d` alone runs no replica and reads none', () => {
    const { services } = composeConfig(BASE);
    expect(startedByDefault(services)).toEqual(['migrate', 'nginx', 'postgres', 'redis', 'reglookup']);
    for (const s of Object.values(services)) expect(s.environment?.DATABASE_READ_URL).toBeUndefined();
  });

  describe('docker-compose.replica.yml on top of it', () => {
    let c: Compose;
    beforeAll(() => {
      c = composeConfig(WITH_REPLICA);
    });

    test("adds postgres-replica: the primary's image, a volume of its own, a pg_isready health check, started after the primary is healthy", () => {
      const replica = c.services['postgres-replica'];
      expect(startedByDefault(c.services)).toEqual([
        'migrate',
        'nginx',
        'postgres',
        'postgres-replica',
        'redis',
        'reglookup',
      ]);
      expect(replica.image).toBe(c.services.postgres.image);
      const own = namedVolumeAt(replica, '/var/lib/postgresql/data');
      expect(own).toBeDefined();
      expect(Object.keys(c.volumes)).toContain(own);
      expect(own).not.toBe(namedVolumeAt(c.services.postgres, '/var/lib/postgresql/data'));
      expect(replica.healthcheck?.test.join(' ')).toMatch(/pg_isready/);
      expect(replica.depends_on?.postgres.condition).toBe('service_healthy');
      expect(replica.ports).toBeUndefined();
    });

    test('the replica runs deploy/postgres-replica.sh as the postgres user, with the role, password and slot the primary made', () => {
      const replica = c.services['postgres-replica'];
      const script = (replica.volumes ?? []).find((v) =>
        v.startsWith(path.join(ROOT, 'deploy', 'postgres-replica.sh') + ':'),
      );
      expect(script).toBeDefined();
      expect(replica.entrypoint).toEqual(['sh', script!.split(':')[1]]);
      expect(replica.user).toBe('postgres');
      const env = replica.environment ?? {};
      const primary = c.services.postgres.environment ?? {};
      expect(env.PRIMARY_HOST).toBe('postgres');
      for (const k of ['REPLICATION_USER', 'REPLICATION_PASSWORD', 'REPLICATION_SLOT'])
        expect([k, env[k]]).toEqual([k, primary[k]]);
      // PGDATA inside its volume, not the volume itself: the clone is renamed into place when complete.
      expect(path.posix.dirname(env.PGDATA ?? '')).toBe('/var/lib/postgresql/data');
    });

    test('the instances read the replica (DATABASE_READ_URL, same database and role as DATABASE_URL) and do not wait for it', () => {
      const svc = c.services.reglookup;
      const read = new URL(svc.environment!.DATABASE_READ_URL);
      const primary = new URL(svc.environment!.DATABASE_URL);
      expect(read.hostname).toBe('postgres-replica');
      expect(read.port).toBe('5432');
      expect([read.username, read.password, read.pathname]).toEqual([
        primary.username,
        primary.password,
        primary.pathname,
      ]);
      // A missing or cloning replica is not a failure: lookups go to the primary meanwhile.
      expect(Object.keys(svc.depends_on ?? {})).not.toContain('postgres-replica');
      expect(Object.keys(c.services.nginx.depends_on ?? {})).not.toContain('postgres-replica');
    });
  });
});

async function sql(url: string, text: string, values: unknown[] = []): Promise<pg.QueryResultRow[]> {
  const c = new pg.Client(url);
  await c.connect();
  try {
    return (await c.query(text, values)).rows;
  } finally {
    await c.end();
  }
}

async function until(what: string, ok: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok().catch(() => false))) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

// The two scripts as the containers run them, but outside Docker: deploy/postgres-primary-init.sh
// against a private primary (initdb in a temporary folder, a spare port; the machine's server is
// left alone) whose pg_hba.conf has no replication line of its own, then deploy/postgres-replica.sh
// with its settings pointing at that primary. The Debian server binaries stand in for the image's.
const PG_BIN = postgresBin();
if (PG_BIN === null && !ci)
  process.stderr.write(
    'compose replica scripts: skipped, no PostgreSQL server binaries under /usr/lib/postgresql (Debian package postgresql)\n',
  );
(PG_BIN !== null || ci ? describe : describe.skip)(
  'deploy/postgres-primary-init.sh and deploy/postgres-replica.sh, outside Docker, on a private primary',
  () => {
    const bin = PG_BIN as string;
    const slot = 'reglookup_replica';
    // A quote in it: the scripts must pass it through psql and libpq, never paste it into SQL.
    const password = "rep'l s3cret";
    let primary: PrivatePostgres;
    let dir: string;
    let data: string;
    let replica: PrivatePostgres;
    let proc: ChildProcess | undefined;
    let output = '';

    const primaryEnv = () => ({
      PATH: `${bin}:${process.env.PATH}`,
      PGHOST: '127.0.0.1',
      PGPORT: String(primary.port),
      POSTGRES_USER: 'postgres',
      REPLICATION_USER: 'replicator',
      REPLICATION_PASSWORD: password,
      REPLICATION_SLOT: slot,
      REPLICATION_NETWORK: '127.0.0.1/32',
    });
    const replicaEnv = () => ({
      PATH: `${bin}:${process.env.PATH}`,
      PGDATA: data,
      PRIMARY_HOST: '127.0.0.1',
      PRIMARY_PORT: String(primary.port),
      REPLICATION_USER: 'replicator',
      REPLICATION_PASSWORD: password,
      REPLICATION_SLOT: slot,
      PRIMARY_WAIT_SECONDS: '30',
    });

    function initPrimary(): string {
      const run = asServerUser('sh', [path.join(ROOT, 'deploy', 'postgres-primary-init.sh')], primaryEnv());
      const r = spawnSync(run.file, run.args, { env: run.env, cwd: dir, encoding: 'utf8', timeout: 60_000 });
      if (r.status !== 0) throw new Error(`postgres-primary-init.sh exited ${r.status}: ${r.stdout}${r.stderr}`);
      return r.stdout;
    }

    /** Starts deploy/postgres-replica.sh (it ends by running PostgreSQL) and waits until the replica answers. */
    async function startReplica(): Promise<string> {
      output = '';
      const run = asServerUser(
        'sh',
        [
          path.join(ROOT, 'deploy', 'postgres-replica.sh'),
          '-p',
          String(replica.port),
          '-k',
          dir,
          '-c',
          'listen_addresses=127.0.0.1',
          '-c',
          'fsync=off',
        ],
        replicaEnv(),
      );
      const child = spawn(run.file, run.args, { env: run.env, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
      proc = child;
      child.stdout.on('data', (b: Buffer) => (output += b.toString()));
      child.stderr.on('data', (b: Buffer) => (output += b.toString()));
      let exited: number | null = null;
      child.on('exit', (code) => (exited = code ?? -1));
      await until('the replica answers', async () => {
        if (exited !== null) throw new Error(`postgres-replica.sh exited ${exited}: ${output}`);
        await sql(replica.url, 'SELECT 1');
        return true;
      }).catch((e: Error) => {
        throw new Error(`${e.message}\n${output}`);
      });
      return output;
    }

    async function stopReplica(): Promise<void> {
      if (!proc || proc.exitCode !== null) return;
      const closed = new Promise((r) => proc!.on('close', r));
      replica.stop();
      await closed;
    }

    const notes = async (url: string) =>
      (await sql(url, 'SELECT note FROM replica_check ORDER BY note')).map((r) => r.note as string);

    beforeAll(async () => {
      primary = await privatePostgres();
      // No replication line but the script's: initdb's own (local and 127.0.0.1, trust) would let
      // anyone replicate without a password and so prove nothing.
      fs.writeFileSync(
        path.join(primary.data, 'pg_hba.conf'),
        'local all all trust\nhost all postgres 127.0.0.1/32 trust\n',
      );
      await sql(primary.url, 'SELECT pg_reload_conf()');
      await sql(
        primary.url,
        "CREATE TABLE replica_check (note text); INSERT INTO replica_check VALUES ('1 before the clone')",
      );
      dir = serverDir('reglookup-compose-replica-');
      data = path.join(dir, 'pgdata');
      replica = serverOf(bin, dir, data, await freePort());
    });
    afterAll(async () => {
      await stopReplica().catch(() => undefined);
      replica?.destroy();
      primary?.destroy();
    });

    test('the primary init script makes the role, the slot and one pg_hba.conf line, and may run again', async () => {
      expect(initPrimary()).toMatch(
        /added to .*pg_hba\.conf: host replication replicator 127\.0\.0\.1\/32 scram-sha-256/,
      );
      expect(initPrimary()).not.toMatch(/added to/);
      const hba = fs.readFileSync(path.join(primary.data, 'pg_hba.conf'), 'utf8').split('\n');
      expect(hba.filter((l) => /^host\s+replication\b/.test(l))).toEqual([
        'host replication replicator 127.0.0.1/32 scram-sha-256',
      ]);
      expect(
        await sql(
          primary.url,
          "SELECT rolreplication, rolcanlogin, rolsuper FROM pg_roles WHERE rolname = 'replicator'",
        ),
      ).toEqual([{ rolreplication: true, rolcanlogin: true, rolsuper: false }]);
      expect(await sql(primary.url, 'SELECT slot_type FROM pg_replication_slots WHERE slot_name = $1', [slot])).toEqual(
        [{ slot_type: 'physical' }],
      );
    });

    test('the first start clones the primary and runs a hot standby that streams through the slot', async () => {
      const out = await startReplica();
      expect(out).toMatch(/cloning 127\.0\.0\.1:\d+ into/);
      expect(out).toMatch(/clone complete/);
      expect(fs.existsSync(`${data}.partial`)).toBe(false);
      expect((await sql(replica.url, 'SELECT pg_is_in_recovery() AS r'))[0].r).toBe(true);
      expect(await notes(replica.url)).toEqual(['1 before the clone']);
      await sql(primary.url, "INSERT INTO replica_check VALUES ('2 while streaming')");
      await until('the row streamed to the replica', async () => (await notes(replica.url)).length === 2);
      expect(await sql(primary.url, 'SELECT active FROM pg_replication_slots WHERE slot_name = $1', [slot])).toEqual([
        { active: true },
      ]);
    });

    test('a second start on the cloned data does not clone again, and catches up on what was written while it was down', async () => {
      const inode = fs.statSync(data).ino;
      await stopReplica();
      await sql(primary.url, "INSERT INTO replica_check VALUES ('3 while the replica was down')");
      const out = await startReplica();
      expect(out).toMatch(/already in .*no clone/);
      expect(out).not.toMatch(/cloning/);
      expect(fs.statSync(data).ino).toBe(inode);
      // It reconnected by itself, with the password pg_basebackup -R wrote, through the same slot.
      await until('the replica caught up', async () => (await notes(replica.url)).length === 3);
      expect(await notes(replica.url)).toEqual([
        '1 before the clone',
        '2 while streaming',
        '3 while the replica was down',
      ]);
      expect((await sql(replica.url, 'SELECT pg_is_in_recovery() AS r'))[0].r).toBe(true);
      await stopReplica();
    });

    test('a data folder holding something that is not a cluster is not cloned over', () => {
      const stray = path.join(dir, 'stray');
      fs.mkdirSync(stray);
      fs.writeFileSync(path.join(stray, 'keep.txt'), 'mine');
      const r = spawnSync('sh', [path.join(ROOT, 'deploy', 'postgres-replica.sh')], {
        env: { ...process.env, ...replicaEnv(), PGDATA: stray },
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(r.status).not.toBe(0);
      expect(r.stderr).toMatch(/no PG_VERSION.*not cloning/);
      expect(fs.readdirSync(stray)).toEqual(['keep.txt']);
    });
  },
);

/** The repository's nginx.conf with the replicas' name pointed at `upstream` and the port at `port`. */
function nginxCopy(dir: string, upstream: string, port: number): string {
  const conf = fs.readFileSync(path.join(ROOT, 'deploy', 'nginx.conf'), 'utf8');
  expect(conf).toMatch(/server reglookup:8080\b/);
  expect(conf).toMatch(/listen 8080;/);
  const file = path.join(dir, 'nginx.conf');
  fs.writeFileSync(
    file,
    conf
      .replace(/server reglookup:8080\b/, `server ${upstream}`)
      .replace(/listen 8080;/, `listen 127.0.0.1:${port};`)
      .replace(/pid [^;]+;/, `pid ${path.join(dir, 'nginx.pid')};`)
      // The access log into a file of the test's own (the container's stdout is not the test's).
      .replace('access_log /dev/stdout noquery;', `access_log ${path.join(dir, 'access.log')} noquery;`)
      // Temporary files in the test's own directory, not the machine's /var/lib/nginx.
      .replace(
        /^http \{$/m,
        `http {\n${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${path.join(dir, `${t}_temp`)};`).join('\n')}`,
      ),
  );
  return file;
}

function nginxArgs(dir: string, file: string): string[] {
  return ['-p', `${dir}/`, '-c', file, '-e', 'stderr', '-g', 'daemon off;'];
}

describeIf('nginx', 'nginx', 'deploy/nginx.conf', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-nginx-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('nginx -t accepts it', async () => {
    const file = nginxCopy(dir, '127.0.0.1:9', await freePort());
    const t = spawnSync('nginx', ['-t', ...nginxArgs(dir, file)], { encoding: 'utf8' });
    expect(t.stderr).toMatch(/syntax is ok/);
    expect(t.stderr).toMatch(/test is successful/);
  });

  test('its logs hold no query string: a username sent in one is in no access or error line', async () => {
    const port = await freePort();
    // The replicas down (nothing listens on port 9): the request fails upstream, which nginx logs at `error`.
    expect(fs.readFileSync(path.join(ROOT, 'deploy', 'nginx.conf'), 'utf8')).toMatch(
      /access_log \/dev\/stdout noquery;/,
    );
    const file = nginxCopy(dir, '127.0.0.1:9', port);
    const access = path.join(dir, 'access.log');
    expect(fs.readFileSync(file, 'utf8')).toContain(`access_log ${access} noquery;`);
    const proc = spawn('nginx', nginxArgs(dir, file), { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    proc.stdout.on('data', (d: Buffer) => (stderr += d.toString()));
    const secret = 'caller-secret-7f3e9a1c5b2d4e6f';
    try {
      let status = 0;
      for (let i = 0; i < 100 && status === 0; i++) {
        status = await fetch(
          `http://127.0.0.1:${port}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=${secret}`,
          {
            headers: { Referer: `http://example.test/?username=${secret}` },
          },
        ).then(
          (r) => r.status,
          () => 0,
        );
        if (status === 0) await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).toBe(502);
    } finally {
      const closed = new Promise((r) => proc.on('close', r));
      proc.kill('SIGQUIT');
      await closed;
    }
    const lines = fs.readFileSync(access, 'utf8');
    expect(lines).toMatch(/"GET \/api\/reg\.asmx\/Check HTTP\/1\.1" 502 /);
    expect(lines + stderr).not.toContain(secret);
    expect(lines + stderr).not.toContain('username=');
  });

  describePostgres('serving through it', () => {
    const schema = testSchema();
    let a: ServeProcess;
    let b: ServeProcess;
    afterAll(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
      await schema.drop();
    });

    test('two replicas behind it answer lookups, and the WSDL carries the address the client used', async () => {
      const env = { DATABASE_URL: schema.url, TRUST_PROXY: '127.0.0.1,::1' };
      a = await startServeProcess(env);
      b = await startServeProcess(env);
      const port = await freePort();
      const conf = fs.readFileSync(nginxCopy(dir, new URL(a.base).host, port), 'utf8');
      // Both replicas in the upstream, as Docker's DNS gives nginx every replica's address.
      const file = path.join(dir, 'nginx.conf');
      fs.writeFileSync(
        file,
        conf.replace(
          `server ${new URL(a.base).host}`,
          `server ${new URL(a.base).host}; server ${new URL(b.base).host}`,
        ),
      );
      const nginx = spawnSync('nginx', ['-t', ...nginxArgs(dir, file)], { encoding: 'utf8' });
      expect(nginx.status).toBe(0);
      const { spawn } = await import('node:child_process');
      const proc = spawn('nginx', nginxArgs(dir, file), { stdio: 'ignore' });
      try {
        let up = false;
        for (let i = 0; i < 100 && !up; i++) {
          up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
            (r) => r.ok,
            () => false,
          );
          if (!up) await new Promise((r) => setTimeout(r, 100));
        }
        expect(up).toBe(true);
        const answers = await Promise.all(
          Array.from({ length: 20 }, () =>
            fetch(`http://127.0.0.1:${port}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=demo`),
          ),
        );
        expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
        const wsdl = await (await fetch(`http://localhost:${port}/api/reg.asmx?WSDL`)).text();
        expect(wsdl).toContain(`location="http://localhost:${port}/api/reg.asmx"`);
      } finally {
        const closed = new Promise((r) => proc.on('close', r));
        proc.kill('SIGQUIT');
        await closed;
      }
    });
  });
});

/** The final stage of the Dockerfile: its WORKDIR, ENV, COPY lines, HEALTHCHECK and CMD. */
function finalStage(): {
  env: Record<string, string>;
  copies: string[];
  user: string;
  cmd: string[];
  health: string[];
} {
  const text = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n\s*/g, ' ');
  const lines = text.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));
  const from = lines.map((l, i) => (/^FROM /i.test(l) ? i : -1)).filter((i) => i >= 0);
  const stage = lines.slice(from[from.length - 1]);
  const env: Record<string, string> = {};
  for (const l of stage.filter((x) => /^ENV /.test(x)))
    for (const m of l.slice(4).matchAll(/(\w+)=(\S+)/g)) env[m[1]] = m[2];
  const json = (re: RegExp) => JSON.parse(stage.find((l) => re.test(l))!.replace(re, '')) as string[];
  return {
    env,
    copies: stage.filter((l) => /^COPY /.test(l)),
    user:
      stage
        .find((l) => /^USER /.test(l))
        ?.slice(5)
        .trim() ?? 'root',
    cmd: json(/^CMD /),
    health: json(/^HEALTHCHECK .*?CMD /),
  };
}

describePostgres("the image's start command, outside Docker, on PostgreSQL", () => {
  const schema = testSchema();
  let app: string;
  let srv: ServeProcess | undefined;
  const stage = finalStage();
  afterAll(async () => {
    await srv?.stop();
    await schema.drop();
    if (app) fs.rmSync(app, { recursive: true, force: true });
  });

  test('the image runs as an unprivileged user', () => {
    expect(stage.user).not.toMatch(/^(root|0)$/);
  });

  test('laid out as the image is, the CMD serves the contract and passes the HEALTHCHECK', async () => {
    app = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-image-'));
    for (const copy of stage.copies) {
      const [, from, src, dest] = /^COPY (?:--from=(\S+) )?(\S+) (\S+)$/.exec(copy) ?? [];
      const target = dest.endsWith('/') ? path.join(app, dest, path.basename(src)) : path.join(app, dest);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      if (from === 'build' && src === '/app/dist') {
        execFileSync(
          process.execPath,
          [require.resolve('typescript/bin/tsc'), '-p', path.join(ROOT, 'tsconfig.json'), '--outDir', target],
          { stdio: 'inherit' },
        );
      } else if (from === 'deps' && src === '/app/node_modules') {
        fs.symlinkSync(path.join(ROOT, 'node_modules'), target);
      } else if (from === undefined) {
        fs.cpSync(path.join(ROOT, src), target, { recursive: true });
      } else {
        throw new Error(`the test does not know how to lay out: ${copy}`);
      }
    }
    const [exe, ...args] = stage.cmd;
    expect(exe).toBe('node');
    srv = await startServeProcess(
      // NODE_ENV=production keeps the fictional sample out unless asked for (docs/configuration.md): asked here,
      // so the CMD's answer to a known plate can be checked.
      { ...stage.env, DATABASE_URL: schema.url, PORT: '0', HOST: '127.0.0.1', SAMPLE_DATA: 'true' },
      { argv: [process.execPath, ...args], cwd: app },
    );
    const res = await fetch(`${srv.base}/api/reg.asmx/CheckUSA?RegistrationNumber=7ABC123&State=CA&username=demo`);
    expect(res.status).toBe(200);
    const port = new URL(srv.base).port;
    const [hexe, ...hargs] = stage.health;
    expect(hexe).toBe('node');
    const health = spawnSync(process.execPath, hargs, {
      env: { ...process.env, PORT: port },
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(health.status).toBe(0);
  });
});

test('a production install (`npm ci --omit=dev`) runs `prepare` without TypeScript and succeeds', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-prepare-'));
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const m = /^node (\S+)$/.exec(pkg.scripts.prepare);
    expect(m).not.toBeNull();
    fs.mkdirSync(path.join(dir, path.dirname(m![1])), { recursive: true });
    fs.copyFileSync(path.join(ROOT, m![1]), path.join(dir, m![1]));
    // No node_modules here: as after `npm ci --omit=dev`, TypeScript cannot be found.
    const run = spawnSync(process.execPath, [m![1]], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, NODE_PATH: '' },
    });
    expect(run.status).toBe(0);
    expect(fs.existsSync(path.join(dir, 'dist'))).toBe(false);
    // ...but says that there is nothing to run until dist/ comes from a build (docs/operating.md,
    // "Production install without Docker").
    expect(run.stdout).toMatch(/dist\/ must come from a build/);
    expect(run.stdout).toMatch(/npm run build/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
