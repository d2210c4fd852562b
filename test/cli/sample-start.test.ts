// The bundled sample data on `reglookup serve` (issue 42, point 6), on the real command line in its
// own process: not loaded when PROVIDERS lists an upstream (Check RG11ABC then asks the DVLA
// instead of answering the fictional record) nor under NODE_ENV=production, and a store still
// holding it says so at start (docs/configuration.md, SAMPLE_DATA; docs/data.md).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serve } from '../helpers/cli';
import { DVLA_TEST_KEY, startFakeDvla, type FakeDvla } from '../helpers/upstream-dvla';

jest.setTimeout(120_000);

let dir: string;
let dvla: FakeDvla;
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-sample-'));
  dvla = await startFakeDvla();
});
afterAll(async () => {
  await dvla.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const withDvla = () => ({ PROVIDERS: 'store,dvla', DVLA_URL: dvla.url, DVLA_API_KEY: DVLA_TEST_KEY });

async function check(url: string, reg = 'RG11ABC'): Promise<{ status: number; body: string }> {
  const res = await fetch(`${url}/Check?RegistrationNumber=${reg}&username=demo`);
  return { status: res.status, body: await res.text() };
}

test('PROVIDERS=store,dvla on a fresh store: no sample; Check RG11ABC is asked of the DVLA', async () => {
  const srv = await serve({ DATABASE_URL: `sqlite:${path.join(dir, 'dvla.db')}`, ...withDvla() });
  try {
    const a = await check(srv.url);
    expect(a.status).toBe(404);
    expect(a.body).toMatch(/^VEHICLE_NOT_FOUND: /);
    expect(dvla.calls.get('RG11ABC')).toBe(1);
    expect(srv.output()).not.toContain('loaded sample data');
  } finally {
    await srv.stop();
  }
});

test('NODE_ENV=production on a fresh store: no sample', async () => {
  const srv = await serve({ DATABASE_URL: `sqlite:${path.join(dir, 'prod.db')}`, NODE_ENV: 'production' });
  try {
    expect((await check(srv.url)).status).toBe(404);
  } finally {
    await srv.stop();
  }
});

test('a store still holding only the sample, started beside an upstream: a warn line says so', async () => {
  const db = `sqlite:${path.join(dir, 'kept.db')}`;
  const first = await serve({ DATABASE_URL: db });
  try {
    expect((await check(first.url)).status).toBe(200);
  } finally {
    await first.stop();
  }
  const again = await serve({ DATABASE_URL: db, ...withDvla() });
  try {
    const warn = again
      .output()
      .split('\n')
      .filter((l) => l.includes('"level":"warn"') && l.includes('bundled, fictional sample data'));
    expect(warn).toHaveLength(1);
    expect(warn[0]).toContain('153 records');
    expect(warn[0]).toContain('before dvla');
  } finally {
    await again.stop();
  }
});
