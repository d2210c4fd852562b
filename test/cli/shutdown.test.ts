// Graceful shutdown, as an operator meets it: `reglookup serve` gets SIGTERM while 50 requests
// over the four transports are in flight (their bodies half sent), and every one of them is still
// answered, each answer closing its connection, and the process exits 0. The same with WORKERS=2.

import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { envelope, soapHeaders } from '../helpers/soap';
import { LISTENING, serveCli, type Running } from '../helpers/cli';

jest.setTimeout(90_000);

type Kind = 'soap11' | 'soap12' | 'get' | 'post';
const KINDS: readonly Kind[] = ['soap11', 'soap12', 'get', 'post'];

/** A request as bytes: its head (asking for 100-continue) and its body. */
function request(kind: Kind, i: number): { head: string; body: Buffer; expect: string } {
  const params = { RegistrationNumber: 'RG11ABC', username: `drain${i}` };
  let path: string;
  let headers: Record<string, string>;
  let body: string;
  if (kind === 'get') {
    // A GET with a body is read to its end before it is answered: the body holds it in flight.
    path = `/api/reg.asmx/Check?${new URLSearchParams(params).toString()}`;
    headers = { 'Content-Type': 'application/x-www-form-urlencoded' };
    body = 'padding=' + 'x'.repeat(40);
  } else if (kind === 'post') {
    path = '/api/reg.asmx/Check';
    headers = { 'Content-Type': 'application/x-www-form-urlencoded' };
    body = new URLSearchParams(params).toString();
  } else {
    path = '/api/reg.asmx';
    headers = soapHeaders(kind === 'soap11' ? '1.1' : '1.2', 'Check');
    body = envelope(kind === 'soap11' ? '1.1' : '1.2', 'Check', params);
  }
  const bytes = Buffer.from(body, 'utf8');
  const head =
    `${kind === 'get' ? 'GET' : 'POST'} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\nExpect: 100-continue\r\n` +
    Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('') +
    `Content-Length: ${bytes.length}\r\n\r\n`;
  return { head, body: bytes, expect: kind === 'soap11' || kind === 'soap12' ? '<CheckResult>' : '<vehicleJson>' };
}

interface Held {
  readonly sock: net.Socket;
  readonly rest: Buffer;
  readonly expect: string;
  /** Everything the server sent, once it closed the connection. */
  readonly answer: Promise<string>;
}

/**
 * Sends the head and the first half of the body, and resolves once the server has invited the rest (so it holds the
 * request).
 */
function hold(port: number, kind: Kind, i: number): Promise<Held> {
  const { head, body, expect } = request(kind, i);
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let got = '';
    let invited = false;
    const answer = new Promise<string>((done, fail) => {
      sock.on('end', () => done(got));
      sock.on('error', fail);
    });
    answer.catch(() => undefined);
    sock.on('data', (d: Buffer) => {
      got += d.toString('utf8');
      if (!invited && got.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) {
        invited = true;
        got = '';
        resolve({ sock, rest: body.subarray(Math.floor(body.length / 2)), expect, answer });
      }
    });
    sock.on('error', reject);
    sock.write(head);
    sock.write(body.subarray(0, Math.floor(body.length / 2)));
  });
}

/** A keep-alive connection that made one request and now sits idle. */
function idleKeepAlive(port: number): Promise<{ closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    const closed = new Promise<void>((done) => sock.on('close', () => done()));
    sock.on('error', () => undefined);
    sock.once('data', (d: Buffer) => {
      if (!/^HTTP\/1\.1 200/.test(d.toString()) || !/connection: keep-alive/i.test(d.toString()))
        reject(new Error(`unexpected answer ${d.toString()}`));
      else resolve({ closed });
    });
    sock.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n');
  });
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    sock.on('connect', () => {
      sock.destroy();
      resolve(false);
    });
    sock.on('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
  });
}

async function drainUnderLoad(
  env: Record<string, string>,
  workers: number,
): Promise<{ run: Running; refusedNew: boolean }> {
  const { run, port } = await serveCli({ SAMPLE_DATA: 'true', ...env });
  if (workers > 1) await run.waitFor(LISTENING, workers);
  const idle = await idleKeepAlive(port);
  const held = await Promise.all(Array.from({ length: 50 }, (_, i) => hold(port, KINDS[i % 4], i)));

  run.child.kill('SIGTERM');
  // Each serving process says so once it has begun to drain: only then are the bodies finished.
  await run.waitFor(/"message":"shutting down"/, workers);
  await idle.closed;
  const refusedNew = workers === 1 ? await refused(port) : true;
  for (const h of held) h.sock.write(h.rest);
  const answers = await Promise.all(held.map((h) => h.answer));
  answers.forEach((a, i) => {
    expect(a).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(a).toMatch(/\r\nConnection: close\r\n/i);
    expect(a).toContain(held[i].expect);
  });
  return { run, refusedNew };
}

test('SIGTERM with 50 requests in flight over the four transports: every one answered, idle keep-alive closed, new connections refused, exit 0', async () => {
  const { run, refusedNew } = await drainUnderLoad({}, 1);
  expect(refusedNew).toBe(true);
  expect(await run.exited).toBe(0);
});

test('WORKERS=2: SIGTERM to the primary drains both workers; every request in flight answered, exit 0', async () => {
  // A file the workers share (an in-memory store would be one per process, and the sample only in the primary's).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-drain-'));
  try {
    const { run } = await drainUnderLoad({ WORKERS: '2', DATABASE_URL: `sqlite:${path.join(dir, 'reg.db')}` }, 2);
    expect(await run.exited).toBe(0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
