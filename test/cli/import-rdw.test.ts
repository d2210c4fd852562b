// `reglookup import --format rdw` as an operator runs it (docs/data.md, RDW bulk download): a
// gzip-compressed vehicles file with its fuel file, and the options refused in one line. (The CSV
// reading itself: test/unit/import-rdw.test.ts.)

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { runCli } from '../helpers/cli';
import { csv, FUEL, PORTAL_HEADER } from '../helpers/rdw';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-rdw-cli-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('import --format rdw on the command line', () => {
  test('import --format rdw --fuel FILE FILE.csv.gz', () => {
    const vehicles = path.join(dir, 'vehicles.csv.gz');
    fs.writeFileSync(vehicles, zlib.gzipSync(csv(PORTAL_HEADER)));
    fs.writeFileSync(path.join(dir, 'fuel.csv'), FUEL);
    const env = { DATABASE_URL: `sqlite:${path.join(dir, 'r.db')}`, SAMPLE_DATA: 'false' };
    const r = runCli(['import', '--quiet', '--format', 'rdw', '--fuel', path.join(dir, 'fuel.csv'), vehicles], env);
    expect([r.status, r.stderr]).toEqual([0, '']);
    const exported = runCli(['export', '--quiet'], env);
    const lines = exported.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { registration: string; vehicle: Record<string, unknown> });
    expect(
      lines.map((l) => [
        l.registration,
        (l.vehicle.FuelType as { CurrentTextValue?: string } | undefined)?.CurrentTextValue,
      ]),
    ).toEqual([
      ['AB123C', 'Benzine/Elektriciteit'],
      ['WX12AB', undefined],
      ['XX999X', 'Benzine'],
    ]);
  });

  test('--fuel without --format rdw, and an unknown format, are refused in one line', () => {
    const env = { DATABASE_URL: `sqlite:${path.join(dir, 'r.db')}` };
    const a = runCli(['import', '--fuel', 'f.csv', 'v.csv'], env);
    expect([a.status, a.stderr.trim()]).toEqual([
      1,
      'reglookup: --fuel joins RDW fuel data to --format rdw; give --format rdw too',
    ]);
    const b = runCli(['import', '--format', 'xml', 'v.csv'], env);
    expect([b.status, b.stderr.trim()]).toEqual([1, "reglookup: --format must be ndjson, rdw or ua-mvs, not 'xml'"]);
  });
});
