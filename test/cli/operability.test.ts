// What an operator sees: /healthz, /readyz, /metrics, the access log, start-up failures and
// --version, as the README's "Operating" section describes them.

import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { call } from '../helpers/call';
import { LISTENING, startCli, serveCli } from '../helpers/cli';
import { startServer, type TestServer } from '../helpers/server';
import { freePort } from '../helpers/port';

jest.setTimeout(60_000);

const PACKAGE_VERSION = (
  JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as { version: string }
).version;

/** A GET on a fresh connection each time, so that WORKERS > 1 spreads them over the workers. */
function getFresh(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false, headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      })
      .on('error', reject);
  });
}

/** The value of one sample line of a Prometheus text scrape, or undefined when it is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('health and readiness', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startServer();
  });
  afterAll(() => srv.close());

  test('/healthz answers with the version of package.json', async () => {
    const res = await fetch(`${srv.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', version: PACKAGE_VERSION });
  });

  test('/readyz answers 200 when the store answers', async () => {
    const res = await fetch(`${srv.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', checks: { store: 'ok' } });
  });

  test.each([
    ['PUT', '/healthz'],
    ['POST', '/healthz'],
    ['DELETE', '/readyz'],
    ['POST', '/metrics'],
  ])('%s %s is 405 with Allow', async (method, p) => {
    const res = await fetch(`${srv.url}${p}`, { method });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });

  test('a failing probe makes /readyz 503 with a JSON reason naming it, and no detail of the failure', async () => {
    const other = await startServer(
      {},
      {
        service: {
          probes: [{ name: 'redis', check: () => Promise.reject(new Error('connect ECONNREFUSED 10.1.2.3:6379')) }],
        },
      },
    );
    try {
      const res = await fetch(`${other.url}/readyz`);
      expect(res.status).toBe(503);
      const body = (await res.json()) as { status: string; reason: string; checks: Record<string, string> };
      expect(body.status).toBe('not ready');
      expect(body.reason).toContain('redis');
      expect(body.checks.store).toBe('ok');
      expect(JSON.stringify(body)).not.toContain('10.1.2.3');
      // /healthz still answers: the process is alive, only not ready.
      expect((await fetch(`${other.url}/healthz`)).status).toBe(200);
    } finally {
      await other.close();
    }
  });

  test('a store that stops answering makes /readyz 503', async () => {
    const other = await startServer();
    try {
      await other.store.close();
      const res = await fetch(`${other.url}/readyz`);
      expect(res.status).toBe(503);
      expect(((await res.json()) as { reason: string }).reason).toContain('store');
    } finally {
      other.server.closeAllConnections();
      await new Promise((r) => other.server.close(r));
    }
  });
});

describe('readiness with REDIS_URL', () => {
  // README: with the default RATE_LIMIT_ON_REDIS_ERROR=allow a failing Redis leaves /readyz 200,
  // its check "degraded"; with deny it is not ready.
  test.each([
    ['answering (the Redis on this machine)', 'redis://127.0.0.1:6379', 'allow', 200, 'ok'],
    ['not answering (nothing listens on port 1), allow', 'redis://127.0.0.1:1', 'allow', 200, 'degraded'],
    ['not answering (nothing listens on port 1), deny', 'redis://127.0.0.1:1', 'deny', 503, 'failing'],
  ])('Redis %s: /readyz %s', async (_name, redisUrl, policy, status, check) => {
    const { run, url } = await serveCli({ REDIS_URL: redisUrl, RATE_LIMIT_ON_REDIS_ERROR: policy });
    try {
      const res = await getFresh(`${url}/readyz`);
      expect(res.status).toBe(status);
      const body = JSON.parse(res.body) as { checks: Record<string, string>; reason?: string; degraded?: string };
      expect(body.checks.redis).toBe(check);
      if (status === 503) expect(body.reason).toContain('redis');
      if (check === 'degraded') expect(body.degraded).toMatch(/redis is failing: rate limits are not applied/);
      else expect(body.degraded).toBeUndefined();
    } finally {
      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
    }
  });
});

describe('/metrics', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startServer({ RATE_LIMIT: '0.001', RATE_LIMIT_BURST: '0' });
  });
  afterAll(() => srv.close());

  test('counts requests by transport, operation and outcome, refusals, latency, store reads, and the process', async () => {
    expect((await call(srv.url, 'get', 'Check', { RegistrationNumber: 'RG11ABC', username: 'metrics-a' })).status).toBe(
      200,
    );
    expect(
      (await call(srv.url, 'soap11', 'Check', { RegistrationNumber: 'ZZ99ZZZ', username: 'metrics-b' })).status,
    ).toBe(500);
    expect(
      (await call(srv.url, 'post', 'Check', { RegistrationNumber: 'RG11ABC', username: 'metrics-c' })).status,
    ).toBe(200);
    // The rate limit is one lookup a minute per username: the second is refused.
    expect(
      (await call(srv.url, 'post', 'Check', { RegistrationNumber: 'RG11ABC', username: 'metrics-c' })).status,
    ).toBe(429);

    const res = await fetch(`${srv.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(sample(text, 'reglookup_requests_total{transport="get",operation="Check",outcome="ok"}')).toBe(1);
    expect(
      sample(text, 'reglookup_requests_total{transport="soap11",operation="Check",outcome="VEHICLE_NOT_FOUND"}'),
    ).toBe(1);
    expect(sample(text, 'reglookup_requests_total{transport="post",operation="Check",outcome="RATE_LIMITED"}')).toBe(1);
    expect(sample(text, 'reglookup_refusals_total{code="RATE_LIMITED"}')).toBe(1);
    expect(sample(text, 'reglookup_refusals_total{code="OUT_OF_CREDIT"}')).toBe(0);
    expect(sample(text, 'reglookup_request_duration_seconds_count{transport="post"}')).toBe(2);
    expect(sample(text, 'reglookup_request_duration_seconds_bucket{le="+Inf",transport="get"}')).toBe(1);
    // Three lookups reached the store (the refused one did not).
    expect(sample(text, 'reglookup_store_query_duration_seconds_count')).toBe(3);
    expect(sample(text, 'reglookup_imports_total{result="committed"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'reglookup_imported_records_total')).toBeGreaterThan(0);
    expect(text).toContain('\nnodejs_eventloop_lag_seconds ');
    expect(text).toContain('\nprocess_cpu_user_seconds_total ');
    expect(sample(text, `reglookup_build_info{version="${PACKAGE_VERSION}"}`)).toBe(1);
  });

  test('METRICS=off: no /metrics', async () => {
    const off = await startServer({ METRICS: 'off' });
    try {
      expect((await fetch(`${off.url}/metrics`)).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});

describe('/metrics of a running reglookup serve', () => {
  test('METRICS_PORT: the metrics on their own port and not on the service port', async () => {
    const metricsPort = await freePort();
    const { run, url } = await serveCli({ METRICS_PORT: String(metricsPort) });
    try {
      expect((await getFresh(`${url}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=demo`)).status).toBe(200);
      expect((await getFresh(`${url}/metrics`)).status).toBe(404);
      const scrape = await getFresh(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(scrape.status).toBe(200);
      expect(sample(scrape.body, 'reglookup_requests_total{transport="get",operation="Check",outcome="ok"}')).toBe(1);
    } finally {
      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
    }
  });

  test.each([
    ['on the service port', false],
    ['on METRICS_PORT', true],
  ])('WORKERS=2: one scrape %s counts the requests of both workers', async (_name, separate) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-metrics-'));
    const metricsPort = separate ? await freePort() : 0;
    const { run, url } = await serveCli({
      WORKERS: '2',
      DATABASE_URL: `sqlite:${path.join(dir, 'reg.db')}`,
      ...(separate ? { METRICS_PORT: String(metricsPort) } : {}),
    });
    try {
      await run.waitFor(LISTENING, 2);
      for (let i = 0; i < 20; i++)
        expect((await getFresh(`${url}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=w${i}`)).status).toBe(
          200,
        );
      const scrape = await getFresh(separate ? `http://127.0.0.1:${metricsPort}/metrics` : `${url}/metrics`);
      expect(scrape.status).toBe(200);
      expect(sample(scrape.body, 'reglookup_requests_total{transport="get",operation="Check",outcome="ok"}')).toBe(20);
    } finally {
      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the access log', () => {
  test('one JSON line per request with its fields; no registration number; control characters escaped; probes only at debug', async () => {
    const { run, url } = await serveCli({ TRUST_PROXY: '127.0.0.1' });
    try {
      // A username with control characters is refused (INVALID_PARAMETER), and logged by its fingerprint.
      await getFresh(`${url}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=al%1B%C2%9Bice`, {
        'X-Request-Id': 'req-get-1',
        'X-Forwarded-For': '203.0.113.7',
      });
      await call(url, 'soap12', 'CheckUSA', { RegistrationNumber: '7ABC123', State: 'CA', username: 'soapuser' });
      await getFresh(`${url}/healthz`);
      await getFresh(`${url}/readyz`);
      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
      const lines = run
        .stdout()
        .split('\n')
        .filter((l) => l.includes('"message":"request"'));
      expect(lines).toHaveLength(2);
      const get = JSON.parse(lines.find((l) => l.includes('req-get-1')) as string) as Record<string, unknown>;
      expect(get).toMatchObject({
        level: 'info',
        id: 'req-get-1',
        client: '203.0.113.7',
        method: 'GET',
        path: '/api/reg.asmx/Check',
        transport: 'get',
        operation: 'Check',
        outcome: 'INVALID_PARAMETER',
        status: 400,
        caller: 'sha256:a47774ab9a78',
      });
      expect(typeof get.ms).toBe('number');
      expect(typeof get.timestamp).toBe('string');
      // The username (the caller's credential) is not in the line, escaped or raw; no raw control byte is.
      const raw = lines.find((l) => l.includes('req-get-1')) as string;
      expect(raw).not.toContain('al\\u001b\\u009bice');
      expect(raw).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
      const soap = JSON.parse(lines.find((l) => l.includes('"soap12"')) as string) as Record<string, unknown>;
      expect(soap).toMatchObject({
        transport: 'soap12',
        operation: 'CheckUSA',
        outcome: 'ok',
        caller: 'sha256:e1b3e486e977',
        client: '127.0.0.1',
      });
      for (const l of lines) {
        expect(l).not.toContain('RG11ABC');
        expect(l).not.toContain('7ABC123');
      }
    } finally {
      run.child.kill('SIGKILL');
    }
  });

  test('LOG_LEVEL=debug logs the probes; LOG_FORMAT=text gives one human-readable line per event', async () => {
    const { run, url } = await serveCli({ LOG_FORMAT: 'text', LOG_LEVEL: 'debug' });
    try {
      await getFresh(`${url}/healthz`);
      await getFresh(`${url}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=demo`);
      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
      const lines = run.stdout().trim().split('\n');
      for (const l of lines) expect(l).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (error|warn|info|debug) \S/);
      expect(lines.some((l) => l.startsWith('{'))).toBe(false);
      expect(lines.find((l) => l.includes(' path=/healthz '))).toMatch(
        / debug request .*transport=health outcome=ok status=200/,
      );
      expect(lines.find((l) => l.includes(' path=/api/reg.asmx/Check '))).toMatch(
        / info request id=\S+ client=127\.0\.0\.1 method=GET path=\/api\/reg\.asmx\/Check transport=get operation=Check outcome=ok status=200 ms=[\d.]+ caller=sha256:2a97516c354b account=- source=store$/,
      );
    } finally {
      run.child.kill('SIGKILL');
    }
  });
});

describe('start-up failures name their cause and variable and exit 2', () => {
  async function failing(env: Record<string, string>): Promise<{ code: number | null; err: string }> {
    const run = startCli(['serve'], {
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: 'sqlite::memory:',
      LOG_LEVEL: 'silent',
      ...env,
    });
    const code = await run.exited;
    return { code, err: run.stderr() };
  }

  test('HOST=999.1.1.1', async () => {
    const { code, err } = await failing({ HOST: '999.1.1.1' });
    expect(code).toBe(2);
    expect(err).toMatch(/^reglookup: HOST .*'999\.1\.1\.1'/);
  });

  test('a DATABASE_URL that cannot be opened', async () => {
    const { code, err } = await failing({ DATABASE_URL: 'sqlite:/proc/x.db' });
    expect(code).toBe(2);
    expect(err).toMatch(/^reglookup: DATABASE_URL 'sqlite:\/proc\/x\.db' cannot be opened/);
  });

  test('a port in use', async () => {
    const taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const { port } = taken.address() as net.AddressInfo;
    try {
      const { code, err } = await failing({ PORT: String(port) });
      expect(code).toBe(2);
      expect(err).toContain(`PORT ${port} is already in use`);
    } finally {
      taken.close();
    }
  });

  test('METRICS_PORT in use', async () => {
    const taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const { port } = taken.address() as net.AddressInfo;
    try {
      const { code, err } = await failing({ METRICS_PORT: String(port) });
      expect(code).toBe(2);
      expect(err).toContain(`METRICS_PORT ${port} is already in use`);
    } finally {
      taken.close();
    }
  });

  test('a bad value', async () => {
    const { code, err } = await failing({ SHUTDOWN_TIMEOUT_MS: 'soon' });
    expect(code).toBe(2);
    expect(err).toContain("SHUTDOWN_TIMEOUT_MS must be a whole number, got 'soon'");
  });
});

test('reglookup --version prints the version of package.json', async () => {
  const run = startCli(['--version'], {});
  expect(await run.exited).toBe(0);
  expect(run.stdout().trim()).toBe(PACKAGE_VERSION);
});
