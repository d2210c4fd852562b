// The requests docs/upstream.md and docs/upstream-rdw-dvsa.md give for each provider (their `http`
// blocks, issue 42, point 7) are the requests the providers send: each block's method, path and
// query, headers and body, with its placeholders filled in, is what a recording server receives
// from the provider through the service's own HTTP client. So an operator can check a stand-in or
// a proxy from the docs alone.

import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { upstreamHttp } from '../../src/providers/http';
import { DvlaProvider } from '../../src/providers/dvla';
import { createDvsaProvider } from '../../src/providers/dvsa';
import { createRdwProvider } from '../../src/providers/rdw';
import { RegcheckProvider } from '../../src/providers/regcheck';

interface DocRequest {
  readonly method: string;
  readonly target: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** Every ```http block of a docs page, parsed: request line, header lines, a blank line, the body. */
function docRequests(page: string): DocRequest[] {
  const text = fs.readFileSync(path.resolve(__dirname, '../../docs', page), 'utf8');
  return [...text.matchAll(/^```http\n([\s\S]*?)^```/gm)].map((m) => {
    const [head, body = ''] = m[1].split(/\n\n/);
    const [line, ...headerLines] = head.split('\n').filter((l) => l.trim() !== '');
    const [method, target] = line.split(' ');
    const headers = Object.fromEntries(
      headerLines.map((h) => [h.slice(0, h.indexOf(':')).toLowerCase(), h.slice(h.indexOf(':') + 1).trim()]),
    );
    return { method, target, headers, body: body.trim() };
  });
}

interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** A server recording each request and answering it from `answer` (path -> status and JSON). */
async function recorder(answer: (url: string) => [number, unknown]) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const [status, json] = answer(req.url ?? '');
      if (typeof json === 'string') res.writeHead(status, { 'content-type': 'text/plain' }).end(json);
      else res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** Headers any request of Node's fetch carries, which no provider chooses. */
const TRANSPORT = ['host', 'connection', 'content-length', 'user-agent', 'accept-encoding', 'accept-language'];
const TRANSPORT_ALSO = ['sec-fetch-mode'];

function expectSent(doc: DocRequest, got: Received, fill: (s: string) => string): void {
  expect(got.method).toBe(doc.method);
  expect(got.url).toBe(new URL(fill(doc.target)).pathname + new URL(fill(doc.target)).search);
  for (const [name, value] of Object.entries(doc.headers))
    expect([name, got.headers[name]]).toEqual([name, fill(value)]);
  // fetch sends `accept: */*` when the caller chose none.
  const chosen = Object.keys(got.headers).filter(
    (h) => ![...TRANSPORT, ...TRANSPORT_ALSO].includes(h) && !(h === 'accept' && got.headers[h] === '*/*'),
  );
  expect(chosen.sort()).toEqual(Object.keys(doc.headers).sort());
  const body = fill(doc.body);
  if (doc.headers['content-type'] === 'application/json') expect(JSON.parse(got.body)).toEqual(JSON.parse(body));
  else if (doc.headers['content-type'] === 'application/x-www-form-urlencoded')
    expect(Object.fromEntries(new URLSearchParams(got.body))).toEqual(Object.fromEntries(new URLSearchParams(body)));
  else expect(got.body).toBe(body);
}

const httpClient = upstreamHttp(1 << 20);
const ctx = () => ({ http: httpClient, signal: AbortSignal.timeout(5000) });

test('dvla: the documented POST, its x-api-key and its JSON body', async () => {
  const [doc] = docRequests('upstream.md').filter((d) => d.target.startsWith('{DVLA_URL}'));
  const up = await recorder(() => [404, { errors: [] }]);
  try {
    await new DvlaProvider({ url: up.url, apiKey: 'the-dvla-key' }).fetch('Check', 'AA19AAA', '', ctx());
    const fill = (s: string) => s.replace('{DVLA_URL}', up.url).replace('<DVLA_API_KEY>', 'the-dvla-key');
    expect(up.received).toHaveLength(1);
    expectSent(doc, up.received[0], fill);
  } finally {
    await up.close();
  }
});

test('regcheck: the documented lookup and credits requests', async () => {
  const [lookup, credits] = docRequests('upstream.md').filter((d) => d.target.startsWith('{REGCHECK_URL}'));
  const up = await recorder((url) => (url.startsWith('/ajax/') ? [200, '7'] : [404, 'VEHICLE_NOT_FOUND: none']));
  try {
    const p = new RegcheckProvider({ url: up.url, username: 'the-account' });
    await p.fetch('Check', 'AB12CDE', '', ctx());
    await p.remaining(ctx());
    const fill = (s: string) =>
      s
        .replace('{REGCHECK_URL}', up.url)
        .replace('{Operation}', 'Check')
        .replace('<REGCHECK_USERNAME>', 'the-account')
        .replace(/\[[^\]]*\]/, '');
    expectSent(lookup, up.received[0], fill);
    expectSent(credits, up.received[1], fill);
  } finally {
    await up.close();
  }
});

test('dvsa: the documented token request, then the MOT request with its token and key', async () => {
  const [token, mot] = docRequests('upstream-rdw-dvsa.md').filter((d) => d.target.includes('DVSA'));
  const up = await recorder((url) =>
    url === '/token' ? [200, { token_type: 'Bearer', expires_in: 3599, access_token: 'tok-1' }] : [404, {}],
  );
  const settings = {
    url: up.url,
    tokenUrl: `${up.url}/token`,
    clientId: 'the-client',
    clientSecret: 'the-secret',
    scope: 'https://tapi.dvsa.gov.uk/.default',
    apiKey: 'the-api-key',
  };
  const dvsa = createDvsaProvider(settings);
  try {
    await dvsa.fetch('UKMOT', 'AB12CDE', '', ctx());
    const fill = (s: string) =>
      s
        .replace('{DVSA_TOKEN_URL}', settings.tokenUrl)
        .replace('{DVSA_URL}', up.url)
        .replace('{registration}', 'AB12CDE')
        .replace('<DVSA_CLIENT_ID>', settings.clientId)
        .replace('<DVSA_CLIENT_SECRET>', settings.clientSecret)
        .replace('<DVSA_SCOPE>', settings.scope)
        .replace('<access_token>', 'tok-1')
        .replace('<DVSA_API_KEY>', settings.apiKey);
    expect(up.received).toHaveLength(2);
    expectSent(token, up.received[0], fill);
    expectSent(mot, up.received[1], fill);
  } finally {
    await dvsa.close();
    await up.close();
  }
});

test('rdw: the documented two requests, the app token in x-app-token', async () => {
  const docs = docRequests('upstream-rdw-dvsa.md').filter((d) => d.target.startsWith('{RDW_URL}'));
  const up = await recorder(() => [200, [{ kenteken: 'AB123C', merk: 'FORD' }]]);
  try {
    await createRdwProvider({ url: up.url, appToken: 'the-app-token' }).fetch('CheckNetherlands', 'AB123C', '', ctx());
    const fill = (s: string) => s.replace('{RDW_URL}', up.url).replace('<RDW_APP_TOKEN>', 'the-app-token');
    expect(up.received).toHaveLength(2);
    docs.forEach((doc, i) => expectSent(doc, up.received[i], fill));
  } finally {
    await up.close();
  }
});
