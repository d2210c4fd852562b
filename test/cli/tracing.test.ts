// OpenTelemetry tracing (docs/operating.md, Tracing), against a local OTLP/HTTP receiver this test
// starts: with OTEL_EXPORTER_OTLP_ENDPOINT pointing at it, `reglookup serve` sends a trace per
// lookup whose spans are the lookup (with the request id), the store read, the charge, the upstream
// cache and each upstream call (provider, attempt, HTTP status); no span holds the username, the
// registration or a key. Without the variable no module of the OpenTelemetry SDK is loaded.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver';
import { describePostgres, testSchema } from '../helpers/postgres';
import { startCli, startServeProcess, type ServeProcess } from '../helpers/cli';
import { DVLA_TEST_KEY, startFakeDvla, type FakeDvla } from '../helpers/upstream-dvla';

jest.setTimeout(120_000);

// A caller's username is its password (README, Security): it must never reach a collector.
const SECRET_USERNAME = 'payer-7c1e9d0b2f4a';
const SAMPLE = path.resolve(__dirname, '../../data/sample.ndjson');

describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  let receiver: OtlpReceiver;
  let dvla: FakeDvla;
  let srv: ServeProcess;
  let dir: string;
  /** The spans of the trace whose lookup span carries this request id. */
  let traceOf: (requestId: string) => { lookup: ReceivedSpan; children: ReceivedSpan[] };

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    dvla = await startFakeDvla();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-tracing-'));
    const env = {
      DATABASE_URL: `sqlite:${path.join(dir, 'store.db')}`,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_SERVICE_NAME: 'reglookup-under-test',
      PROVIDERS: 'store,dvla',
      DVLA_URL: dvla.url,
      DVLA_API_KEY: DVLA_TEST_KEY,
      UPSTREAM_TIMEOUT_MS: '5000',
      RATE_LIMIT: '0',
    };
    // With an upstream listed the sample is not loaded at start (docs/configuration.md): imported here instead.
    expect(await startCli(['import', SAMPLE], env).exited).toBe(0);
    srv = await startServeProcess(env);
    expect(
      await startCli(['users', 'add', SECRET_USERNAME, '--username', SECRET_USERNAME, '--credits', '10'], env).exited,
    ).toBe(0);
    const get = (op: string, reg: string, username: string, id: string) =>
      fetch(`${srv.base}/api/reg.asmx/${op}?RegistrationNumber=${reg}&username=${username}`, {
        headers: { 'X-Request-Id': id },
      });
    // The sample record, by a caller with credits: read, then charged.
    expect((await get('Check', 'RG11ABC', SECRET_USERNAME, 'trace-stored')).status).toBe(200);
    // Not in the store: DVLA's documented test plate, fetched and cached.
    expect((await get('Check', 'AA19AAA', 'anyone', 'trace-upstream')).status).toBe(200);
    // DVLA's test plate for its 500: a transient failure, retried once, then refused.
    expect((await get('Check', 'ER19ERR', 'anyone', 'trace-failing')).status).toBe(503);
    // The batch of spans is sent at the latest when the service stops (SIGTERM flushes it).
    await srv.stop();
    traceOf = (requestId) => {
      const lookup = receiver.spans.find(
        (s) => s.name === 'lookup' && s.attributes['reglookup.request_id'] === requestId,
      );
      if (!lookup)
        throw new Error(`no lookup span for ${requestId}: ${JSON.stringify(receiver.spans.map((s) => s.name))}`);
      const children = receiver.spans.filter((s) => s.traceId === lookup.traceId && s.parentSpanId === lookup.spanId);
      return { lookup, children };
    };
  });
  afterAll(async () => {
    await srv?.stop();
    await receiver?.close();
    await dvla?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the spans reach the collector over OTLP/HTTP, named after the service', () => {
    expect(receiver.requests.length).toBeGreaterThan(0);
    expect(
      receiver.requests.every((r) => r.path === '/v1/traces' && r.contentType.startsWith('application/json')),
    ).toBe(true);
    expect(receiver.spans.every((s) => s.resource['service.name'] === 'reglookup-under-test')).toBe(true);
  });

  test('a stored lookup: one trace, the lookup with its request id, the store read and the charge under it', () => {
    const { lookup, children } = traceOf('trace-stored');
    expect(lookup.attributes).toMatchObject({
      'reglookup.operation': 'Check',
      'reglookup.transport': 'get',
      'reglookup.request_id': 'trace-stored',
      'reglookup.outcome': 'ok',
      'reglookup.source': 'store',
    });
    expect(lookup.parentSpanId).toBe('');
    expect(children.map((c) => c.name).sort()).toEqual(['charge', 'store.read']);
    expect(children.find((c) => c.name === 'store.read')?.attributes['reglookup.found']).toBe(true);
    expect(children.find((c) => c.name === 'charge')?.attributes['reglookup.charged']).toBe(true);
  });

  test('an upstream lookup: the store read, the cache read, the call to DVLA (attempt 1, status 200) and the cache write', () => {
    const { lookup, children } = traceOf('trace-upstream');
    expect(lookup.attributes['reglookup.source']).toBe('dvla');
    expect(children.map((c) => c.name)).toEqual(['store.read', 'cache.read', 'upstream.call', 'cache.write']);
    expect(children.find((c) => c.name === 'upstream.call')?.attributes).toMatchObject({
      'reglookup.provider': 'dvla',
      'reglookup.upstream.attempt': 1,
      'http.response.status_code': 200,
      'reglookup.upstream.outcome': 'found',
    });
  });

  test('a failing upstream: each attempt its own span with the status it answered; the lookup marked as an error', () => {
    const { lookup, children } = traceOf('trace-failing');
    const calls = children.filter((c) => c.name === 'upstream.call');
    // docs/upstream.md: a transient failure (a 500) is retried up to two times; DVLA saw each call.
    expect(dvla.calls.get('ER19ERR')).toBe(3);
    expect(
      calls.map((c) => [c.attributes['reglookup.upstream.attempt'], c.attributes['http.response.status_code']]),
    ).toEqual([
      [1, 500],
      [2, 500],
      [3, 500],
    ]);
    expect(calls.every((c) => c.status === 2 && c.attributes['reglookup.upstream.outcome'] === 'transient')).toBe(true);
    expect(lookup.attributes['reglookup.outcome']).toBe('SERVICE_UNAVAILABLE');
    expect(lookup.status).toBe(2);
  });

  test('no span holds the username, a registration or the upstream key', () => {
    const sent = receiver.bodies.join('\n');
    expect(sent).toContain('trace-stored');
    for (const secret of [SECRET_USERNAME, 'anyone', DVLA_TEST_KEY, 'RG11ABC', 'AA19AAA', 'ER19ERR'])
      expect(sent).not.toContain(secret);
  });
});

describePostgres('on PostgreSQL', () => {
  test("a metered lookup's read and charge, one statement there, are one span under the lookup", async () => {
    const receiver = await startOtlpReceiver();
    const schema = testSchema();
    const env = { DATABASE_URL: schema.url, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, RATE_LIMIT: '0' };
    try {
      const srv = await startServeProcess(env);
      try {
        expect(
          await startCli(['users', 'add', SECRET_USERNAME, '--username', SECRET_USERNAME, '--credits', '5'], env)
            .exited,
        ).toBe(0);
        const res = await fetch(
          `${srv.base}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=${SECRET_USERNAME}`,
          {
            headers: { 'X-Request-Id': 'trace-pg' },
          },
        );
        expect(res.status).toBe(200);
      } finally {
        // Stopping the service sends the spans still buffered.
        await srv.stop();
      }
      const lookup = receiver.spans.find((s) => s.attributes['reglookup.request_id'] === 'trace-pg');
      expect(lookup?.name).toBe('lookup');
      const children = receiver.spans.filter((s) => s.parentSpanId === lookup?.spanId);
      expect(children.map((c) => [c.name, c.attributes['db.system'], c.attributes['reglookup.charged']])).toEqual([
        ['store.read_and_charge', 'postgresql', true],
      ]);
      expect(receiver.bodies.join('\n')).not.toContain(SECRET_USERNAME);
    } finally {
      await receiver.close();
      await schema.drop();
    }
  });
});

describe('without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  /** Serves one lookup from the built service in a process of its own, then lists what it loaded. */
  function loadedAfterALookup(env: Record<string, string>): { ok: boolean; otel: string[] } {
    const script = `
      const { loadConfig } = require('./dist/config');
      const { openStore } = require('./dist/store/open');
      const { createService, createHttpServer, loadSampleIfEmpty } = require('./dist/app');
      const { createLogger } = require('./dist/ops/logger');
      (async () => {
        const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent', PORT: '0', ...${JSON.stringify(env)} });
        const store = openStore(config.databaseUrl, {});
        const logger = createLogger(config.logLevel, config.logFormat);
        await loadSampleIfEmpty(store, logger);
        const service = await createService(config, store, logger);
        const server = createHttpServer(service, config);
        await new Promise((r) => server.listen(0, '127.0.0.1', r));
        const res = await fetch('http://127.0.0.1:' + server.address().port + '/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=x');
        const otel = Object.keys(require.cache).filter((k) => k.includes('@opentelemetry') && !k.includes('@opentelemetry/api/'));
        process.stdout.write(JSON.stringify({ ok: res.status === 200, otel }));
        process.exit(0);
      })();`;
    const r = spawnSync(process.execPath, ['-e', script], { cwd: path.resolve(__dirname, '../..'), encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    return JSON.parse(r.stdout) as { ok: boolean; otel: string[] };
  }

  // The OpenTelemetry API alone is loaded either way: prom-client requires it (for its exemplars), and without an SDK
  // it does nothing.
  test('no OpenTelemetry SDK module is loaded (with it set, the SDK is: the check can tell)', async () => {
    const off = loadedAfterALookup({});
    expect(off.ok).toBe(true);
    expect(off.otel).toEqual([]);
    const receiver = await startOtlpReceiver();
    try {
      const on = loadedAfterALookup({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint });
      expect(on.ok).toBe(true);
      expect(on.otel.some((m) => m.includes('sdk-trace-base'))).toBe(true);
    } finally {
      await receiver.close();
    }
  });
});
