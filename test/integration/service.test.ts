// The service as a whole: the WSDL as served, the help page, mixed concurrent SOAP traffic and the
// bundled sample data. (`reglookup serve` started as `npm start` starts it: test/cli/cli.test.ts.)

import http from 'node:http';
import { OPERATIONS } from '../../src/contract/operations';
import { call, type Transport } from '../helpers/call';
import { SAMPLE } from '../helpers/sample';
import { startServer, type TestServer } from '../helpers/server';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(() => srv.close());

/** A GET with exactly the headers given (fetch will not send a Host header of our choosing). */
function get(url: string, headers: Record<string, string>): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
      })
      .on('error', reject);
  });
}

describe('the WSDL', () => {
  test.each(['?WSDL', '?wsdl', '?Wsdl', '?wsdl=1'])(
    "is served at /api/reg.asmx%s with the caller's host in every port",
    async (q) => {
      const res = await get(`${srv.url}/api/reg.asmx${q}`, { Host: 'lookup.example.com:8443' });
      expect(res.status).toBe(200);
      expect(res.type).toBe('text/xml; charset=utf-8');
      const text = res.body;
      expect(text.match(/location="http:\/\/lookup\.example\.com:8443\/api\/reg\.asmx"/g)).toHaveLength(4);
      expect(text).toContain('targetNamespace="http://regcheck.org.uk"');
    },
  );

  test('a hostile Host header does not reach the document', async () => {
    const text = (await get(`${srv.url}/api/reg.asmx?WSDL`, { Host: 'evil.com"><x' })).body;
    expect(text).not.toContain('evil.com');
    expect(text).toContain(`location="http://127.0.0.1:${srv.port}/api/reg.asmx"`);
  });

  test('PUBLIC_URL and SERVICE_NAMESPACE are honoured', async () => {
    const other = await startServer({ PUBLIC_URL: 'https://reg.example.org/', SERVICE_NAMESPACE: 'urn:example:reg' });
    try {
      const text = await (await fetch(`${other.url}/api/reg.asmx?wsdl`)).text();
      expect(text.match(/location="https:\/\/reg\.example\.org\/api\/reg\.asmx"/g)).toHaveLength(4);
      expect(text).toContain('soapAction="urn:example:reg/Check"');
      const res = await fetch(`${other.url}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=demo`);
      expect(await res.text()).toContain('xmlns="urn:example:reg"');
    } finally {
      await other.close();
    }
  });
});

test('the help page lists every operation of the catalogue', async () => {
  const res = await fetch(`${srv.url}/api/reg.asmx`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
  const page = await res.text();
  for (const op of OPERATIONS) expect(page).toContain(`<a href="?op=${op.name}">${op.name}</a>`);
});

test('concurrent mixed SOAP 1.1, SOAP 1.2, GET and POST traffic: each answer in its own version', async () => {
  const plan: Transport[] = Array.from(
    { length: 200 },
    (_, i) => (['soap11', 'soap12', 'get', 'post'] as const)[i % 4],
  );
  const answers = await Promise.all(
    plan.map((t, i) =>
      call(srv.url, t, i % 3 ? 'Check' : 'UKMOT', { RegistrationNumber: 'RG11ABC', username: `u${i}` }),
    ),
  );
  answers.forEach((res, i) => {
    expect(res.status).toBe(200);
    const t = plan[i];
    if (t === 'soap11') expect(res.body).toContain('xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"');
    if (t === 'soap12') expect(res.body).toContain('xmlns:soap="http://www.w3.org/2003/05/soap-envelope"');
    if (t === 'get' || t === 'post') expect(res.body).not.toContain('Envelope');
    expect(res.body).toContain(i % 3 ? '<vehicleJson>' : '<Tests>');
  });
});

test('the bundled sample holds at least 5 vehicles per operation and 3 MOT histories', () => {
  for (const op of OPERATIONS) {
    const n = SAMPLE.filter((r) => r.operation === op.name).length;
    expect(n).toBeGreaterThanOrEqual(op.name === 'UKMOT' ? 3 : 5);
  }
});

test('Expect: 100-continue with an oversized Content-Length gets its 413 without the body being invited', async () => {
  const net = await import('node:net');
  const answer = await new Promise<string>((resolve, reject) => {
    const sock = net.connect(srv.port, '127.0.0.1', () => {
      sock.write(
        'POST /api/reg.asmx HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml; charset=utf-8\r\nContent-Length: 5000000\r\nExpect: 100-continue\r\n\r\n',
      );
    });
    let got = '';
    sock.on('data', (d) => {
      got += d.toString();
      if (got.includes('</soap:Envelope>')) {
        sock.destroy();
        resolve(got);
      }
    });
    sock.on('error', reject);
    setTimeout(() => resolve(got), 3000);
  });
  expect(answer).not.toContain('100 Continue');
  expect(answer).toMatch(/^HTTP\/1\.1 413 /);
  expect(answer).toContain('PAYLOAD_TOO_LARGE');
});

test('Expect: 100-continue within the limit is invited, then answered', async () => {
  const net = await import('node:net');
  const body = 'RegistrationNumber=RG11ABC&username=demo';
  const answer = await new Promise<string>((resolve, reject) => {
    const sock = net.connect(srv.port, '127.0.0.1', () => {
      sock.write(
        `POST /api/reg.asmx/Check HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
      );
    });
    let got = '';
    let sent = false;
    sock.on('data', (d) => {
      got += d.toString();
      if (!sent && got.includes('100 Continue\r\n\r\n')) {
        sent = true;
        sock.write(body);
      }
      if (got.includes('</Vehicle>')) {
        sock.destroy();
        resolve(got);
      }
    });
    sock.on('error', reject);
    setTimeout(() => resolve(got), 3000);
  });
  expect(answer).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK/);
  expect(answer).toContain('<vehicleJson>');
});
