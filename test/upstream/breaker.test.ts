// The breaker counts failed lookups, not the calls a lookup retries (issue 42, point 4): with the
// default UPSTREAM_BREAKER_FAILURES=5 and retries on, four failed lookups leave it closed and the
// fifth opens it. Why a provider fails is logged (one line when it starts failing, one when the
// breaker opens, one when it closes) and the caller's SERVICE_UNAVAILABLE names no host, port or
// setting. The chain is driven directly, with the dvla provider against a local DVLA that answers
// 500 (a transient failure, retried) or a port nothing listens on.

import net from 'node:net';
import { loadConfig } from '../../src/config';
import { upstreamHttp } from '../../src/providers/http';
import { buildProviders } from '../../src/providers/registry';
import { LookupError } from '../../src/service/errors';
import { UpstreamChain } from '../../src/service/upstream';
import { openStore } from '../../src/store/open';
import { OPERATIONS } from '../../src/contract/operations';
import { DVLA_TEST_KEY, startFakeDvla, type FakeDvla } from '../helpers/upstream-dvla';

let dvla: FakeDvla;
beforeAll(async () => {
  dvla = await startFakeDvla();
});
afterAll(() => dvla.close());

const CHECK = OPERATIONS.find((o) => o.name === 'Check')!;

interface Line {
  readonly message: string;
  readonly meta: Record<string, unknown>;
}

function chainFor(url: string, env: Record<string, string> = {}) {
  const config = loadConfig({
    DATABASE_URL: 'sqlite::memory:',
    PROVIDERS: 'store,dvla',
    DVLA_URL: url,
    DVLA_API_KEY: DVLA_TEST_KEY,
    UPSTREAM_TIMEOUT_MS: '3000',
    ...env,
  });
  const lines: Line[] = [];
  const log = { warn: (message: string, meta: Record<string, unknown> = {}) => lines.push({ message, meta }) };
  const store = openStore('sqlite::memory:');
  const chain = new UpstreamChain(
    store,
    buildProviders(config),
    upstreamHttp(config.upstream.maxBytes),
    config.upstream,
    null,
    Date.now,
    { log: log as never },
  );
  const lookup = (reg: string) =>
    chain.lookup(CHECK, { operation: 'Check', registration: reg, state: '' }).then(
      () => null,
      (e: unknown) => e as LookupError,
    );
  const state = () => chain.states()[0].state;
  return { chain, lines, lookup, state, close: () => store.close() };
}

test('five failed lookups open the breaker, not two; each retried; one line each for failing and open', async () => {
  const c = chainFor(dvla.url);
  const plates = ['BR01AAA', 'BR02AAA', 'BR03AAA', 'BR04AAA', 'BR05AAA'];
  for (const p of plates) dvla.answers.set(p, { status: 500, body: '{}' });
  for (const p of plates.slice(0, 4)) {
    const e = await c.lookup(p);
    expect(e?.code).toBe('SERVICE_UNAVAILABLE');
    expect(c.state()).toBe('closed');
  }
  // Retries are on: the four lookups made more than four calls.
  expect(plates.slice(0, 4).reduce((n, p) => n + (dvla.calls.get(p) ?? 0), 0)).toBeGreaterThan(4);
  await c.lookup(plates[4]);
  expect(c.state()).toBe('open');
  const failing = c.lines.filter((l) => /is failing/.test(l.message));
  const opened = c.lines.filter((l) => /breaker open/.test(l.message));
  expect(failing).toHaveLength(1);
  expect(opened).toHaveLength(1);
  // The reason is in the log: the status the DVLA answered.
  expect(String(failing[0].meta.reason)).toMatch(/500/);
  expect(String(opened[0].meta.reason)).toMatch(/500/);
  // Open: refused without calling the DVLA, and the caller is told it is not answering.
  const before = dvla.totalCalls();
  const e = await c.lookup('BR06AAA');
  expect(dvla.totalCalls()).toBe(before);
  expect(e?.message).toMatch(/the dvla upstream is not answering/);
  expect(e?.message).not.toMatch(/UPSTREAM_|breaker/);
  await c.close();
});

test('a success between failures starts the count again', async () => {
  const c = chainFor(dvla.url);
  for (const p of ['BS01AAA', 'BS02AAA', 'BS03AAA', 'BS04AAA', 'BS06AAA'])
    dvla.answers.set(p, { status: 500, body: '{}' });
  for (const p of ['BS01AAA', 'BS02AAA', 'BS03AAA', 'BS04AAA']) await c.lookup(p);
  expect(await c.lookup('AA19AAA')).toBeNull();
  expect(c.lines.filter((l) => /answers again/.test(l.message))).toHaveLength(1);
  await c.lookup('BS06AAA');
  expect(c.state()).toBe('closed');
  await c.close();
});

test('the breaker closes after its probe: one line saying so', async () => {
  const c = chainFor(dvla.url, { UPSTREAM_BREAKER_FAILURES: '1', UPSTREAM_BREAKER_OPEN_MS: '200' });
  dvla.answers.set('BC01AAA', { status: 500, body: '{}' });
  await c.lookup('BC01AAA');
  expect(c.state()).toBe('open');
  await new Promise((r) => setTimeout(r, 300));
  expect(await c.lookup('AA19AAA')).toBeNull();
  expect(c.state()).toBe('closed');
  expect(c.lines.map((l) => l.message)).toEqual([
    'upstream dvla is failing',
    'upstream dvla: circuit breaker open; lookups that need it are refused',
    'upstream dvla: circuit breaker closed; it answers again',
  ]);
  await c.close();
});

test("the caller's message names no host, port or setting; the log has the reason", async () => {
  // A port nothing listens on: connections are refused.
  const port = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
  const c = chainFor(`http://127.0.0.1:${port}`);
  const e = await c.lookup('BP01AAA');
  expect(e?.code).toBe('SERVICE_UNAVAILABLE');
  expect(e?.message).toMatch(/^No upstream could answer for now: the dvla upstream is not answering; /);
  for (const leak of ['127.0.0.1', String(port), 'UPSTREAM_', 'ECONNREFUSED']) expect(e?.message).not.toContain(leak);
  expect(String(c.lines[0].meta.reason)).toContain(`127.0.0.1:${port}`);
  expect(String(c.lines[0].meta.reason)).toContain('ECONNREFUSED');
  await c.close();
});

test('the concurrency cap: the caller is told the upstream is busy, the limit is logged', async () => {
  const c = chainFor(dvla.url, { UPSTREAM_CONCURRENCY: '1' });
  dvla.delayMs = 300;
  try {
    const errors = await Promise.all(['BQ01AAA', 'BQ02AAA', 'BQ03AAA', 'BQ04AAA'].map((p) => c.lookup(p)));
    const busy = errors.filter((e) => e !== null);
    expect(busy.length).toBeGreaterThan(0);
    for (const e of busy) {
      expect(e.message).toMatch(/the dvla upstream is busy/);
      expect(e.message).not.toContain('UPSTREAM_');
    }
    expect(c.lines.some((l) => String(l.meta.reason).includes('UPSTREAM_CONCURRENCY'))).toBe(true);
  } finally {
    dvla.delayMs = 0;
  }
  await c.close();
});
