// npm run bench:metrics: what counting one request costs, measured apart from the noise of a
// shared machine: the finish listener's metrics work (src/ops/metrics.ts request()) and the timed
// store read (a promise settled through one more then), each against the same loop without it,
// interleaved over several rounds. Compare the ns it prints with the main bench's "CPU us/request".

import { timedReads } from '../src/app';
import { metrics } from '../src/ops/metrics';
import type { VehicleStore } from '../src/store/store';

const N = 1_000_000;
const ROUNDS = 5;
const TRANSPORTS = ['get', 'post', 'soap11', 'soap12'];
const OUTCOMES = ['ok', 'ok', 'ok', 'VEHICLE_NOT_FOUND', 'RATE_LIMITED'];
const m = metrics();

function loop(count: boolean): number {
  const t = process.hrtime.bigint();
  let x = 0;
  for (let i = 0; i < N; i++) {
    const tr = TRANSPORTS[i & 3];
    const out = OUTCOMES[i % 5];
    const s = (i % 1000) / 1e6;
    if (count) m.request(tr, 'Check', out, s);
    else x += tr.length + out.length + s;
  }
  if (x < 0) console.log(x);
  return Number(process.hrtime.bigint() - t) / N;
}

const found = { payload: '{}' };
const plain = { get: () => Promise.resolve(found) } as unknown as VehicleStore;
// The wrapper createService puts around the store when METRICS is on.
const timed = timedReads(plain, m);
const key = { operation: 'Check', registration: 'AB12CDE', state: '' };

async function reads(withTiming: boolean): Promise<number> {
  const store = withTiming ? timed : plain;
  const t = process.hrtime.bigint();
  for (let i = 0; i < N / 10; i++) await store.get(key);
  return Number(process.hrtime.bigint() - t) / (N / 10);
}

async function main(): Promise<void> {
  const with_: number[] = [];
  const without: number[] = [];
  const rWith: number[] = [];
  const rWithout: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    without.push(loop(false));
    with_.push(loop(true));
    rWithout.push(await reads(false));
    rWith.push(await reads(true));
  }
  const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
  const counting = med(with_) - med(without);
  const reading = med(rWith) - med(rWithout);
  console.log(
    `request(): ${counting.toFixed(0)} ns per request (loop ${med(with_).toFixed(0)} vs ${med(without).toFixed(0)} ns)`,
  );
  console.log(
    `timed store read: ${reading.toFixed(0)} ns per lookup (${med(rWith).toFixed(0)} vs ${med(rWithout).toFixed(0)} ns)`,
  );
  console.log(`together: ${(counting + reading).toFixed(0)} ns per lookup request`);
}

void main();
