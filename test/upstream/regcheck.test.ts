// The regcheck provider against a real RegCheck-compatible service: a second reglookup, started as
// the upstream with the bundled sample data (every one of the 31 operations has a sample record).
// The relay holds no records of its own, so everything it answers comes through the provider.

import { createHash } from 'node:crypto';
import { OPERATIONS } from '../../src/contract/operations';
import { startServer, type TestServer } from '../helpers/server';
import fs from 'node:fs';
import path from 'node:path';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

let upstream: TestServer;
let relay: TestServer;

interface SampleLine {
  operation: string;
  registration: string;
  state?: string;
}
const SAMPLE: SampleLine[] = fs
  .readFileSync(path.join(__dirname, '../../data/sample.ndjson'), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as SampleLine);
const firstOf = (op: string) => SAMPLE.find((l) => l.operation === op)!;

beforeAll(async () => {
  upstream = await startServer({ USERNAME_POLICY: 'registered' });
  await upstream.store.accounts.putAccount({ username: key('relay'), credits: 1000 });
  relay = await startServer(
    {
      PROVIDERS: 'store,regcheck',
      REGCHECK_URL: upstream.url,
      REGCHECK_USERNAME: 'relay',
      UPSTREAM_TIMEOUT_MS: '3000',
      REGCHECK_CREDITS_INTERVAL_MS: '200',
    },
    { sample: false },
  );
});
afterAll(async () => {
  await relay.close();
  await upstream.close();
});

function query(op: string, line: SampleLine, username: string): string {
  const o = OPERATIONS.find((x) => x.name === op)!;
  const q = new URLSearchParams({ RegistrationNumber: line.registration, username });
  if (o.state) q.set(o.state.param, line.state ?? '');
  return `/api/reg.asmx/${op}?${q.toString()}`;
}

describe('every operation answers through the relay as the upstream answers it', () => {
  test.each(OPERATIONS.map((o) => [o.name]))('%s', async (op) => {
    const line = firstOf(op);
    const direct = await fetch(upstream.url + query(op, line, 'relay'));
    const relayed = await fetch(relay.url + query(op, line, 'anyone'));
    expect(relayed.status).toBe(200);
    expect(direct.status).toBe(200);
    // The same bytes but for where the answer came from (docs/calling.md, "The age of an answer"): the upstream
    // says its import, the relay the upstream it asked; each as of its own time.
    const [r, d] = [await relayed.text(), await direct.text()];
    const provenance = /"AnswerSource":"([a-z]+)","AnswerAsOf":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"/;
    if (OPERATIONS.find((o) => o.name === op)?.result === 'Vehicle') {
      expect(provenance.exec(r)?.[1]).toBe('regcheck');
      expect(provenance.exec(d)?.[1]).toBe('import');
    }
    expect(r.replace(provenance, '')).toBe(d.replace(provenance, ''));
  });
});

describe("the upstream's error lines map back to our codes", () => {
  test('not found there is VEHICLE_NOT_FOUND here', async () => {
    const res = await fetch(`${relay.url}/api/reg.asmx/Check?RegistrationNumber=ZZ99ZZZ&username=anyone`);
    expect(res.status).toBe(404);
    expect(await res.text()).toMatch(/^VEHICLE_NOT_FOUND: /);
  });

  test('an account the upstream does not know: SERVICE_UNAVAILABLE here, with Retry-After, the username not shown', async () => {
    const stranger = await startServer(
      {
        PROVIDERS: 'regcheck',
        REGCHECK_URL: upstream.url,
        REGCHECK_USERNAME: 'nobody-knows-me',
        REGCHECK_CREDITS_INTERVAL_MS: '0',
      },
      { sample: false },
    );
    try {
      const res = await fetch(`${stranger.url}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=anyone`);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      const text = await res.text();
      // The setting to fix is the operator's business (the log); the caller is told the upstream failed.
      expect(text).toMatch(/the regcheck upstream could not give a usable answer/);
      expect(text).not.toContain('REGCHECK_');
      expect(text).not.toContain('nobody-knows-me');
    } finally {
      await stranger.close();
    }
  });
});

test("the upstream's credits are read from its credits endpoint into a metric", async () => {
  let text = '';
  for (let i = 0; i < 50; i++) {
    text = await (await fetch(`${relay.url}/metrics`)).text();
    const m = /reglookup_upstream_remaining\{provider="regcheck"\} (\d+)/.exec(text);
    const left = (await upstream.store.accounts.getAccount(key('relay')))?.credits;
    if (m && Number(m[1]) === left && left < 1000) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `the metric never matched the upstream's credits:\n${text
      .split('\n')
      .filter((l) => l.includes('remaining'))
      .join('\n')}`,
  );
});
