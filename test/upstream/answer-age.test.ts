// The age of an upstream answer through the whole service, on every store (the upstream cache is kept
// in the store): PROVIDERS=dvla against a local DVLA stand-in (test/helpers/upstream-dvla.ts).
// docs/calling.md, "The age of an answer": a fresh answer names its upstream and is as of now, with
// no Age; the same plate asked again comes from the cache, as of its fetch, with an Age (RFC 9111:
// whole seconds since the fetch) that grows; SOAP says it in vehicleJson.

import { call, fetchAnswer } from '../helpers/call';
import { startServer, type TestServer } from '../helpers/server';
import { describeStores } from '../helpers/stores';
import { DVLA_TEST_KEY, startFakeDvla, type FakeDvla } from '../helpers/upstream-dvla';

jest.setTimeout(60_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
const vehicleJson = (xml: string) =>
  JSON.parse(unescape(/<vehicleJson>([^<]*)<\/vehicleJson>/.exec(xml)?.[1] ?? 'null')) as Record<string, unknown>;

describeStores('%s store: an upstream answer says its age', (kind) => {
  let dvla: FakeDvla;
  let svc: TestServer;
  beforeAll(async () => {
    dvla = await startFakeDvla({ retryAfterS: 0 });
    svc = await startServer(
      {
        DATABASE_URL: kind.url(),
        PROVIDERS: 'store,dvla',
        DVLA_URL: dvla.url,
        DVLA_API_KEY: DVLA_TEST_KEY,
        UPSTREAM_TIMEOUT_MS: '1500',
      },
      { sample: false },
    );
  });
  afterAll(async () => {
    await svc.close();
    await dvla.close();
  });

  test('fresh: the upstream and now, no Age; again: the cache, as of the fetch, with an Age that grows', async () => {
    const params = { RegistrationNumber: 'AA19AAA', username: 'tester' };
    const before = Date.now();
    const fresh = await call(svc.url, 'get', 'Check', params);
    const after = Date.now();
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('age')).toBeNull();
    const fetched = Date.parse(fresh.headers.get('last-modified') ?? '');
    expect(fetched).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(fetched).toBeLessThanOrEqual(after);
    const first = vehicleJson(fresh.body);
    expect(first.AnswerSource).toBe('dvla');
    expect(Date.parse(first.AnswerAsOf as string)).toBe(fetched);

    await sleep(1100);
    const cached = await call(svc.url, 'get', 'Check', params);
    expect(vehicleJson(cached.body)).toEqual({ ...first, AnswerSource: 'cache' });
    expect(cached.headers.get('last-modified')).toBe(fresh.headers.get('last-modified'));
    const age1 = Number(cached.headers.get('age'));
    expect(age1).toBeGreaterThanOrEqual(1);

    await sleep(1100);
    const json = await fetchAnswer(svc.url, '/api/json.aspx/Check/AA19AAA?username=tester');
    expect(json.headers.get('last-modified')).toBe(fresh.headers.get('last-modified'));
    expect(Number(json.headers.get('age'))).toBeGreaterThan(age1);
    expect(JSON.parse(json.body)).toMatchObject({ AnswerSource: 'cache', AnswerAsOf: first.AnswerAsOf });

    // SOAP: the same in vehicleJson, and no HTTP header of it.
    const soap = await call(svc.url, 'soap11', 'Check', params);
    expect(vehicleJson(soap.body)).toMatchObject({ AnswerSource: 'cache', AnswerAsOf: first.AnswerAsOf });
    expect(soap.headers.get('age')).toBeNull();
    // One fetch in all: the rest came from the cache.
    expect(dvla.calls.get('AA19AAA')).toBe(1);
  });
});
