// The load generator, in its own process so that it runs on the other core:
//   node -r ts-node/register/transpile-only bench/load.ts '{"url":...,"scenario":...,...}'
// drives one target with autocannon, drawing a random registration for every request, and prints
// autocannon's result as one JSON line.

import fs from 'node:fs';
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
}

const spec = JSON.parse(process.argv[2]) as LoadSpec;
const all = JSON.parse(fs.readFileSync(spec.regsFile, 'utf8')) as { Check: string[]; UKMOT: string[] };
const regs = spec.hot ? { Check: all.Check.slice(0, spec.hot), UKMOT: all.UKMOT.slice(0, spec.hot) } : all;
const NS = 'http://regcheck.org.uk';
const pick = (list: string[]) => list[Math.floor(Math.random() * list.length)];
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

function envelope(version: '1.1' | '1.2', op: string, reg: string): string {
  const env = version === '1.1' ? 'http://schemas.xmlsoap.org/soap/envelope/' : 'http://www.w3.org/2003/05/soap-envelope';
  return `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${env}"><soap:Body><${op} xmlns="${NS}"><RegistrationNumber>${esc(reg)}</RegistrationNumber><username>bench</username></${op}></soap:Body></soap:Envelope>`;
}

type Req = { method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: string };

const SCENARIOS: Record<string, () => Req> = {
  'GET Check': () => ({ method: 'GET', path: `/api/reg.asmx/Check?RegistrationNumber=${encodeURIComponent(pick(regs.Check))}&username=bench`, headers: {} }),
  'POST Check': () => ({
    method: 'POST',
    path: '/api/reg.asmx/Check',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `RegistrationNumber=${encodeURIComponent(pick(regs.Check))}&username=bench`,
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

const instance = autocannon(
  {
    url: spec.url,
    connections: spec.connections,
    duration: spec.seconds,
    ...(spec.rate ? { overallRate: spec.rate } : {}),
    requests: [
      {
        setupRequest: (req: autocannon.Request) => {
          const r = make();
          return { ...req, method: r.method, path: r.path, headers: { ...r.headers, 'x-bench-scenario': spec.scenario }, body: r.body };
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
