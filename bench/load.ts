// The load generator, in its own process so that it runs on the other core:
//   node -r ts-node/register/transpile-only bench/load.ts '{"url":...,"scenario":...,...}'
// drives one target, drawing a random registration for every request, and prints the result as one
// JSON line (autocannon's, or the same fields of it). As fast as it will go: autocannon, closed loop.
// At a fixed rate: its own open-loop sender (fixedRate below).

import fs from 'node:fs';
import http from 'node:http';
import autocannon from 'autocannon';

interface LoadSpec {
  readonly url: string;
  readonly scenario: string;
  readonly seconds: number;
  readonly connections: number;
  /** Requests per second across all connections; absent means as fast as possible. */
  readonly rate?: number;
  readonly regsFile: string;
  /** Draw registrations from only this many of the store's (a hot working set); absent means all. */
  readonly hot?: number;
  /** The username every request is sent as (default `bench`, which has no account: unmetered). */
  readonly username?: string;
}

const spec = JSON.parse(process.argv[2]) as LoadSpec;
const all = JSON.parse(fs.readFileSync(spec.regsFile, 'utf8')) as { Check: string[]; UKMOT: string[] };
const regs = spec.hot ? { Check: all.Check.slice(0, spec.hot), UKMOT: all.UKMOT.slice(0, spec.hot) } : all;
const NS = 'http://regcheck.org.uk';
const USER = encodeURIComponent(spec.username ?? 'bench');
const pick = (list: string[]) => list[Math.floor(Math.random() * list.length)];
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

function envelope(version: '1.1' | '1.2', op: string, reg: string): string {
  const env =
    version === '1.1' ? 'http://schemas.xmlsoap.org/soap/envelope/' : 'http://www.w3.org/2003/05/soap-envelope';
  return `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${env}"><soap:Body><${op} xmlns="${NS}"><RegistrationNumber>${esc(reg)}</RegistrationNumber><username>${esc(spec.username ?? 'bench')}</username></${op}></soap:Body></soap:Envelope>`;
}

type Req = { method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: string };

const SCENARIOS: Record<string, () => Req> = {
  'GET Check': () => ({
    method: 'GET',
    path: `/api/reg.asmx/Check?RegistrationNumber=${encodeURIComponent(pick(regs.Check))}&username=${USER}`,
    headers: {},
  }),
  'POST Check': () => ({
    method: 'POST',
    path: '/api/reg.asmx/Check',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `RegistrationNumber=${encodeURIComponent(pick(regs.Check))}&username=${USER}`,
  }),
  'SOAP 1.1 Check': () => ({
    method: 'POST',
    path: '/api/reg.asmx',
    headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${NS}/Check"` },
    body: envelope('1.1', 'Check', pick(regs.Check)),
  }),
  'SOAP 1.2 Check': () => ({
    method: 'POST',
    path: '/api/reg.asmx',
    headers: { 'content-type': 'application/soap+xml; charset=utf-8' },
    body: envelope('1.2', 'Check', pick(regs.Check)),
  }),
  'SOAP 1.1 UKMOT': () => ({
    method: 'POST',
    path: '/api/reg.asmx',
    headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${NS}/UKMOT"` },
    body: envelope('1.1', 'UKMOT', pick(regs.UKMOT)),
  }),
};

const make = SCENARIOS[spec.scenario];
if (!make) throw new Error(`unknown scenario ${spec.scenario}`);

/**
 * A fixed rate, open loop: request i is due at start + i/rate and is sent then (within the timer's
 * millisecond), whatever became of the ones before it, over a pool of keep-alive connections. Its
 * latency runs from when it was sent to its answer's last byte, including any wait for a free
 * connection, so a stall shows in full in every request it delays. (autocannon's own
 * rate option is not this: each connection sends back-to-back until it has made its share of the
 * second and then waits for the next second, so "1,000 requests/s" is a burst at full speed followed
 * by idling; and its coordinated-omission correction, given an expected interval rounded up to 1 ms,
 * adds made-up samples to every answer slower than that.)
 */
function fixedRate(rate: number): void {
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.connections });
  const target = new URL(spec.url);
  const interval = 1000 / rate;
  const latencies: number[] = [];
  let errors = 0;
  let timeouts = 0;
  let non2xx = 0;
  let sent = 0;
  let settled = 0;
  const start = performance.now();
  const total = Math.round(spec.seconds * rate);
  const send = () => {
    const sentAt = performance.now();
    const r = make();
    sent++;
    // Each request ends exactly once: answered (2xx or not), failed, or timed out.
    let over = false;
    const settle = (outcome: 'answered' | 'non2xx' | 'error' | 'timeout') => {
      if (over) return;
      over = true;
      settled++;
      if (outcome === 'answered') latencies.push(performance.now() - sentAt);
      else if (outcome === 'non2xx') non2xx++;
      else if (outcome === 'error') errors++;
      else timeouts++;
    };
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        agent,
        method: r.method,
        path: r.path,
        headers: {
          ...r.headers,
          'x-bench-scenario': spec.scenario,
          ...(r.body ? { 'content-length': Buffer.byteLength(r.body) } : {}),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          settle(
            res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode <= 299 ? 'answered' : 'non2xx',
          ),
        );
        res.on('error', () => settle('error'));
        res.on('aborted', () => settle('error'));
      },
    );
    req.setTimeout(10_000, () => {
      settle('timeout');
      req.destroy();
    });
    req.on('error', () => settle('error'));
    req.end(r.body);
  };
  // Request i is due at start + i * interval.
  const tick = () => {
    const now = performance.now();
    while (sent < total && start + sent * interval <= now) send();
    if (sent < total) setTimeout(tick, Math.max(0, start + sent * interval - performance.now()));
    else waitForAll();
  };
  const waitForAll = () => {
    if (settled < sent && performance.now() < start + spec.seconds * 1000 + 15_000)
      return void setTimeout(waitForAll, 20);
    latencies.sort((a, b) => a - b);
    const q = (f: number) =>
      latencies.length
        ? Math.round(10 * latencies[Math.min(latencies.length - 1, Math.ceil(f * latencies.length) - 1)]) / 10
        : 0;
    agent.destroy();
    // The fields of autocannon's result that bench/run.ts reads (requests: answers of any status).
    process.stdout.write(
      JSON.stringify({
        requests: {
          average: Math.round((10 * (latencies.length + non2xx)) / spec.seconds) / 10,
          total: latencies.length + non2xx,
        },
        latency: { p50: q(0.5), p99: q(0.99), p99_9: q(0.999), max: q(1) },
        errors: errors + (sent - settled),
        timeouts,
        non2xx,
      }) + '\n',
    );
  };
  tick();
}

if (spec.rate) fixedRate(spec.rate);
else {
  const instance = autocannon(
    {
      url: spec.url,
      connections: spec.connections,
      duration: spec.seconds,
      requests: [
        {
          setupRequest: (req: autocannon.Request) => {
            const r = make();
            return {
              ...req,
              method: r.method,
              path: r.path,
              headers: { ...r.headers, 'x-bench-scenario': spec.scenario },
              body: r.body,
            };
          },
        },
      ],
    },
    (err, result) => {
      if (err) {
        process.stderr.write(`${err.message}\n`);
        process.exit(1);
      }
      process.stdout.write(JSON.stringify(result) + '\n');
    },
  );
  process.on('SIGTERM', () => instance.stop());
}
