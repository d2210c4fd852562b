// The contract over HTTP, served from each store: every operation over SOAP 1.1, SOAP 1.2, GET and
// POST answers the bundled sample record; credits hold under concurrent lookups.

import { createHash } from 'node:crypto';
import { parseStringPromise } from 'xml2js';
import { OPERATIONS } from '../../src/contract/operations';
import { call, TRANSPORTS, type Transport } from '../helpers/call';
import { demo, demoParams } from '../helpers/sample';
import { startServer, type TestServer } from '../helpers/server';
import { describeStores } from '../helpers/stores';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const ukey = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

type X = Record<string, any>;

async function resultOf(transport: Transport, op: string, body: string): Promise<X> {
  const doc = await parseStringPromise(body, { explicitArray: false });
  if (transport === 'get' || transport === 'post') return doc[Object.keys(doc)[0]];
  const env = doc['soap:Envelope'];
  return env['soap:Body'][`${op}Response`][`${op}Result`];
}

describeStores('served from %s', (kind) => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startServer({ DATABASE_URL: kind.url() });
  });
  afterAll(() => srv.close());

  const cases = OPERATIONS.flatMap((op) => TRANSPORTS.map((t) => [op.name, t] as const));
  test.each(cases)('%s over %s answers the sample record', async (name, transport) => {
    const op = OPERATIONS.find((o) => o.name === name)!;
    const res = await call(srv.url, transport, name, demoParams(name, op.params));
    expect(res.status).toBe(200);
    const result = await resultOf(transport, name, res.body);
    const record = demo(name);
    // The sample record, and where it came from and as of when (docs/calling.md, "The age of an answer").
    if (op.result === 'Vehicle')
      expect(JSON.parse(result.vehicleJson)).toEqual({
        ...record.vehicle,
        AnswerSource: 'import',
        AnswerAsOf: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      });
    else expect(JSON.parse(result.Json)).toEqual((record.mot as X).tests);
  });

  test.each(TRANSPORTS)('a plate not in the store is VEHICLE_NOT_FOUND (%s)', async (t) => {
    const res = await call(srv.url, t, 'Check', { RegistrationNumber: 'ZZ99ZZZ', username: 'demo' });
    expect(res.status).toBe(t.startsWith('soap') ? 500 : 404);
    expect(res.body).toContain('VEHICLE_NOT_FOUND');
  });

  test('200 lookups at once by an account with 50 credits: exactly 50 answered, the rest OUT_OF_CREDIT', async () => {
    await srv.store.accounts.putAccount({ username: ukey('fifty'), credits: 50 });
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        call(srv.url, TRANSPORTS[i % 4], 'Check', { RegistrationNumber: 'RG11ABC', username: 'fifty' }),
      ),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(50);
    expect(answers.filter((a) => a.status !== 200 && a.body.includes('OUT_OF_CREDIT'))).toHaveLength(150);
    expect((await srv.store.accounts.getAccount(ukey('fifty')))?.credits).toBe(0);
  });
});
