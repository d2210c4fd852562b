// Fault: the upstream answers 900 KB of deeply nested JSON (under UPSTREAM_MAX_BYTES) to 32 lookups
// at once. Held to issue 43 (point 5): /healthz keeps answering within 200 ms (p99 under 50 ms is
// the target), each lookup is refused with SERVICE_UNAVAILABLE and nothing charged, and the log says
// why at warn. The service and the stand-in upstream each run as a process of their own, so that
// the test's probes of /healthz wait for nothing but the service.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { serve, type Served } from '../helpers/cli';
import { recordScenario } from './scenario';

jest.setTimeout(120_000);

const LOOKUPS = 32;
const ROUNDS = 6;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// A stand-in DVLA answering a PLAIN... registration with a small vehicle record, and any other with one of two
// 900 KB bodies, made once: arrays nested 450,000 deep or objects nested 150,000 deep, in turn. It prints its port,
// then the size of each deep body it sends.
const UPSTREAM = `
const http = require('node:http');
const arrays = Buffer.from('['.repeat(450000) + ']'.repeat(450000));
const objects = Buffer.from('{"a":'.repeat(150000) + '1' + '}'.repeat(150000));
let n = 0;
const server = http.createServer((req, res) => {
  let text = '';
  req.on('data', (c) => (text += c));
  req.on('end', () => {
    const reg = JSON.parse(text).registrationNumber;
    if (reg.startsWith('PLAIN')) {
      const plain = JSON.stringify({ registrationNumber: reg, make: 'FORD', colour: 'RED', yearOfManufacture: 2019 });
      return res.writeHead(200, { 'content-type': 'application/json' }).end(plain);
    }
    const body = n++ % 2 === 0 ? arrays : objects;
    process.stdout.write('call ' + body.length + '\\n');
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write('port ' + server.address().port + '\\n'));
`;

let upstream: ChildProcessWithoutNullStreams | undefined;
let server: Served | undefined;

afterAll(async () => {
  await server?.stop();
  upstream?.kill();
});

test('32 concurrent deeply nested answers: /healthz stays fast, each lookup refused, the reason logged', async () => {
  upstream = spawn(process.execPath, ['-e', UPSTREAM]);
  let upstreamOut = '';
  const port = await new Promise<string>((resolve, reject) => {
    upstream!.stdout.on('data', (c: Buffer) => {
      upstreamOut += c.toString();
      const m = /^port (\d+)$/m.exec(upstreamOut);
      if (m) resolve(m[1]);
    });
    upstream!.on('exit', (code) => reject(new Error(`the upstream exited (${code})`)));
  });
  server = await serve({
    PROVIDERS: 'dvla',
    DVLA_URL: `http://127.0.0.1:${port}`,
    DVLA_API_KEY: 'any-key',
    SAMPLE_DATA: 'false',
    DATABASE_URL: 'sqlite::memory:',
    UPSTREAM_TIMEOUT_MS: '10000',
    UPSTREAM_BREAKER_FAILURES: '10000',
    UPSTREAM_CONCURRENCY: String(LOOKUPS),
    RATE_LIMIT: '0',
    LOG_FORMAT: 'json',
  });
  const base = server.url.replace(/\/api\/reg\.asmx$/, '');

  /** ROUNDS rounds of LOOKUPS lookups at once of plates named `prefix`..., /healthz asked all the while. */
  const phase = async (prefix: string, rounds: number) => {
    let probing = true;
    const healthz: number[] = [];
    const prober = (async () => {
      while (probing) {
        const t = performance.now();
        const res = await fetch(`${base}/healthz`);
        await res.text();
        expect(res.status).toBe(200);
        healthz.push(performance.now() - t);
        await sleep(5);
      }
    })();
    const answers: { status: number; body: string }[] = [];
    for (let r = 0; r < rounds; r++) {
      answers.push(
        ...(await Promise.all(
          Array.from({ length: LOOKUPS }, async (_, i) => {
            // A caller each: one caller may have only half of UPSTREAM_CONCURRENCY in flight (docs/upstream.md).
            const res = await fetch(`${server!.url}/Check?RegistrationNumber=${prefix}${r}X${i}&username=caller${i}`);
            return { status: res.status, body: await res.text() };
          }),
        )),
      );
    }
    probing = false;
    await prober;
    return { healthz, answers };
  };
  const stats = (ms: number[]) => {
    const sorted = [...ms].sort((a, b) => a - b);
    return {
      p99: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))],
      max: sorted[sorted.length - 1],
      text: `${ms.length} probes, p50 ${sorted[Math.floor(sorted.length / 2)].toFixed(1)} ms, p99 ${sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))].toFixed(1)} ms, max ${sorted[sorted.length - 1].toFixed(1)} ms`,
    };
  };

  // Warm-up, not measured: the first requests of a process compile its code and open its connections.
  for (let i = 0; i < 20; i++) await (await fetch(`${base}/healthz`)).text();
  await phase('PLAINW', 1);
  // The same load with ordinary answers, for comparison: what the machine allows /healthz.
  const plain = await phase('PLAIN', ROUNDS);
  expect(plain.answers.every((a) => a.status === 200)).toBe(true);
  const { healthz, answers } = await phase('DEEP', ROUNDS);
  const log = server.output();
  await server.stop();
  server = undefined;

  const deep = stats(healthz);
  const control = stats(plain.healthz);
  process.stdout.write(`/healthz with ordinary answers: ${control.text}; with deeply nested ones: ${deep.text}\n`);
  expect(healthz.length).toBeGreaterThanOrEqual(5);
  // Within 200 ms, as the issue asks; on a machine so loaded that ordinary answers already take /healthz past that,
  // no worse than twice what they take. (Before the bound, 900 KB answers held /healthz for seconds.)
  expect(deep.max).toBeLessThan(Math.max(200, 2 * control.max));
  for (const a of answers) {
    expect(a.status).toBe(503);
    // The caller is told which upstream failed, never its address: the reason is the log's (docs/upstream.md).
    expect(a.body).toMatch(/^SERVICE_UNAVAILABLE: No upstream could answer for now: the dvla upstream could not give/);
    expect(a.body).not.toMatch(/127\.0\.0\.1|nested/);
  }
  // Each body under UPSTREAM_MAX_BYTES, and one call per lookup.
  const calls = upstreamOut.split('\n').filter((l) => l.startsWith('call '));
  expect(calls).toHaveLength(LOOKUPS * ROUNDS);
  for (const c of calls) expect(Number(c.slice(5))).toBeGreaterThanOrEqual(900_000);
  for (const c of calls) expect(Number(c.slice(5))).toBeLessThan(1_048_576);
  const warned = log
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: string; message: string; provider?: string; reason?: string })
    .filter((l) => l.message === 'upstream failed');
  expect(warned).toHaveLength(LOOKUPS * ROUNDS);
  for (const w of warned) {
    expect(w.level).toBe('warn');
    expect(w.provider).toBe('dvla');
    expect(w.reason).toBe(`127.0.0.1:${port} answered JSON nested deeper than 64 levels`);
  }
  expect(log).not.toMatch(/\n\s+at /);
  recordScenario({
    scenario: 'upstream answers deeply nested JSON',
    answered: `${answers.length} lookups (${ROUNDS} rounds of ${LOOKUPS} at once) x 503 SERVICE_UNAVAILABLE; /healthz meanwhile: ${deep.text} (with as many ordinary answers: ${control.text})`,
    charged: 'nothing (every lookup refused before a charge)',
    logged: `${warned.length} warn line(s) 'upstream failed' with the reason '${warned[0].reason}'`,
  });
});
