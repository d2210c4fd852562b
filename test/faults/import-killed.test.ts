// Fault: `reglookup import --replace-all` is killed with SIGKILL half-way while the service serves
// from the same SQLite store. The import is one transaction: nothing of it may become visible, the
// store keeps every record it held, lookups go on answering from it, and the next import runs.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI, runCli, serve, type Served } from '../helpers/cli';
import { recordScenario } from './scenario';

jest.setTimeout(180_000);

const RECORDS = 60_000;

describe('an import killed half-way', () => {
  let dir: string;
  let server: Served | undefined;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-killimport-'));
  });
  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('leaves the store as it was and the next import works', async () => {
    const env = { DATABASE_URL: `sqlite:${path.join(dir, 'reglookup.db')}` };
    server = await serve({ ...env, RATE_LIMIT: '0' });
    // A connection each: the imports run synchronously for longer than the server keeps an idle connection,
    // and a pooled one it closed meanwhile would fail the next request with 'other side closed'.
    const lookup = (reg: string) =>
      fetch(`${server!.url}/Check?RegistrationNumber=${reg}&username=k`, { headers: { connection: 'close' } }).then(
        (r) => r.status,
      );
    expect(await lookup('RG11ABC')).toBe(200);

    // A refresh without the sample's RG11 ABC: were any of it committed, that record would be gone.
    const sample = fs.readFileSync(path.resolve(__dirname, '../../data/sample.ndjson'), 'utf8').split('\n')[0];
    const vehicle = (JSON.parse(sample) as { vehicle: unknown }).vehicle;
    const file = path.join(dir, 'refresh.ndjson');
    const lines: string[] = [];
    for (let i = 0; i < RECORDS; i++)
      lines.push(
        JSON.stringify({
          operation: 'Check',
          registration: `KL${i.toString(36).toUpperCase().padStart(5, '0')}`,
          vehicle,
        }),
      );
    fs.writeFileSync(file, lines.join('\n') + '\n');

    const importer = spawn(process.execPath, [CLI, 'import', '--replace-all', file], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let progress = '';
    importer.stderr.on('data', (d: Buffer) => (progress += d.toString()));
    const closed = new Promise<void>((resolve) => importer.on('close', () => resolve()));
    // Killed once it reports some progress (it holds the transaction open by then).
    for (let i = 0; i < 600 && !/import: [1-9]\d? %/.test(progress); i++) await new Promise((r) => setTimeout(r, 50));
    expect(progress).toMatch(/import: [1-9]\d? %/);
    importer.kill('SIGKILL');
    await closed;

    const during: number[] = [];
    for (const reg of ['RG11ABC', 'KL00000', 'KL00001']) during.push(await lookup(reg));
    expect(during).toEqual([200, 404, 404]);
    const lastProgress = (progress.match(/import: \d+ %/g) ?? []).pop();

    // The next import runs (the killed one's lock and journal are gone) and commits.
    const again = runCli(['import', '--replace-all', file], env);
    expect(again.status).toBe(0);
    expect(await lookup('KL00001')).toBe(200);
    expect(await lookup('RG11ABC')).toBe(404);

    recordScenario({
      scenario: 'import killed half-way (SIGKILL, SQLite, while serving)',
      answered: `after the kill (at ${lastProgress}): the old records 200, the import's 404 (none of it visible); after a new import: its records 200`,
      charged: 'n/a',
      logged: `the next import ran and committed (exit ${again.status})`,
    });
  });
});
