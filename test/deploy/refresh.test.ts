// The daily refresh, ready to run (issue 44, deliverable 3; docs/data.md, "Daily refresh"): the
// systemd template service and timer as `systemd-analyze verify` reads them, the compose example as
// `docker-compose config` reads it, and deploy/refresh.sh run as the unit runs it, against registers
// served from this machine (an HTTP server that answers If-Modified-Since as a web server does) and a
// store of its own: it imports, skips a day with nothing new, and leaves the store as it was for a
// file cut short or one that would shrink the register.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SqliteStore } from '../../src/store/sqlite';
import { csvOf, HEADER_2013, HEADER_2025, pythonZip, ROWS_2016, ROWS_2025 } from '../helpers/mvs';

jest.setTimeout(240_000);

const ROOT = path.resolve(__dirname, '../..');
const ci = process.env.CI === 'true';
const have = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const SERVICE = path.join(ROOT, 'deploy', 'reglookup-refresh@.service');
const TIMER = path.join(ROOT, 'deploy', 'reglookup-refresh@.timer');

/** A unit file's `Key=value` lines, by key. */
function unitOf(file: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (m) (out[m[1]] ??= []).push(m[2]);
  }
  return out;
}

describe('the systemd units', () => {
  test('a oneshot service per register, as the store service runs: its user, its store, the script with the instance', () => {
    const unit = unitOf(SERVICE);
    const store = unitOf(path.join(ROOT, 'deploy', 'reglookup.service'));
    expect(unit.Type).toEqual(['oneshot']);
    expect(unit.ExecStart).toEqual(['/bin/sh /opt/reglookup/deploy/refresh.sh %i']);
    expect(unit.User).toEqual(store.User);
    expect(unit.Environment).toContain(store.Environment?.find((e) => e.startsWith('DATABASE_URL=')));
    expect(unit.ReadWritePaths).toEqual(store.ReadWritePaths);
    // Stopped, the import rolls back (README: Ctrl-C before the commit imports nothing).
    expect(unit.KillSignal).toEqual(['SIGINT']);
  });

  test('the timer runs it once a day and makes up a run missed while the machine was off', () => {
    const timer = unitOf(TIMER);
    expect(timer.OnCalendar).toEqual(['*-*-* 03:30:00']);
    expect(['yes', 'true']).toContain(timer.Persistent?.[0]);
  });

  const verify = have('systemd-analyze');
  if (!verify && !ci) process.stderr.write('refresh units: systemd-analyze verify skipped (Debian package systemd)\n');
  (verify || ci ? test : test.skip)('systemd-analyze verify accepts both, for each register, without a warning', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-refresh-unit-'));
    try {
      // Where node is on this machine (the unit says /usr/bin/node).
      fs.writeFileSync(
        path.join(dir, 'reglookup-refresh@.service'),
        fs.readFileSync(SERVICE, 'utf8').replace('/usr/bin/node ', `${process.execPath} `),
      );
      fs.copyFileSync(TIMER, path.join(dir, 'reglookup-refresh@.timer'));
      for (const register of ['rdw', 'ua-mvs']) {
        for (const kind of ['service', 'timer'])
          fs.symlinkSync(`reglookup-refresh@.${kind}`, path.join(dir, `reglookup-refresh@${register}.${kind}`));
        const run = spawnSync(
          'systemd-analyze',
          ['verify', `./reglookup-refresh@${register}.service`, `./reglookup-refresh@${register}.timer`],
          { cwd: dir, encoding: 'utf8' },
        );
        expect([register, run.status, run.stderr.trim()]).toEqual([register, 0, '']);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

const compose = have('docker-compose');
if (!compose && !ci) process.stderr.write('docker-compose.refresh.yml: skipped (Debian package docker-compose)\n');
(compose || ci ? test : test.skip)(
  'the compose example: a refresh service per register on the stack, running the script daily once migrated',
  () => {
    const json = spawnSync(
      'sh',
      [
        '-c',
        `docker-compose -f docker-compose.yml -f docker-compose.refresh.yml config | python3 -c 'import sys, json, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))'`,
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(json.stderr).toBe('');
    type Svc = {
      environment: Record<string, string>;
      entrypoint: string[];
      volumes: { source: string; target: string }[] | string[];
      depends_on: Record<string, { condition: string }>;
      image: string;
    };
    const { services } = JSON.parse(json.stdout) as { services: Record<string, Svc> };
    for (const register of ['rdw', 'ua-mvs']) {
      const s = services[`refresh-${register}`];
      expect(s.environment.REGISTER).toBe(register);
      expect(s.environment.DATABASE_URL).toBe(services.reglookup.environment.DATABASE_URL);
      // `$$` is compose's literal `$`: the shell in the container expands it.
      expect(s.entrypoint.join(' ')).toContain('sh /deploy/refresh.sh "$$REGISTER"');
      expect(Number(s.environment.REFRESH_EVERY_S)).toBe(86_400);
      expect(s.depends_on.migrate.condition).toBe('service_completed_successfully');
      expect(s.image).toBe(services.reglookup.image);
      // The repository's deploy/ (the script) in the container, read-only; docker-compose v1 writes volumes as strings.
      expect(JSON.stringify(s.volumes)).toContain(`${path.join(ROOT, 'deploy')}:/deploy:ro`);
    }
  },
);

describe('deploy/refresh.sh, run as the unit runs it', () => {
  let dir: string;
  let server: http.Server;
  let base: string;
  /** What the server serves: path -> the file's bytes and time. */
  const served = new Map<string, { bytes: Buffer; modified: Date }>();
  const serve = (name: string, bytes: Buffer, modified = new Date()) =>
    served.set(`/${name}`, { bytes, modified: new Date(Math.floor(modified.getTime() / 1000) * 1000) });

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-refresh-'));
    server = http.createServer((req, res) => {
      const f = served.get(req.url ?? '');
      if (!f) return void res.writeHead(404).end();
      const since = Date.parse(req.headers['if-modified-since'] ?? '');
      if (Number.isFinite(since) && f.modified.getTime() <= since) return void res.writeHead(304).end();
      res.writeHead(200, { 'content-length': f.bytes.length, 'last-modified': f.modified.toUTCString() }).end(f.bytes);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const db = () => path.join(dir, 'reglookup.db');
  async function run(
    register: string,
    env: Record<string, string> = {},
  ): Promise<{ status: number | null; out: string }> {
    const child = spawn('/bin/sh', [path.join(ROOT, 'deploy', 'refresh.sh'), register], {
      env: {
        PATH: process.env.PATH ?? '',
        DATABASE_URL: `sqlite:${db()}`,
        REGLOOKUP: `${process.execPath} ${path.join(ROOT, 'bin', 'reglookup.js')}`,
        REFRESH_DIR: path.join(dir, 'cache'),
        REFRESH_MIN_BYTES: '200',
        REFRESH_RETRY_S: '0',
        MVS_URLS: `${base}/reestrtz2016.zip ${base}/reestrtz2025.zip`,
        RDW_VEHICLES_URL: `${base}/vehicles.csv`,
        RDW_FUEL_URL: `${base}/fuel.csv`,
        ...env,
      },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const status = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    return { status, out };
  }
  async function records(): Promise<Record<string, number>> {
    const s = new SqliteStore(db());
    try {
      return await s.countByOperation();
    } finally {
      await s.close();
    }
  }
  const zip = (name: string, header: string, rows: readonly string[]) => {
    const file = path.join(dir, name);
    pythonZip(file, name.replace('.zip', '.csv'), csvOf(header, rows));
    return fs.readFileSync(file);
  };

  test('imports the register; the next day, with nothing new, downloads and imports nothing', async () => {
    const old = new Date(Date.now() - 86_400_000);
    serve('reestrtz2016.zip', zip('reestrtz2016.zip', HEADER_2013, ROWS_2016), old);
    serve('reestrtz2025.zip', zip('reestrtz2025.zip', HEADER_2025, ROWS_2025), old);
    const first = await run('ua-mvs');
    expect([first.status, first.out]).toEqual([0, expect.stringContaining('refresh ua-mvs: done')]);
    expect(first.out).toMatch(/would add 3 new record\(s\)/);
    expect(first.out).toMatch(/^ {2}CheckUkraine: 3 added, 0 changed, 0 unchanged, 0 removed$/m);
    expect(await records()).toEqual({ CheckUkraine: 3 });
    const second = await run('ua-mvs');
    expect(second.status).toBe(0);
    expect(second.out).toContain('refresh ua-mvs: reestrtz2025.zip: unchanged');
    expect(second.out).toContain('no file is newer than the last import: nothing to do');
  });

  test('another register beside it: RDW replaces CheckNetherlands and leaves CheckUkraine alone', async () => {
    serve(
      'vehicles.csv',
      Buffer.from('Kenteken,Merk,Handelsbenaming\r\nXX999X,VOLKSWAGEN,GOLF\r\nAB123C,TESLA,MODEL 3\r\n'.repeat(1)),
    );
    serve(
      'fuel.csv',
      Buffer.from(
        'Kenteken,Brandstof volgnummer,Brandstof omschrijving\r\nXX999X,1,Benzine\r\n' +
          'AB123C,1,Elektriciteit\r\n'.repeat(8),
      ),
    );
    const r = await run('rdw', { REFRESH_MIN_BYTES: '50' });
    expect([r.status, r.out]).toEqual([0, expect.stringContaining('refresh rdw: done')]);
    expect(await records()).toEqual({ CheckNetherlands: 2, CheckUkraine: 3 });
  });

  test('a file cut short, or one that would shrink the register past REFRESH_MIN_KEEP, changes nothing', async () => {
    const whole = zip('reestrtz2025.zip', HEADER_2025, ROWS_2025);
    serve('reestrtz2025.zip', whole.subarray(0, whole.length - 40));
    const cut = await run('ua-mvs');
    expect(cut.status).toBe(1);
    expect(cut.out).toContain('cannot read');
    expect(cut.out).toContain('the files were not imported: the check above says why; the store is as it was');
    expect(await records()).toEqual({ CheckNetherlands: 2, CheckUkraine: 3 });
    // One plate where the store holds three: less than 90 %. Published later than the cut file (Last-Modified has
    // whole seconds: within the same second the download would rightly be "unchanged").
    serve(
      'reestrtz2025.zip',
      zip('reestrtz2025.zip', HEADER_2025, ROWS_2025.slice(0, 2)),
      new Date((served.get('/reestrtz2025.zip')?.modified.getTime() ?? Date.now()) + 2000),
    );
    const shrink = await run('ua-mvs', { MVS_URLS: `${base}/reestrtz2025.zip` });
    expect(shrink.status).toBe(1);
    expect(shrink.out).toContain(
      'refused: --replace would leave 1 CheckUkraine record(s) where the store holds 3 now (less than --min-keep 90 %)',
    );
    expect(await records()).toEqual({ CheckNetherlands: 2, CheckUkraine: 3 });
    const small = await run('ua-mvs', { REFRESH_MIN_BYTES: '100000' });
    expect(small.status).toBe(1);
    expect(small.out).toMatch(
      /reestrtz2016\.zip is \d+ bytes, less than REFRESH_MIN_BYTES \(100000\): cut short, or not the export/,
    );
    const unknown = await run('uk');
    expect([unknown.status, unknown.out.trim()]).toEqual([
      1,
      "refresh uk: give the register to refresh: rdw or ua-mvs (not 'uk')",
    ]);
  });
});
