// Issue 42's check "from outside", apart from the test suite: a gateway (`reglookup serve`, the
// built dist/, started as an operator starts it) in front of stand-ins that answer as the real
// services do, from the published answers in test/fixtures/ (each names its source):
//   - RegCheck: the public service's real answers for UK and Irish plates, its 500 "UK Lookup
//     failed" for any other plate;
//   - DVLA: its test environment's documented answers (AA19AAA, ...), or, switched down, its 500;
//   - DVSA: its OAuth token endpoint and MOT History answers, with its published quota (15 a
//     second, a burst of 10) answered as an API gateway does: 429 past it.
// It prints what it saw for each of the claims; it asserts nothing (the tests do that).
//
//   npm run build && node -r ts-node/register/transpile-only scripts/outside-check.ts

import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { AA19AAA, AA19EEE, DVLA_ERROR_PLATES, taxDueDateFromNow } from '../test/fixtures/dvla-answers';
import { AA19AAA_FORD_FOCUS, AE13SJX_PORSCHE_911 } from '../test/fixtures/dvsa-answers';
import * as rc from '../test/fixtures/regcheck-answers';

const ROOT = path.resolve(__dirname, '..');
const KEY = 'outside-dvla-key';
const RC_USER = 'outside-account';
const DVSA = { id: 'outside-client', secret: 'outside-secret', key: 'outside-api-key' };

type Handler = (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void;

async function listen(handler: Handler): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => handler(req, body, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const json = (res: http.ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

/** RegCheck's HTTP GET binding, answering its recorded answers. */
const REGCHECK: Record<string, Record<string, string>> = {
  Check: {
    AB11BMW: rc.UK_BMW_520_XML,
    CL14RNO: rc.UK_RENAULT_CLIO_XML,
    BL64JTZ: rc.vehicleEnvelope(rc.UK_PEUGEOT_208_JSON),
  },
  CheckIreland: { '04MH8917': rc.IE_AUDI_A6_XML },
  UKMOT: { CL14RNO: rc.UK_RENAULT_CLIO_MOT_XML },
};
const regcheck: Handler = (req, _body, res) => {
  const u = new URL(req.url ?? '/', 'http://x');
  if (u.pathname === '/ajax/getcredits.aspx') return res.writeHead(200).end('100');
  const op = /^\/api\/reg\.asmx\/(\w+)$/.exec(u.pathname)?.[1] ?? '';
  if (u.searchParams.get('username') !== RC_USER) return res.writeHead(500).end(rc.BAD_USERNAME_LINE);
  const xml = REGCHECK[op]?.[u.searchParams.get('RegistrationNumber') ?? ''];
  if (!xml) return res.writeHead(500, { 'content-type': 'text/plain' }).end(rc.NOT_FOUND_LINE);
  res.writeHead(200, { 'content-type': 'text/xml; charset=utf-8' }).end(xml);
};

/** The DVLA's VES, its documented test answers; `down` answers its 500 to everything. */
const DVLA_RECORDS = { AA19AAA, AA19EEE };
const dvlaState = { down: false, calls: 0 };
const dvlaError = (status: number, title: string, detail: string) => ({
  errors: [{ status: String(status), code: `${status}1`, title, detail }],
});
const dvla: Handler = (req, body, res) => {
  if (req.method !== 'POST' || req.url !== '/vehicle-enquiry/v1/vehicles') return json(res, 404, {});
  if (req.headers['x-api-key'] !== KEY) return json(res, 403, { message: 'Forbidden' });
  dvlaState.calls++;
  if (dvlaState.down) return json(res, 500, dvlaError(500, 'Internal Server Error', 'System error occurred'));
  const reg = String((JSON.parse(body) as { registrationNumber?: string }).registrationNumber ?? '');
  const status = DVLA_ERROR_PLATES[reg];
  if (status) return json(res, status, dvlaError(status, 'Error', 'error'));
  const record = (DVLA_RECORDS as Record<string, { taxDueDate: string } | undefined>)[reg];
  if (!record) return json(res, 404, dvlaError(404, 'Vehicle Not Found', 'Record for vehicle not found'));
  json(res, 200, taxDueDateFromNow(record));
};

/** The DVSA: its token endpoint and its vehicles, behind a 15/s, burst 10 quota (429 past it). */
const dvsaVehicles: Record<string, object> = { AA19AAA: AA19AAA_FORD_FOCUS, AE13SJX: AE13SJX_PORSCHE_911 };
const quota = { tokens: 10, at: Date.now(), refused: 0 };
const dvsa: Handler = (req, body, res) => {
  const u = new URL(req.url ?? '/', 'http://x');
  if (u.pathname === '/token') {
    const f = new URLSearchParams(body);
    if (f.get('client_id') !== DVSA.id || f.get('client_secret') !== DVSA.secret)
      return json(res, 401, { error: 'invalid_client' });
    return json(res, 200, { token_type: 'Bearer', expires_in: 3599, ext_expires_in: 3599, access_token: 'tok' });
  }
  const now = Date.now();
  quota.tokens = Math.min(10, quota.tokens + ((now - quota.at) / 1000) * 15);
  quota.at = now;
  if (quota.tokens < 1) {
    quota.refused++;
    return json(res, 429, { message: 'Too Many Requests' });
  }
  quota.tokens -= 1;
  if (req.headers.authorization !== 'Bearer tok' || req.headers['x-api-key'] !== DVSA.key)
    return json(res, 401, { message: 'Unauthorized' });
  const reg = decodeURIComponent(/^\/v1\/trade\/vehicles\/registration\/(.+)$/.exec(u.pathname)?.[1] ?? '');
  const v = dvsaVehicles[reg];
  if (!v) return json(res, 404, { errorCode: 'MOTH-NF-01', errorMessage: `No data found for registration ${reg}` });
  json(res, 200, v);
};

/** `reglookup serve` from dist/, on a store of its own; resolves once it logs its address. */
async function gateway(env: Record<string, string>): Promise<{ url: string; stop: () => Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-outside-'));
  const child: ChildProcess = spawn(process.execPath, [path.join(ROOT, 'bin/reglookup.js'), 'serve'], {
    env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', DATABASE_URL: `sqlite:${dir}/s.db`, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const t = setInterval(() => {
      const m = /(http:\/\/127\.0\.0\.1:\d+)\/api\/reg\.asmx/.exec(out);
      if (m || child.exitCode !== null) clearInterval(t);
      if (m) resolve(m[1]);
      else if (child.exitCode !== null) reject(new Error(out));
    }, 50);
  });
  const stop = async () => {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { url, stop };
}

const lookup = async (base: string, op: string, reg: string) => {
  const res = await fetch(`${base}/api/reg.asmx/${op}?RegistrationNumber=${encodeURIComponent(reg)}&username=me`);
  return { status: res.status, body: await res.text() };
};
const soap11 = async (base: string, op: string, reg: string) => {
  const body = `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><${op} xmlns="http://regcheck.org.uk"><RegistrationNumber>${reg}</RegistrationNumber><username>me</username></${op}></soap:Body></soap:Envelope>`;
  const res = await fetch(`${base}/api/reg.asmx`, {
    method: 'POST',
    headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"http://regcheck.org.uk/${op}"` },
    body,
  });
  return { status: res.status, body: await res.text() };
};
const tag = (xml: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1] ?? '(none)';

async function regcheckClaims(rcUrl: string): Promise<void> {
  const g = await gateway({ PROVIDERS: 'regcheck', REGCHECK_URL: rcUrl, REGCHECK_USERNAME: RC_USER });
  try {
    for (const [op, reg] of [
      ['Check', 'AB11BMW'],
      ['Check', 'CL14RNO'],
      ['Check', 'BL64JTZ'],
      ['CheckIreland', '04MH8917'],
      ['UKMOT', 'CL14RNO'],
    ]) {
      const [get, soap] = await Promise.all([lookup(g.url, op, reg), soap11(g.url, op, reg)]);
      const what =
        op === 'UKMOT' ? `${(get.body.match(/<UKTest>/g) ?? []).length} tests` : tag(get.body, 'Description');
      console.log(`regcheck ${op} ${reg}: GET ${get.status}, SOAP 1.1 ${soap.status}: ${what}`);
    }
    const none = await lookup(g.url, 'Check', 'ZZ99ZZZ');
    console.log(`regcheck Check ZZ99ZZZ ("UK Lookup failed"): ${none.status} ${none.body.split(':')[0]}`);
  } finally {
    await g.stop();
  }
}

async function ukClaims(dvlaUrl: string, dvsaUrl: string): Promise<void> {
  const env = {
    DVLA_URL: dvlaUrl,
    DVLA_API_KEY: KEY,
    DVSA_URL: dvsaUrl,
    DVSA_TOKEN_URL: `${dvsaUrl}/token`,
    DVSA_CLIENT_ID: DVSA.id,
    DVSA_CLIENT_SECRET: DVSA.secret,
    DVSA_API_KEY: DVSA.key,
  };
  const g = await gateway({ PROVIDERS: 'store,dvla,dvsa', ...env });
  try {
    const a = await lookup(g.url, 'Check', 'AA19AAA');
    console.log(
      `dvla+dvsa Check AA19AAA: ${a.status}, Description ${tag(a.body, 'Description')}, CarModel ${tag(a.body, 'CarModel')}`,
    );
    for (let i = 0; i < 20; i++) dvsaVehicles[`UK${String(i).padStart(2, '0')}MOT`] = { ...AE13SJX_PORSCHE_911 };
    quota.tokens = 10;
    quota.refused = 0;
    const t0 = performance.now();
    const all = await Promise.all(
      Array.from({ length: 20 }, (_, i) => lookup(g.url, 'UKMOT', `UK${String(i).padStart(2, '0')}MOT`)),
    );
    const ms = Math.round(performance.now() - t0);
    const by = all.reduce<Record<number, number>>((m, r) => ((m[r.status] = (m[r.status] ?? 0) + 1), m), {});
    console.log(
      `20 concurrent UKMOT, distinct plates: ${JSON.stringify(by)} in ${ms} ms; the DVSA refused ${quota.refused} (429)`,
    );
  } finally {
    await g.stop();
  }
}

async function breakerClaim(dvlaUrl: string): Promise<void> {
  const g = await gateway({ PROVIDERS: 'dvla', DVLA_URL: dvlaUrl, DVLA_API_KEY: KEY, UPSTREAM_BREAKER_FAILURES: '5' });
  dvlaState.down = true;
  try {
    for (let i = 1; i <= 8; i++) {
      const before = dvlaState.calls;
      const r = await lookup(g.url, 'Check', `BRK${i}AAA`);
      const ready = (await (await fetch(`${g.url}/readyz`)).json()) as { checks: Record<string, string> };
      const state = ready.checks['upstream:dvla'];
      console.log(
        `breaker: failed lookup ${i}: ${r.status}, ${dvlaState.calls - before} DVLA call(s), upstream:dvla ${state}`,
      );
      if (state !== 'ok') break;
    }
  } finally {
    dvlaState.down = false;
    await g.stop();
  }
}

async function main(): Promise<void> {
  const [rcUp, dvlaUp, dvsaUp] = await Promise.all([listen(regcheck), listen(dvla), listen(dvsa)]);
  try {
    await regcheckClaims(rcUp.url);
    await ukClaims(dvlaUp.url, dvsaUp.url);
    await breakerClaim(dvlaUp.url);
  } finally {
    await Promise.all([rcUp.close(), dvlaUp.close(), dvsaUp.close()]);
  }
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
