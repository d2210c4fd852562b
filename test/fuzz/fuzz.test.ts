// Property-based fuzzing (fast-check) of mutated valid requests against the running server, over
// SOAP 1.1 and 1.2, GET and POST: every answer is a result, a proper fault or a 4xx of the error
// table; never a crash, a hang, a 5xx other than a SOAP fault, or a leak; the heap stays bounded.
// `npm run fuzz` runs the same properties for as long as asked (test/fuzz/run.ts).
//
// FUZZ_RUNS scales the case counts here (default 1); FUZZ_SEED replays a reported failure.

import fc from 'fast-check';
import { startServer, type TestServer } from '../helpers/server';
import { describeRequest, envelopeTextArb, httpRequestArb, soapRequestArb } from './cases';
import { FuzzClient, judge } from './judge';
import { heapAfterGc } from './heap';
import { nodeSoapReader } from './parser-oracle';

const SCALE = Number(process.env.FUZZ_RUNS ?? 1);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const params = (numRuns: number): fc.Parameters<unknown> => ({
  numRuns: Math.max(1, Math.round(numRuns * SCALE)),
  seed: SEED,
  endOnFailure: false,
  verbose: 1,
});

let server: TestServer;
let client: FuzzClient;
let heapBefore = 0;
beforeAll(async () => {
  server = await startServer();
  client = new FuzzClient(server.port);
  // Warm up (WSDL, prepared statements, JIT) before the heap baseline.
  for (let i = 0; i < 50; i++)
    await fetch(`${server.url}/api/reg.asmx/Check?RegistrationNumber=RG11+ABC&username=demo`).then((r) => r.text());
  heapBefore = heapAfterGc();
});
afterAll(async () => {
  client.close();
  await server.close();
});

/** Answers by transport and outcome: the generators must keep reaching the service, not only the parsers. */
const outcomes = new Map<string, number>();

async function property(r: Parameters<typeof judge>[0]): Promise<void> {
  const answer = await client.send(r);
  const key = `${r.transport.startsWith('soap') ? 'soap' : 'http'} ${answer.status === 200 ? 'result' : 'error'}`;
  outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
  const why = await judge(r, answer);
  if (why) throw new Error(`${why}\n  request: ${describeRequest(r)}`);
}

test('SOAP envelopes, mutated: a result, a proper fault or a 4xx, and nothing leaked', async () => {
  await fc.assert(fc.asyncProperty(soapRequestArb, property), params(5000));
}, 120_000);

test('query strings and form bodies, mutated: a result or a 4xx of the error table, and nothing leaked', async () => {
  await fc.assert(fc.asyncProperty(httpRequestArb, property), params(5000));
}, 120_000);

test('the mutated requests still reached the lookups: some were answered with a result, most refused', () => {
  for (const t of ['soap', 'http']) {
    const ok = outcomes.get(`${t} result`) ?? 0;
    const refused = outcomes.get(`${t} error`) ?? 0;
    expect(ok).toBeGreaterThan(0.03 * (ok + refused));
    expect(refused).toBeGreaterThan(0.5 * (ok + refused));
  }
});

test('after the fuzzing the server still answers, and its heap has not grown without bound', async () => {
  const res = await fetch(`${server.url}/api/reg.asmx/Check?RegistrationNumber=RG11+ABC&username=demo`);
  expect(res.status).toBe(200);
  await res.text();
  const grown = heapAfterGc() - heapBefore;
  expect(grown).toBeLessThan(64 * 1024 * 1024);
});

test('whatever the XML guard lets through, node-soap reads without error (so no fault of its own reaches a caller)', async () => {
  const read = await nodeSoapReader();
  fc.assert(
    fc.property(envelopeTextArb, (xml) => {
      const why = read(xml);
      if (why) throw new Error(why);
    }),
    params(20_000),
  );
});
