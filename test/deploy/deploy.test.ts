// The deployment files, checked without a Docker engine: the compose file as `docker-compose config`
// reads it, the nginx configuration as `nginx -t` reads it and as nginx serves through it, and the
// image's start command (the Dockerfile's CMD, in the image's layout) run against PostgreSQL.
// Expectations come from the issue and the README: three replicas, PostgreSQL with a volume, Redis,
// nginx on 8080, health checks, start order, SAMPLE_DATA=false, a non-root user.

import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describePostgres, testSchema } from '../helpers/postgres';
import { startServeProcess, type ServeProcess } from '../helpers/process';

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

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
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
  networks?: Record<string, { ipv4_address?: string } | null>;
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

describeIf('docker-compose', 'docker-compose', 'docker-compose.yml', () => {
  let services: Record<string, Service>;
  let volumes: Record<string, unknown>;
  let networks: Record<string, Network>;
  beforeAll(() => {
    const yaml = execFileSync('docker-compose', ['-f', path.join(ROOT, 'docker-compose.yml'), 'config'], { cwd: ROOT, encoding: 'utf8' });
    // PyYAML comes with docker-compose: the normalised file as JSON.
    const json = execFileSync('python3', ['-c', 'import sys, json, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)'], { input: yaml, encoding: 'utf8' });
    ({ services, volumes, networks } = JSON.parse(json) as { services: Record<string, Service>; volumes: Record<string, unknown>; networks: Record<string, Network> });
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

  test('TRUST_PROXY names nginx\'s own fixed address and nothing else, so no other container or host can forge X-Forwarded-For', () => {
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
    expect((ngx.volumes ?? []).some((v) => v.startsWith(path.join(ROOT, 'deploy', 'nginx.conf') + ':/etc/nginx/nginx.conf'))).toBe(true);
    expect(ngx.depends_on?.reglookup.condition).toBe('service_healthy');
    expect(ngx.healthcheck).toBeDefined();
  });
});

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
      // Temporary files in the test's own directory, not the machine's /var/lib/nginx.
      .replace(/^http \{$/m, `http {\n${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${path.join(dir, `${t}_temp`)};`).join('\n')}`),
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
      fs.writeFileSync(file, conf.replace(`server ${new URL(a.base).host}`, `server ${new URL(a.base).host}; server ${new URL(b.base).host}`));
      const nginx = spawnSync('nginx', ['-t', ...nginxArgs(dir, file)], { encoding: 'utf8' });
      expect(nginx.status).toBe(0);
      const { spawn } = await import('node:child_process');
      const proc = spawn('nginx', nginxArgs(dir, file), { stdio: 'ignore' });
      try {
        let up = false;
        for (let i = 0; i < 100 && !up; i++) {
          up = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
          if (!up) await new Promise((r) => setTimeout(r, 100));
        }
        expect(up).toBe(true);
        const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(`http://127.0.0.1:${port}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=demo`)));
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
function finalStage(): { env: Record<string, string>; copies: string[]; user: string; cmd: string[]; health: string[] } {
  const text = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n\s*/g, ' ');
  const lines = text.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));
  const from = lines.map((l, i) => (/^FROM /i.test(l) ? i : -1)).filter((i) => i >= 0);
  const stage = lines.slice(from[from.length - 1]);
  const env: Record<string, string> = {};
  for (const l of stage.filter((x) => /^ENV /.test(x))) for (const m of l.slice(4).matchAll(/(\w+)=(\S+)/g)) env[m[1]] = m[2];
  const json = (re: RegExp) => JSON.parse(stage.find((l) => re.test(l))!.replace(re, '')) as string[];
  return {
    env,
    copies: stage.filter((l) => /^COPY /.test(l)),
    user: stage.find((l) => /^USER /.test(l))?.slice(5).trim() ?? 'root',
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
        execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(ROOT, 'tsconfig.json'), '--outDir', target], { stdio: 'inherit' });
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
    srv = await startServeProcess({ ...stage.env, DATABASE_URL: schema.url, PORT: '0', HOST: '127.0.0.1' }, { argv: [process.execPath, ...args], cwd: app });
    const res = await fetch(`${srv.base}/api/reg.asmx/CheckUSA?RegistrationNumber=7ABC123&State=CA&username=demo`);
    expect(res.status).toBe(200);
    const port = new URL(srv.base).port;
    const [hexe, ...hargs] = stage.health;
    expect(hexe).toBe('node');
    const health = spawnSync(process.execPath, hargs, { env: { ...process.env, PORT: port }, encoding: 'utf8', timeout: 10_000 });
    expect(health.status).toBe(0);
  });
});

test('a production install (`npm ci --omit=dev`) runs `prepare` without TypeScript and succeeds', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-prepare-'));
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const m = /^node (\S+)$/.exec(pkg.scripts.prepare);
    expect(m).not.toBeNull();
    fs.mkdirSync(path.join(dir, path.dirname(m![1])), { recursive: true });
    fs.copyFileSync(path.join(ROOT, m![1]), path.join(dir, m![1]));
    // No node_modules here: as after `npm ci --omit=dev`, TypeScript cannot be found.
    const run = spawnSync(process.execPath, [m![1]], { cwd: dir, encoding: 'utf8', env: { ...process.env, NODE_PATH: '' } });
    expect(run.status).toBe(0);
    expect(fs.existsSync(path.join(dir, 'dist'))).toBe(false);
    // ...but says that there is nothing to run until dist/ comes from a build (README, "Production install without Docker").
    expect(run.stdout).toMatch(/dist\/ must come from a build/);
    expect(run.stdout).toMatch(/npm run build/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
