// The admin listener's limits (issue 45, point 3): a body over 64 KiB (docs/security.md) answers 413
// with a one-line message and a log line, not a closed connection; a client that sends its headers
// or its body slowly is cut off like on the public port (REQUEST_TIMEOUT_MS). /favicon.ico, which
// browsers ask for without the token, is 204 and no failed login.

import net from 'node:net';
import type { Logger } from '../../src/ops/logger';
import { openStore } from '../../src/store/open';
import type { VehicleStore } from '../../src/store/store';
import { client, startAdmin, TOKENS, type TestAdmin } from '../helpers/admin';

let store: VehicleStore;
let admin: TestAdmin;
const logged: [string, Record<string, unknown>][] = [];
const logger = {
  info: (msg: string, meta: Record<string, unknown>) => logged.push([msg, meta]),
  warn: (msg: string, meta: Record<string, unknown>) => logged.push([msg, meta]),
  error: (msg: string, meta: Record<string, unknown>) => logged.push([msg, meta]),
} as unknown as Logger;

beforeAll(async () => {
  store = openStore('sqlite::memory:');
  admin = await startAdmin(store, { logger, requestTimeoutMs: 1000 });
});
afterAll(async () => {
  await admin.close();
  await store.close();
});

/** Sends `text` on a raw connection and resolves with what came back and when the server closed it. */
function raw(url: string, text: string, keepOpenMs = 10_000): Promise<{ reply: string; closedAfterMs: number }> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    const start = Date.now();
    const s = net.connect(Number(port), '127.0.0.1', () => s.write(text));
    let reply = '';
    s.on('data', (d) => (reply += d.toString('latin1')));
    const timer = setTimeout(() => s.destroy(), keepOpenMs);
    s.on('close', () => {
      clearTimeout(timer);
      resolve({ reply, closedAfterMs: Date.now() - start });
    });
    s.on('error', () => undefined);
  });
}

test('a 100 KiB body answers 413 with a one-line message, and is logged', async () => {
  logged.length = 0;
  const big = JSON.stringify({ username: 'x'.repeat(100 * 1024) });
  const r = await client(admin.url, TOKENS[0].token)('POST', '/admin/api/users', big);
  expect(r.status).toBe(413);
  expect(r.json).toEqual({ code: 'BODY_TOO_LARGE', message: expect.stringMatching(/^[^\n]*65536 bytes[^\n]*$/) });
  expect(logged.some(([msg, meta]) => /too large/.test(msg) && meta.limit === 65536)).toBe(true);
  expect(logged.some(([msg, meta]) => msg === 'admin request' && meta.status === 413)).toBe(true);
  // Sent in chunks, with no length declared: the same.
  const chunked = await fetch(`${admin.url}/admin/api/users`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKENS[0].token}`, 'Content-Type': 'application/json' },
    body: new Blob([big]).stream(),
    duplex: 'half',
  });
  expect(chunked.status).toBe(413);
  // Just within the limit is read (and refused by the schema, not the size).
  const within = JSON.stringify({ username: 'y'.repeat(65_536 - 20) });
  expect((await client(admin.url, TOKENS[0].token)('POST', '/admin/api/users', within)).status).toBe(400);
});

test('a client that sends its headers slowly is cut off', async () => {
  const r = await raw(admin.url, 'GET /admin/api/users HTTP/1.1\r\nHost: x\r\n');
  expect(r.closedAfterMs).toBeLessThan(5000);
  expect(r.reply).toMatch(/^HTTP\/1\.1 408/);
});

test('a client that sends its body slowly, with a good token, is cut off', async () => {
  const r = await raw(
    admin.url,
    `POST /admin/api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKENS[0].token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"user`,
  );
  expect(r.closedAfterMs).toBeLessThan(5000);
  expect(r.reply).toMatch(/^HTTP\/1\.1 408/);
});

test('/favicon.ico answers 204 without a token and is not counted as a failed attempt', async () => {
  const own = await startAdmin(store);
  try {
    for (let i = 0; i < 20; i++) {
      const r = await fetch(`${own.url}/favicon.ico`);
      expect(r.status).toBe(204);
      expect(await r.text()).toBe('');
    }
    // Were those 20 counted, this first wrong token would be held and say Retry-After.
    const wrong = await client(own.url, 'wrong-token-0123456789abcdef')('GET', '/admin/api/users');
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('retry-after')).toBeNull();
  } finally {
    await own.close();
  }
});
