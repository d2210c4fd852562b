// Claims of the README's Errors and Security sections that no other test held: each expectation is
// read from the README's own words, so the test and the README cannot drift apart silently.

import net from 'node:net';
import zlib from 'node:zlib';
import { call, TRANSPORTS } from '../helpers/call';
import { claim, documentedError, readmeSection } from '../helpers/readme';
import { startServer, type TestServer } from '../helpers/server';

let srv: TestServer;
let quick: TestServer;
let small: TestServer;
beforeAll(async () => {
  srv = await startServer();
  quick = await startServer({ REQUEST_TIMEOUT_MS: '1000' });
  small = await startServer({ MAX_BODY_BYTES: '1024' });
});
afterAll(async () => {
  await Promise.all([srv, quick, small].map((s) => s.close()));
});

const security = readmeSection('Security');

/** Writes raw bytes on a new connection; resolves with everything read until the server closes it (or `ms` pass). */
function rawExchange(
  port: number,
  bytes: Buffer | string,
  ms = 20_000,
): Promise<{ text: string; closed: boolean; elapsed: number; error?: string }> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const sock = net.connect(port, '127.0.0.1', () => sock.write(bytes));
    let text = '';
    let error: string | undefined;
    const timer = setTimeout(() => {
      sock.destroy();
      resolve({ text, closed: false, elapsed: Date.now() - t0, error });
    }, ms);
    sock.on('data', (d) => (text += d.toString('latin1')));
    sock.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    sock.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true, elapsed: Date.now() - t0, error });
    });
  });
}

describe('X-Request-Id', () => {
  // README: "Every answer carries an X-Request-Id (yours, if you sent a sane one)".
  test.each(TRANSPORTS)('a sane one sent is the one answered, for a result and an error (%s)', async (t) => {
    claim(/Every answer carries an `X-Request-Id` \(yours, if you sent a sane one\)/);
    for (const params of [
      { RegistrationNumber: 'RG11ABC', username: 'demo' },
      { RegistrationNumber: 'ZZ99ZZZ', username: 'demo' },
    ]) {
      const id = `trace-${t}.${params.RegistrationNumber}_1`;
      const res = await fetchWithId(t, params, id);
      expect(res.headers.get('x-request-id')).toBe(id);
    }
  });

  test('one that is not sane is replaced, and each answer gets its own', async () => {
    const bad = await fetch(`${srv.url}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=demo`, {
      headers: { 'X-Request-Id': 'x'.repeat(300) },
    });
    const id = bad.headers.get('x-request-id');
    expect(id).toMatch(/^[A-Za-z0-9._-]{8,64}$/);
    const other = await fetch(`${srv.url}/healthz`);
    expect(other.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._-]{8,64}$/);
    expect(other.headers.get('x-request-id')).not.toBe(id);
  });

  async function fetchWithId(
    t: (typeof TRANSPORTS)[number],
    params: Record<string, string>,
    id: string,
  ): Promise<Response> {
    const qs = new URLSearchParams(params).toString();
    if (t === 'get') return fetch(`${srv.url}/api/reg.asmx/Check?${qs}`, { headers: { 'X-Request-Id': id } });
    if (t === 'post')
      return fetch(`${srv.url}/api/reg.asmx/Check`, {
        method: 'POST',
        headers: { 'X-Request-Id': id, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: qs,
      });
    const v = t === 'soap11' ? '1.1' : '1.2';
    const { envelope, soapHeaders } = await import('../helpers/soap');
    return fetch(`${srv.url}/api/reg.asmx`, {
      method: 'POST',
      headers: { ...soapHeaders(v, 'Check'), 'X-Request-Id': id },
      body: envelope(v, 'Check', params),
    });
  }
});

describe('fixed limits', () => {
  test("a query string or form body holds at most the README's number of parameters", async () => {
    const [, max, codeName] = claim(
      /a query string or form body holds at most (\d+) parameters \(`([A-Z_]+)`\)/,
      security,
    );
    const n = Number(max);
    const err = documentedError(codeName);
    const params = (count: number) => {
      const p: Record<string, string> = { RegistrationNumber: 'RG11ABC', username: 'demo' };
      for (let i = 2; i < count; i++) p[`extra${i}`] = 'x';
      return p;
    };
    for (const t of ['get', 'post'] as const) {
      expect((await call(srv.url, t, 'Check', params(n))).status).toBe(200);
      const over = await call(srv.url, t, 'Check', params(n + 1));
      expect([over.status, over.headers.get('x-error-code')]).toEqual([err.status, codeName]);
    }
  });

  test("a parameter value and a registration are held to the README's lengths", async () => {
    const [, value, registration, codeName] = claim(
      /a parameter value is at most (\d+) characters and a registration at most (\d+) \(`([A-Z_]+)`\)/,
      security,
    );
    const err = documentedError(codeName);
    for (const t of TRANSPORTS) {
      const v = Number(value);
      const r = Number(registration);
      // At the limit the value is taken (a registration that long is simply not found); one more is refused.
      expect((await call(srv.url, t, 'Check', { RegistrationNumber: 'RG11ABC', username: 'u'.repeat(v) })).status).toBe(
        200,
      );
      const longUser = await call(srv.url, t, 'Check', { RegistrationNumber: 'RG11ABC', username: 'u'.repeat(v + 1) });
      expect([t, longUser.status, longUser.body.includes(codeName)]).toEqual([
        t,
        t.startsWith('soap') ? err.soapStatus : err.status,
        true,
      ]);
      const atReg = await call(srv.url, t, 'Check', { RegistrationNumber: 'A'.repeat(r), username: 'demo' });
      expect([t, atReg.body.includes('VEHICLE_NOT_FOUND')]).toEqual([t, true]);
      const longReg = await call(srv.url, t, 'Check', { RegistrationNumber: 'A'.repeat(r + 1), username: 'demo' });
      expect([t, longReg.body.includes(codeName)]).toEqual([t, true]);
    }
  });

  test("a request head over the README's size is answered 431 by Node", async () => {
    const [, kib] = claim(
      /a request head \(request line and headers\) is at most (\d+) KiB \(`431` from Node itself\)/,
      security,
    );
    const limit = Number(kib) * 1024;
    const head = (size: number) => {
      const start =
        'GET /api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=demo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad: ';
      return start + 'a'.repeat(size - start.length - 4) + '\r\n\r\n';
    };
    const within = await rawExchange(srv.port, head(limit - 512));
    expect(within.text).toMatch(/^HTTP\/1\.1 200 /);
    const over = await rawExchange(srv.port, head(limit + 512));
    expect(over.text).toMatch(/^HTTP\/1\.1 431 /);
  });
});

describe('bodies', () => {
  test('an unsupported Content-Encoding is 415; gzip and deflate are read', async () => {
    // README: UNSUPPORTED_MEDIA_TYPE is "a POST whose Content-Type or Content-Encoding that path does not take";
    // Limits: "after gzip/deflate decompression".
    claim(/bytes of one request body, after gzip\/deflate decompression/, security);
    const err = documentedError('UNSUPPORTED_MEDIA_TYPE');
    const form = 'RegistrationNumber=RG11ABC&username=demo';
    const post = (encoding: string, body: Buffer) =>
      fetch(`${srv.url}/api/reg.asmx/Check`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Encoding': encoding },
        body,
      });
    const br = await post('br', zlib.brotliCompressSync(form));
    expect([br.status, br.headers.get('x-error-code')]).toEqual([err.status, 'UNSUPPORTED_MEDIA_TYPE']);
    await br.text();
    for (const [enc, body] of [
      ['gzip', zlib.gzipSync(form)],
      ['deflate', zlib.deflateSync(form)],
    ] as const) {
      const ok = await post(enc, body);
      expect([enc, ok.status]).toEqual([enc, 200]);
      await ok.text();
    }
  });

  test('a body somewhat over the limit is drained and answered 413; one far over it has its connection closed', async () => {
    const [, kib] = claim(
      /A body refused as too large is still read, and dropped, for up to (\d+) KiB more or one second/,
      security,
    );
    const drain = Number(kib) * 1024;
    const err = documentedError('PAYLOAD_TOO_LARGE');
    // Within the drain, the whole body is taken while it is still arriving (in pieces, well within the
    // second), so the client finishes sending and reads its 413 instead of a reset connection.
    const within = await new Promise<{ text: string; error?: string }>((resolve) => {
      const body = Buffer.alloc(1024 + drain - 16 * 1024, 'a');
      const sock = net.connect(small.port, '127.0.0.1');
      let text = '';
      let error: string | undefined;
      sock.on('data', (d) => (text += d.toString('latin1')));
      sock.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
      sock.on('close', () => resolve({ text, error }));
      // eslint-disable-next-line @typescript-eslint/no-misused-promises -- it awaits only timers: nothing in it rejects
      sock.on('connect', async () => {
        sock.write(
          `POST /api/reg.asmx/Check HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
        );
        for (let i = 0; i < body.length && !sock.destroyed; i += 16 * 1024) {
          sock.write(body.subarray(i, i + 16 * 1024));
          await new Promise((r) => setTimeout(r, 10));
        }
      });
    });
    expect(within.error).toBeUndefined();
    expect(within.text).toMatch(new RegExp(`^HTTP/1\\.1 ${err.status} `));
    expect(within.text).toContain('PAYLOAD_TOO_LARGE');
    // Far past it, the server stops reading: the connection is closed while the client still has bytes to send.
    const sock = net.connect(small.port, '127.0.0.1');
    const size = 1024 + drain * 64;
    const closedEarly = await new Promise<boolean>((resolve) => {
      let sent = 0;
      sock.on('close', () => resolve(sent < size));
      sock.on('error', () => undefined);
      sock.on('connect', () => {
        sock.write(
          `POST /api/reg.asmx/Check HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${size}\r\n\r\n`,
        );
        const chunk = Buffer.alloc(64 * 1024, 'a');
        const pump = () => {
          while (sent < size && !sock.destroyed) {
            sent += chunk.length;
            if (!sock.write(chunk)) return void sock.once('drain', pump);
          }
        };
        pump();
      });
    });
    expect(closedEarly).toBe(true);
  });
});

describe('REQUEST_TIMEOUT_MS', () => {
  test('a connection that sends nothing is closed after REQUEST_TIMEOUT_MS, not before', async () => {
    claim(/a connection that sends nothing is closed after the same time/, security);
    const idle = await rawExchange(quick.port, Buffer.alloc(0));
    expect(idle.closed).toBe(true);
    expect(idle.elapsed).toBeGreaterThanOrEqual(quick.config.requestTimeoutMs - 50);
  });

  test('a request still arriving after REQUEST_TIMEOUT_MS gets 408 from Node, then the connection is closed', async () => {
    claim(/`408 Request Timeout` from Node itself \(no `X-Error-Code`\), then the connection is closed/, security);
    const slow = await rawExchange(
      quick.port,
      'POST /api/reg.asmx/Check HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nRegistration',
    );
    expect(slow.text).toMatch(/^HTTP\/1\.1 408 /);
    expect(slow.text.toLowerCase()).not.toContain('x-error-code');
    expect(slow.closed).toBe(true);
    expect(slow.elapsed).toBeGreaterThanOrEqual(quick.config.requestTimeoutMs - 50);
  });
});
