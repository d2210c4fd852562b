// The metrics as the README's Metrics table names them (src/ops/metrics.ts, src/ops/metricsport.ts),
// read back in the Prometheus text format a scraper sees. Bucket counts are judged by the format's
// own rule (a bucket `le="x"` counts every observation <= x, `+Inf` all of them), whatever bounds
// the code chose; the names, types and labels come from the README.

import cluster from 'node:cluster';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import v8 from 'node:v8';
import type client from 'prom-client';
import request from 'supertest';

type MetricsModule = typeof import('../../src/ops/metrics');

/**
 * A fresh copy of the module (the process's metrics are made once per module instance), with
 * `primary` standing in for prom-client's cluster aggregation when given.
 */
function fresh(primary?: () => Promise<string>): MetricsModule {
  let m!: MetricsModule;
  jest.isolateModules(() => {
    const prom = require('prom-client') as typeof client;
    if (primary) jest.spyOn(prom.AggregatorRegistry.prototype, 'clusterMetrics').mockImplementation(primary);
    m = require('../../src/ops/metrics') as MetricsModule;
  });
  return m;
}

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/** The samples of a Prometheus text exposition (one per line that is not a comment). */
function samples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: m[3] === '+Inf' ? Infinity : Number(m[3]) });
  }
  return out;
}

const typeOf = (text: string, name: string) => new RegExp(`^# TYPE ${name} (\\w+)$`, 'm').exec(text)?.[1];
const find = (all: Sample[], name: string, labels: Record<string, string> = {}) =>
  all.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
const value = (all: Sample[], name: string, labels: Record<string, string> = {}) => {
  const found = find(all, name, labels);
  if (found.length !== 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
  return found[0].value;
};

/** Checks a histogram's buckets against the observations it was given, by the format's rule. */
function expectBuckets(all: Sample[], name: string, labels: Record<string, string>, observed: number[]) {
  const buckets = find(all, `${name}_bucket`, labels);
  expect(buckets.length).toBeGreaterThan(2);
  const les = buckets.map((b) => (b.labels.le === '+Inf' ? Infinity : Number(b.labels.le)));
  expect(les[les.length - 1]).toBe(Infinity);
  for (let i = 1; i < les.length; i++) expect(les[i]).toBeGreaterThan(les[i - 1]);
  buckets.forEach((b, i) =>
    expect([b.labels.le, b.value]).toEqual([b.labels.le, observed.filter((o) => o <= les[i]).length]),
  );
  expect(value(all, `${name}_count`, labels)).toBe(observed.length);
  expect(value(all, `${name}_sum`, labels)).toBeCloseTo(
    observed.reduce((a, b) => a + b, 0),
    9,
  );
  return les;
}

describe('the README Metrics table, as scraped', () => {
  test('requests: a counter by transport, operation (empty when none was named) and outcome, each combination its own tally', async () => {
    const m = fresh().metrics();
    m.request('get', 'Check', 'ok', 0.001);
    m.request('get', 'Check', 'ok', 0.002);
    m.request('get', 'Check', 'NOT_FOUND', 0.001);
    m.request('get', 'CheckUSA', 'ok', 0.001);
    m.request('soap11', 'Check', 'ok', 0.001);
    m.request('json', '', 'BAD_REQUEST', 0.001);
    const text = await m.registry.metrics();
    expect(typeOf(text, 'reglookup_requests_total')).toBe('counter');
    const all = samples(text);
    expect(find(all, 'reglookup_requests_total').map((s) => [s.labels, s.value])).toEqual(
      expect.arrayContaining([
        [{ transport: 'get', operation: 'Check', outcome: 'ok' }, 2],
        [{ transport: 'get', operation: 'Check', outcome: 'NOT_FOUND' }, 1],
        [{ transport: 'get', operation: 'CheckUSA', outcome: 'ok' }, 1],
        [{ transport: 'soap11', operation: 'Check', outcome: 'ok' }, 1],
        [{ transport: 'json', operation: '', outcome: 'BAD_REQUEST' }, 1],
      ]),
    );
    expect(find(all, 'reglookup_requests_total')).toHaveLength(5);
  });

  test('a scrape counts what came since the last one on top of it (counters never go back)', async () => {
    const m = fresh().metrics();
    m.request('post', 'Check', 'ok', 0.001);
    expect(value(samples(await m.registry.metrics()), 'reglookup_requests_total', { transport: 'post' })).toBe(1);
    expect(value(samples(await m.registry.metrics()), 'reglookup_requests_total', { transport: 'post' })).toBe(1);
    m.request('post', 'Check', 'ok', 0.001);
    expect(value(samples(await m.registry.metrics()), 'reglookup_requests_total', { transport: 'post' })).toBe(2);
  });

  test('request duration: a histogram by transport; each observation in every bucket at or above it, +Inf counting all', async () => {
    const m = fresh().metrics();
    const get = [0.0001, 0.0005, 0.0007, 0.001, 0.003, 0.2, 1, 7, 10, 42];
    for (const s of get) m.request('get', 'Check', 'ok', s);
    m.request('soap12', 'Check', 'ok', 0.02);
    const text = await m.registry.metrics();
    expect(typeOf(text, 'reglookup_request_duration_seconds')).toBe('histogram');
    const all = samples(text);
    const les = expectBuckets(all, 'reglookup_request_duration_seconds', { transport: 'get' }, get);
    // The README: cached answers in well under a millisecond, slow ones up to the request timeout.
    expect(les[0]).toBeLessThan(0.001);
    expectBuckets(all, 'reglookup_request_duration_seconds', { transport: 'soap12' }, [0.02]);
  });

  test('store query duration: a histogram with no labels', async () => {
    const m = fresh().metrics();
    const reads = [0.00001, 0.0001, 0.002, 0.5, 3];
    for (const s of reads) m.storeQuery(s);
    const text = await m.registry.metrics();
    expect(typeOf(text, 'reglookup_store_query_duration_seconds')).toBe('histogram');
    const all = samples(text);
    expectBuckets(all, 'reglookup_store_query_duration_seconds', {}, reads);
    for (const s of find(all, 'reglookup_store_query_duration_seconds_bucket'))
      expect(Object.keys(s.labels)).toEqual(['le']);
  });

  test('refusals: by code, each of the README three present at 0 before the first, counted with the request', async () => {
    const m = fresh().metrics();
    let all = samples(await m.registry.metrics());
    for (const code of ['OUT_OF_CREDIT', 'DAILY_LIMIT_REACHED', 'RATE_LIMITED'])
      expect(value(all, 'reglookup_refusals_total', { code })).toBe(0);
    expect(find(all, 'reglookup_refusals_total')).toHaveLength(3);
    m.request('get', 'Check', 'RATE_LIMITED', 0.001);
    m.request('get', 'Check', 'RATE_LIMITED', 0.001);
    m.request('soap11', 'CheckUSA', 'OUT_OF_CREDIT', 0.001);
    m.request('post', 'Check', 'DAILY_LIMIT_REACHED', 0.001);
    // Not refusals of the caller's credit, quota or rate.
    m.request('get', 'Check', 'NOT_FOUND', 0.001);
    m.request('get', 'Check', 'AUTH_FAILED', 0.001);
    m.request('get', 'Check', 'ok', 0.001);
    const text = await m.registry.metrics();
    expect(typeOf(text, 'reglookup_refusals_total')).toBe('counter');
    all = samples(text);
    expect(value(all, 'reglookup_refusals_total', { code: 'RATE_LIMITED' })).toBe(2);
    expect(value(all, 'reglookup_refusals_total', { code: 'OUT_OF_CREDIT' })).toBe(1);
    expect(value(all, 'reglookup_refusals_total', { code: 'DAILY_LIMIT_REACHED' })).toBe(1);
    expect(find(all, 'reglookup_refusals_total')).toHaveLength(3);
    expect(value(all, 'reglookup_requests_total', { outcome: 'RATE_LIMITED' })).toBe(2);
  });

  test('imports: by result, and the records only of committed ones', async () => {
    const mod = fresh();
    const m = mod.metrics();
    mod.countImport(120, true);
    mod.countImport(5, true);
    mod.countImport(999, false);
    const text = await m.registry.metrics();
    expect(typeOf(text, 'reglookup_imports_total')).toBe('counter');
    expect(typeOf(text, 'reglookup_imported_records_total')).toBe('counter');
    const all = samples(text);
    expect(value(all, 'reglookup_imports_total', { result: 'committed' })).toBe(2);
    expect(value(all, 'reglookup_imports_total', { result: 'rolled_back' })).toBe(1);
    expect(value(all, 'reglookup_imported_records_total')).toBe(125);
  });

  test('an import in a process that serves no metrics (a `reglookup import` run) is counted nowhere and makes none', async () => {
    const mod = fresh();
    mod.countImport(10, true);
    const all = samples(await mod.metrics().registry.metrics());
    expect(find(all, 'reglookup_imports_total')).toEqual([]);
    expect(find(all, 'reglookup_imported_records_total').map((s) => s.value)).toEqual([0]);
  });

  test('build info: a gauge of 1 labelled with the version package.json names', async () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    const text = await fresh().metrics().registry.metrics();
    expect(typeOf(text, 'reglookup_build_info')).toBe('gauge');
    expect(find(samples(text), 'reglookup_build_info').map((s) => [s.labels, s.value])).toEqual([
      [{ version: pkg.version }, 1],
    ]);
  });

  test("prom-client's process metrics come with them (process_*, nodejs_*, the event-loop lag)", async () => {
    const all = samples(await fresh().metrics().registry.metrics());
    expect(find(all, 'process_cpu_user_seconds_total')).toHaveLength(1);
    expect(find(all, 'nodejs_heap_size_used_bytes')).toHaveLength(1);
    expect(find(all, 'nodejs_eventloop_lag_seconds')).toHaveLength(1);
  });

  test("the process has one set of metrics: every call hands back the same, and what one caller counts the other's scrape shows", async () => {
    const mod = fresh();
    const a = mod.metrics();
    const b = mod.metrics();
    expect(b).toBe(a);
    a.request('get', 'Check', 'ok', 0.001);
    expect(value(samples(await b.registry.metrics()), 'reglookup_requests_total')).toBe(1);
  });

  test("each of the README's metrics carries a HELP line saying what it counts, in the README's words", async () => {
    const text = await fresh().metrics().registry.metrics();
    const help = (name: string) => new RegExp(`^# HELP ${name} (.+)$`, 'm').exec(text)?.[1] ?? '';
    // A key word of each metric's "Counts" column.
    expect(help('reglookup_requests_total')).toMatch(/request/i);
    expect(help('reglookup_request_duration_seconds')).toMatch(/time/i);
    expect(help('reglookup_store_query_duration_seconds')).toMatch(/store/i);
    expect(help('reglookup_refusals_total')).toMatch(/refused/i);
    expect(help('reglookup_imports_total')).toMatch(/import/i);
    expect(help('reglookup_imported_records_total')).toMatch(/records/i);
    expect(help('reglookup_build_info')).toMatch(/release|version/i);
    expect(help('reglookup_store_up')).toMatch(/store/i);
    expect(help('reglookup_store_unavailable_total')).toMatch(/could not be reached/i);
  });

  test('the store: reglookup_store_up a gauge, 1 until the store cannot be reached, 0 then, 1 when it is back; refused calls counted', async () => {
    const m = fresh().metrics();
    let text = await m.registry.metrics();
    expect(typeOf(text, 'reglookup_store_up')).toBe('gauge');
    expect(typeOf(text, 'reglookup_store_unavailable_total')).toBe('counter');
    expect(value(samples(text), 'reglookup_store_up')).toBe(1);
    m.storeUp(false);
    m.storeUnavailable(1);
    m.storeUnavailable(3);
    text = await m.registry.metrics();
    expect(value(samples(text), 'reglookup_store_up')).toBe(0);
    expect(value(samples(text), 'reglookup_store_unavailable_total')).toBe(4);
    m.storeUp(true);
    expect(value(samples(await m.registry.metrics()), 'reglookup_store_up')).toBe(1);
  });

  test('the content type is the Prometheus text format (text/plain; version=0.0.4)', () => {
    expect(fresh().CONTENT_TYPE).toMatch(/^text\/plain; version=0\.0\.4; charset=utf-8$/);
  });
});

describe('WORKERS above 1: a worker asks the primary for the whole cluster', () => {
  const realSend = process.send;
  afterEach(() => {
    process.send = realSend;
    cluster.removeAllListeners('message');
    process.removeAllListeners('message');
    jest.restoreAllMocks();
  });

  /** A worker's process.send wired to the primary's cluster 'message' event, and back. */
  function wire(): { asked: unknown[] } {
    const asked: unknown[] = [];
    const worker = { send: (msg: unknown) => setImmediate(() => process.emit('message' as never, msg as never)) };
    process.send = ((msg: unknown) => {
      asked.push(msg);
      setImmediate(() => cluster.emit('message', worker, msg));
      return true;
    }) as typeof process.send;
    return { asked };
  }

  test("the primary's aggregated text comes back to the worker that asked, each answer to its own question", async () => {
    const mod = fresh(async () => 'reglookup_requests_total 7\n');
    mod.clusterMetrics();
    const { asked } = wire();
    const [one, two] = await Promise.all([mod.askPrimaryForMetrics(2000), mod.askPrimaryForMetrics(2000)]);
    expect(one).toBe('reglookup_requests_total 7\n');
    expect(two).toBe(one);
    expect(asked).toHaveLength(2);
  });

  test("a primary that fails to collect: the worker's question fails with the primary's reason", async () => {
    const mod = fresh(async () => {
      throw new Error('Operation timed out.');
    });
    mod.clusterMetrics();
    wire();
    await expect(mod.askPrimaryForMetrics(2000)).rejects.toThrow('Operation timed out.');
  });

  test('a primary failing with something other than an Error: its text is the reason', async () => {
    const mod = fresh(() => Promise.reject('no workers connected'));
    mod.clusterMetrics();
    wire();
    await expect(mod.askPrimaryForMetrics(2000)).rejects.toThrow('no workers connected');
  });

  test('a primary that never answers: the question fails after the time given, saying so', async () => {
    const mod = fresh();
    process.send = (() => true) as typeof process.send;
    const t0 = Date.now();
    await expect(mod.askPrimaryForMetrics(200)).rejects.toThrow('the primary did not answer in time');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
  });

  test('messages that are not an answer to a question asked leave the question waiting for its own', async () => {
    const mod = fresh(async () => 'mine\n');
    mod.clusterMetrics();
    const sent: unknown[] = [];
    process.send = ((msg: unknown) => (sent.push(msg), true)) as typeof process.send;
    const pending = mod.askPrimaryForMetrics(2000);
    const settled = jest.fn();
    pending.then(settled, settled);
    // Unrelated traffic on the same channel, and an answer to a question never asked.
    process.emit('message' as never, { type: 'something else', id: 1, text: 'no' } as never);
    process.emit('message' as never, null as never);
    const question = sent[0] as { id: number };
    process.emit('message' as never, { ...(sent[0] as object), id: question.id + 1000 } as never);
    const bystander = { send: jest.fn() };
    cluster.emit('message', bystander, { type: 'something else' });
    cluster.emit('message', bystander, 'text');
    await new Promise((r) => setTimeout(r, 50));
    expect(settled).not.toHaveBeenCalled();
    // The real answer, from the primary.
    cluster.emit('message', { send: (msg: unknown) => process.emit('message' as never, msg as never) }, sent[0]);
    await expect(pending).resolves.toBe('mine\n');
    expect(bystander.send).not.toHaveBeenCalled();
  });

  test('a primary failing with nothing at all (null): the worker is still answered, and its question fails', async () => {
    const mod = fresh(() => Promise.reject(null));
    mod.clusterMetrics();
    wire();
    await expect(mod.askPrimaryForMetrics(2000)).rejects.toThrow('null');
  });

  test('an answer that carries neither text nor a reason fails the question rather than hang it', async () => {
    const mod = fresh(async () => 'x 1\n');
    mod.clusterMetrics();
    // The shape of a real answer, learned from the primary, then sent without its text.
    let answer: Record<string, unknown> = {};
    const worker = { send: (msg: Record<string, unknown>) => (answer = msg) };
    process.send = ((msg: unknown) => (
      setImmediate(() => cluster.emit('message', worker, msg)),
      true
    )) as typeof process.send;
    const first = mod.askPrimaryForMetrics(2000);
    await new Promise((r) => setTimeout(r, 20));
    process.emit('message' as never, answer as never);
    await expect(first).resolves.toBe('x 1\n');
    process.send = ((msg: { id: number }) => (
      setImmediate(() => process.emit('message' as never, { type: answer.type, id: msg.id } as never)),
      true
    )) as typeof process.send;
    await expect(mod.askPrimaryForMetrics(2000)).rejects.toThrow(/\S/);
  });

  test('a worker asking again and again listens for answers with one listener, not one per question', async () => {
    const mod = fresh(async () => 'x 1\n');
    mod.clusterMetrics();
    wire();
    const listening = process.listenerCount('message');
    for (let i = 0; i < 12; i++) await expect(mod.askPrimaryForMetrics(2000)).resolves.toBe('x 1\n');
    expect(process.listenerCount('message') - listening).toBeLessThanOrEqual(1);
    await Promise.all([mod.askPrimaryForMetrics(2000), mod.askPrimaryForMetrics(2000)]);
    expect(process.listenerCount('message') - listening).toBeLessThanOrEqual(1);
  });
});

describe('METRICS_PORT: a server that answers only GET /metrics', () => {
  type MetricsPort = typeof import('../../src/ops/metricsport');
  const { createMetricsServer } = require('../../src/ops/metricsport') as MetricsPort;
  const logged: Array<[string, unknown]> = [];
  const logger = {
    error: (msg: string, meta: unknown) => logged.push([msg, meta]),
  } as unknown as import('../../src/ops/logger').Logger;
  let server: http.Server;
  afterEach(() => {
    logged.length = 0;
    server?.close();
  });

  test('GET /metrics (with or without a query): 200 in the Prometheus text format; HEAD: the same without a body', async () => {
    server = createMetricsServer(async () => 'reglookup_build_info{version="x"} 1\n', logger);
    const got = await request(server).get('/metrics');
    expect(got.status).toBe(200);
    expect(got.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(got.text).toBe('reglookup_build_info{version="x"} 1\n');
    expect((await request(server).get('/metrics?name[]=x')).status).toBe(200);
    const head = await request(server).head('/metrics');
    expect(head.status).toBe(200);
    expect(head.text ?? '').toBe('');
  });

  test('any other path: 404 with a one-line message; another method: 405 with Allow: GET, HEAD', async () => {
    server = createMetricsServer(async () => 'x 1\n', logger);
    for (const p of ['/', '/metricsx', '/api/reg.asmx/Check', '/metrics/']) {
      const got = await request(server).get(p);
      expect([p, got.status, got.headers['content-type']]).toEqual([p, 404, 'text/plain; charset=utf-8']);
      expect(got.text).toMatch(/^[^\n]+\n$/);
    }
    for (const method of ['post', 'put', 'delete'] as const) {
      const got = await request(server)[method]('/metrics');
      expect([method, got.status, got.headers.allow, got.headers['content-type']]).toEqual([
        method,
        405,
        'GET, HEAD',
        'text/plain; charset=utf-8',
      ]);
      expect(got.text).toMatch(/^[^\n]+\n$/);
    }
  });

  test('a scrape that fails: 500 with a one-line message, the detail only in the log at error', async () => {
    server = createMetricsServer(async () => {
      throw new Error('worker 3 at /srv/secret did not answer');
    }, logger);
    const got = await request(server).get('/metrics');
    expect(got.status).toBe(500);
    expect(got.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(got.text).toMatch(/^[^\n]+\n$/);
    expect(got.text).not.toContain('secret');
    expect(logged).toEqual([[expect.stringMatching(/metrics/), { error: 'worker 3 at /srv/secret did not answer' }]]);
  });

  test('a scrape failing with nothing (null) is still answered 500 and logged', async () => {
    server = createMetricsServer(() => Promise.reject(null), logger);
    const got = await request(server).get('/metrics');
    expect(got.status).toBe(500);
    expect(logged).toEqual([[expect.stringMatching(/metrics/), { error: 'null' }]]);
  });
});

describe('the heap tuning and the version', () => {
  afterEach(() => jest.restoreAllMocks());

  test("the serving process sets V8's --heap-growing-percent=100 (README, Memory)", () => {
    const set = jest.spyOn(v8, 'setFlagsFromString').mockImplementation(() => undefined);
    const { tuneHeap } = require('../../src/ops/memory') as typeof import('../../src/ops/memory');
    tuneHeap();
    expect(set.mock.calls).toEqual([['--heap-growing-percent=100']]);
  });

  const versionWith = (readFileSync: () => string): string => {
    jest.spyOn(fs, 'readFileSync').mockImplementationOnce(readFileSync);
    let v!: string;
    jest.isolateModules(() => {
      v = (require('../../src/ops/version') as typeof import('../../src/ops/version')).VERSION;
    });
    return v;
  };

  test('the version is the one package.json names; "unknown" when it cannot be read or names none', () => {
    expect(versionWith(() => JSON.stringify({ version: '9.8.7' }))).toBe('9.8.7');
    expect(versionWith(() => JSON.stringify({ version: 3 }))).toBe('unknown');
    expect(versionWith(() => '{}')).toBe('unknown');
    expect(versionWith(() => 'not json')).toBe('unknown');
    expect(
      versionWith(() => {
        throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
      }),
    ).toBe('unknown');
  });

  test('package.json is read from the package root', () => {
    const read = jest.spyOn(fs, 'readFileSync');
    jest.isolateModules(() => {
      require('../../src/ops/version');
    });
    expect(read.mock.calls[0][0]).toBe(path.resolve(__dirname, '..', '..', 'package.json'));
  });
});
