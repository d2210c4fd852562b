// The vendor's published PHP client (issue 11): HTTP GET with `&state=` in lower case on every
// operation, CheckUSA and CheckAustralia included, which ASP.NET answers because it reads names
// without regard to case. A real PHP script (php-cli) makes the calls; the expected vehicles are
// the bundled sample data's (the README's demo plates), written by hand, not the code's.

import path from 'node:path';
import { OPERATIONS } from '../../src/contract/operations';
import { describeToolkit, run, type Toolkit } from './harness';
import { demo } from '../helpers/sample';
import { startServer, type TestServer } from '../helpers/server';

const PHP: Toolkit = {
  id: 'php-get',
  title: 'the vendor-style PHP client (php-cli)',
  packages: ['php-cli'],
  commands: ['php'],
};
const SCRIPT = path.join(__dirname, 'clients', 'php', 'regcheck-get.php');

interface PhpReport {
  operation: string;
  status: number;
  root: string | null;
  description: string | null;
  tests: number | null;
  error: string | null;
}

interface PhpCall {
  operation: string;
  registration: string;
  state: string;
  username: string;
}

async function php(base: string, calls: PhpCall[]): Promise<PhpReport[]> {
  const { stdout, stderr } = await run('php', [
    '-d',
    'error_reporting=-1',
    '-d',
    'display_errors=stderr',
    SCRIPT,
    base,
    JSON.stringify(calls),
  ]);
  if (stderr.trim()) throw new Error(`PHP reported:\n${stderr}`);
  return JSON.parse(stdout) as PhpReport[];
}

describeToolkit(PHP, () => {
  let server: TestServer;
  let registered: TestServer;
  beforeAll(async () => {
    server = await startServer();
    registered = await startServer({ USERNAME_POLICY: 'registered' });
  });
  afterAll(async () => {
    await Promise.all([server.close(), registered.close()]);
  });

  test('every operation answers the PHP client, with state= in lower case on each', async () => {
    const calls = OPERATIONS.map((op) => ({
      operation: op.name,
      registration: demo(op.name).registration,
      state: demo(op.name).state ?? '',
      username: 'demo',
    }));
    const reports = await php(server.url, calls);
    expect(reports).toHaveLength(OPERATIONS.length);
    for (const r of reports) {
      const sample = demo(r.operation);
      expect([r.operation, r.status, r.error]).toEqual([r.operation, 200, null]);
      if (sample.mot) {
        expect(r.root).toBe('UKMOTData');
        expect(r.tests).toBe((sample.mot.tests as unknown[]).length);
      } else {
        expect(r.root).toBe('Vehicle');
        expect(r.description).toBe(sample.vehicle?.Description);
      }
    }
  });

  test('state= by full name for CheckUSA and CheckAustralia, a state sent to Check is ignored', async () => {
    const reports = await php(server.url, [
      { operation: 'CheckUSA', registration: '7ABC123', state: 'California', username: 'demo' },
      { operation: 'CheckAustralia', registration: 'ABC123', state: 'New South Wales', username: 'demo' },
      { operation: 'Check', registration: 'RG11 ABC', state: 'CA', username: 'demo' },
    ]);
    expect(reports.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(reports[0].description).toBe(demo('CheckUSA').vehicle?.Description);
  });

  test('its errors carry the phrases callers match', async () => {
    const [missing, badState] = await php(server.url, [
      { operation: 'Check', registration: 'ZZ99 ZZZ', state: '', username: 'demo' },
      { operation: 'CheckUSA', registration: '7ABC123', state: 'Narnia', username: 'demo' },
    ]);
    expect(missing.status).toBe(404);
    expect(missing.error).toMatch(/^VEHICLE_NOT_FOUND: .*No vehicle found/);
    expect(badState.status).toBe(400);
    expect(badState.error).toMatch(/^INVALID_PARAMETER: /);
    const [unknown] = await php(registered.url, [
      { operation: 'Check', registration: 'RG11 ABC', state: '', username: 'mallory' },
    ]);
    expect(unknown.status).toBe(403);
    expect(unknown.error).toMatch(/^UNKNOWN_USERNAME: .*Your username is incorrect/);
  });
});
