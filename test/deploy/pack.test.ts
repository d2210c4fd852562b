// The release as a package (CHANGELOG, README "Install from the package"): `npm pack`'s tarball
// installs into an empty folder with `npm install ./reglookup-*.tgz` and serves with
// `npx reglookup serve`, the bundled sample answering the README's demo lookup. The install builds
// better-sqlite3 from source, as every install here does (about a minute).

import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

jest.setTimeout(600_000);

const ROOT = path.resolve(__dirname, '../..');

describe('npm pack', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-pack-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('installs into an empty folder and serves with npx reglookup serve', async () => {
    // The tarball holds dist/, which the repository's build writes (npm pack runs prepare first).
    const out = execFileSync('npm', ['pack', '--pack-destination', dir], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tgz = out.trim().split('\n').pop() as string;
    expect(tgz).toMatch(/^reglookup-\d+\.\d+\.\d+\.tgz$/);
    const version = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string })
      .version;
    expect(tgz).toBe(`reglookup-${version}.tgz`);
    const app = path.join(dir, 'app');
    fs.mkdirSync(app);
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', path.join(dir, tgz)], {
      cwd: app,
      stdio: 'ignore',
      timeout: 480_000,
    });

    expect(execFileSync('npx', ['reglookup', '--version'], { cwd: app, encoding: 'utf8' }).trim()).toBe(version);

    // A process group of its own: npx runs the bin through a shell, and the signal is for all of them,
    // as Ctrl-C at a terminal sends it.
    const child = spawn('npx', ['reglookup', 'serve'], {
      cwd: app,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_FORMAT: 'json' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    try {
      let log = '';
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no 'listening' line: ${log}`)), 60_000);
        child.stdout.on('data', (d: Buffer) => {
          log += d.toString();
          const m = /"url":"(http:\/\/[^"]+)"/.exec(log);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]);
          }
        });
      });
      const r = await fetch(`${url}/Check?RegistrationNumber=RG11ABC&username=demo`);
      expect(r.status).toBe(200);
      expect(await r.text()).toMatch(/<Description>FORD FOCUS 1596cc \(sample\)<\/Description>/);
      // The store is made where it is run, not inside the installed package.
      expect(fs.existsSync(path.join(app, 'data', 'reglookup.db'))).toBe(true);
    } finally {
      const exited = new Promise((resolve) => child.on('close', resolve));
      process.kill(-(child.pid as number), 'SIGINT');
      await exited;
    }
  });
});
