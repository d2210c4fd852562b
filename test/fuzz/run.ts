// npm run fuzz: the properties of test/fuzz/fuzz.test.ts for as long as asked, against a server in
// this process, printing progress, the answers seen, and the heap; on the first failure it prints
// the shrunk request and the seed to replay it, and exits 1.
//
//   FUZZ_SECONDS=600 npm run fuzz      run for ten minutes (default 60)
//   FUZZ_SEED=123 npm run fuzz         start from a given seed (each batch after it adds one)
//   FUZZ_BATCH=2000                    cases per property per batch (default 1000)
//   FUZZ_HEAP_MB=128                   fail if the heap after GC grows more than this (default 64)

import fc from 'fast-check';
import { startServer } from '../helpers/server';
import { describeRequest, envelopeTextArb, httpRequestArb, soapRequestArb, type FuzzRequest } from './cases';
import { heapAfterGc } from './heap';
import { FuzzClient, judge } from './judge';
import { nodeSoapReader } from './parser-oracle';

const SECONDS = Number(process.env.FUZZ_SECONDS ?? 60);
const BATCH = Number(process.env.FUZZ_BATCH ?? 1000);
const HEAP_MB = Number(process.env.FUZZ_HEAP_MB ?? 64);
let seed = process.env.FUZZ_SEED === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.FUZZ_SEED);

const seen = new Map<string, number>();
let lastRequest: FuzzRequest | null = null;

function tally(r: FuzzRequest, status: number, code: string | undefined): void {
  const key = `${r.transport.padEnd(6)} ${status} ${code ?? (status === 200 ? 'result' : '-')}`;
  seen.set(key, (seen.get(key) ?? 0) + 1);
}

async function main(): Promise<void> {
  process.on('uncaughtException', (e) => {
    process.stderr.write(
      `\nFAIL: the process crashed: ${String(e?.stack ?? e)}\n  last request: ${lastRequest ? describeRequest(lastRequest) : '(none)'}\n  seed: ${seed}\n`,
    );
    process.exit(1);
  });
  const server = await startServer();
  const client = new FuzzClient(server.port);
  const read = await nodeSoapReader();

  for (let i = 0; i < 50; i++)
    await fetch(`${server.url}/api/reg.asmx/Check?RegistrationNumber=RG11+ABC&username=demo`).then((r) => r.text());
  const heap0 = heapAfterGc();
  const t0 = Date.now();
  let cases = 0;
  let batches = 0;
  process.stdout.write(`fuzzing for ${SECONDS} s from seed ${seed}, ${BATCH} cases per property per batch\n`);

  const http = (arb: fc.Arbitrary<FuzzRequest>) =>
    fc.asyncProperty(arb, async (r) => {
      lastRequest = r;
      cases++;
      const a = await client.send(r);
      tally(r, a.status, a.headers['x-error-code'] ?? /<ErrorCode [^>]*>([A-Z_]+)</.exec(a.text)?.[1]);
      const why = await judge(r, a);
      if (why) throw new Error(why);
    });
  const guard = fc.property(envelopeTextArb, (xml) => {
    cases++;
    const why = read(xml);
    if (why) throw new Error(why);
  });

  while ((Date.now() - t0) / 1000 < SECONDS) {
    for (const [name, prop] of [
      ['SOAP', http(soapRequestArb)],
      ['GET/POST', http(httpRequestArb)],
    ] as const) {
      const out = await fc.check(prop, { numRuns: BATCH, seed });
      if (out.failed) {
        process.stderr.write(
          `\nFAIL (${name}, seed ${seed}, path ${out.counterexamplePath}):\n${fc.defaultReportMessage(out) ?? ''}\n`,
        );
        process.exit(1);
      }
    }
    const g = fc.check(guard, { numRuns: BATCH * 4, seed });
    if (g.failed) {
      process.stderr.write(`\nFAIL (XML guard vs node-soap, seed ${seed}):\n${fc.defaultReportMessage(g) ?? ''}\n`);
      process.exit(1);
    }
    batches++;
    seed++;
    const heapMb = (heapAfterGc() - heap0) / 1024 / 1024;
    const s = (Date.now() - t0) / 1000;
    process.stdout.write(
      `${s.toFixed(0).padStart(5)} s  batch ${batches}  ${cases} cases  ${Math.round(cases / s)}/s  heap ${heapMb >= 0 ? '+' : ''}${heapMb.toFixed(1)} MB\n`,
    );
    if (heapMb > HEAP_MB) {
      process.stderr.write(`FAIL: the heap grew by ${heapMb.toFixed(1)} MB (limit ${HEAP_MB} MB)\n`);
      process.exit(1);
    }
  }
  const res = await fetch(`${server.url}/api/reg.asmx/Check?RegistrationNumber=RG11+ABC&username=demo`);
  await res.text();
  client.close();
  await server.close();
  if (res.status !== 200) {
    process.stderr.write(`FAIL: after fuzzing, an honest lookup got ${res.status}\n`);
    process.exit(1);
  }
  process.stdout.write(
    `\nno failure in ${cases} cases (${batches} batches, seeds up to ${seed - 1}); answers seen over HTTP:\n`,
  );
  for (const [k, v] of [...seen].sort((a, b) => b[1] - a[1]))
    process.stdout.write(`  ${String(v).padStart(8)}  ${k}\n`);
}

main().catch((e) => {
  process.stderr.write(`fuzz run failed to start: ${String((e as Error)?.stack ?? e)}\n`);
  process.exit(1);
});
