// What Node's HTTP parser answers itself (README, Limits): a control character in the request line
// or a header, or a non-ASCII byte in the request line or a header name, is 400 with an empty body
// and no X-Error-Code, and the connection is closed; the server keeps serving.

import { startServer, type TestServer } from '../helpers/server';
import { exchange } from './wire';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});

const CASES: Record<string, string> = {
  'a control character in a header value': 'GET /api/reg.asmx HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Note: a\x01b\r\n\r\n',
  'DEL in a header value': 'GET /api/reg.asmx HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Note: a\x7fb\r\n\r\n',
  'a control character in the request-target': 'GET /api/reg.asmx\x01 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n',
  'a non-ASCII byte in the request-target':
    'GET /api/reg.asmx/Check?RegistrationNumber=\xff HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n',
  'a non-ASCII byte in a header name': 'GET /api/reg.asmx HTTP/1.1\r\nHost: 127.0.0.1\r\nX-\xff: a\r\n\r\n',
};

test.each(Object.entries(CASES))('%s: 400 with an empty body from Node, connection closed', async (_what, request) => {
  const a = await exchange(server.port, [Buffer.from(request, 'latin1')], { timeoutMs: 8000 });
  expect(a.status).toBe(400);
  expect(a.body.length).toBe(0);
  expect(a.headers['x-error-code']).toBeUndefined();
  expect(a.ended).not.toBe('timeout');
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
});
