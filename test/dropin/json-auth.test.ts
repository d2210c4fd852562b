// The JSON API's username as a new user gets it wrong (README, JSON API): Basic credentials that are
// not exactly one token of canonical base64 of UTF-8 text are 400 MALFORMED_REQUEST with
// {"code","message"}, never read as "no username" or quietly accepted, with or without ?username=;
// an empty ?username= counts as not given; the 401's challenge is the header the README shows.

import { startServer, type TestServer } from '../helpers/server';
import { exchange } from '../security/wire';
import { fetchAnswer } from '../helpers/call';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});

const PATH = '/api/json.aspx/Check/RG11ABC';
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

const get = (path: string, authorization?: string) =>
  fetchAnswer(server.url, path, authorization === undefined ? {} : { headers: { Authorization: authorization } });

function expectMalformed(status: number, type: string | null, body: string): void {
  expect([status, type]).toEqual([400, 'application/json; charset=utf-8']);
  const json = JSON.parse(body) as { code: string; message: string };
  expect(Object.keys(json).sort()).toEqual(['code', 'message']);
  expect(json.code).toBe('MALFORMED_REQUEST');
  expect(json.message).toMatch(/^The Basic credentials are not valid base64/);
  expect(json.message).not.toMatch(/[\r\n]/);
}

const MALFORMED = [
  'Basic !!!!',
  'Basic ZGVt bzo=', // a space inside the token
  'Basic a, Basic b', // two credentials
  `Basic ${b64('demo:')}${b64('demo:')}`, // something after the padding
  'Basic ZGVtbzo', // padding left out
  'Basic ZGVtbzp=', // not canonical: bits set after the last character's
  'Basic ZGVtbzo==', // too much padding
  `Basic ${Buffer.from([0x64, 0xff, 0x3a]).toString('base64')}`, // not UTF-8
];

describe('malformed Basic credentials are 400 MALFORMED_REQUEST', () => {
  test.each(MALFORMED)('%s', async (auth) => {
    for (const path of [PATH, `${PATH}?username=demo`]) {
      const a = await get(path, auth);
      expectMalformed(a.status, a.headers.get('content-type'), a.body);
    }
  });

  test('raw \\xff bytes as the credentials', async () => {
    const head = Buffer.concat([
      Buffer.from(`GET ${PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: Basic `, 'latin1'),
      Buffer.from([0xff, 0xff, 0xfe]),
      Buffer.from('\r\n\r\n'),
    ]);
    const a = await exchange(server.port, [head], { timeoutMs: 8000 });
    expect(a.ended).toBe('response');
    expectMalformed(a.status, a.headers['content-type'], a.text);
  });

  test('canonical credentials, in any case of the scheme name, are read', async () => {
    for (const auth of [`Basic ${b64('demo:')}`, `basic ${b64('demo:secret')}`, `BASIC ${b64('demo')}`]) {
      expect((await get(PATH, auth)).status).toBe(200);
    }
  });
});

test('an empty ?username= with Basic credentials counts as not given', async () => {
  for (const q of ['?username=', '?username=%20', '?USERNAME=']) {
    const a = await get(PATH + q, `Basic ${b64('demo:')}`);
    expect(a.status).toBe(200);
  }
});

test('no username is 401 with exactly the README challenge', async () => {
  const a = await get(PATH);
  expect(a.status).toBe(401);
  expect(a.headers.get('www-authenticate')).toBe('Basic realm="reglookup", charset="UTF-8"');
});

// README, Configuration: CORS_ORIGINS=https://app.example.com:443 is the origin a browser sends as
// https://app.example.com.
test('an origin given with its default port matches the Origin a browser sends', async () => {
  const cors = await startServer({ CORS_ORIGINS: 'https://app.example.com:443' });
  try {
    const res = await fetch(`${cors.url}${PATH}?username=demo`, { headers: { Origin: 'https://app.example.com' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
  } finally {
    await cors.close();
  }
});
