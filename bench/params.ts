// npm run bench:params: what matching HTTP GET/POST parameter names ignoring case costs per request.
// Parses the bench's own GET query string (bench/load.ts) with the name map an operation carries
// and without it (the parse before names matched ignoring case), in interleaved rounds, and prints
// each as a ratio to the plain parse measured in the same round. Asserts nothing about speed.

import { findOperation } from '../src/contract/operations';
import { parseForm } from '../src/transport/http';

const op = findOperation('CheckUSA');
if (!op) throw new Error('no CheckUSA');
const names = op.paramsIgnoringCase;
const CASES: ReadonlyArray<readonly [string, string, ReadonlyMap<string, string> | undefined]> = [
  ['plain parse (baseline)', 'RegistrationNumber=7ABC%20123&State=CA&username=bench', undefined],
  ['names in their own case', 'RegistrationNumber=7ABC%20123&State=CA&username=bench', names],
  ["PHP client's state=", 'RegistrationNumber=7ABC%20123&state=CA&username=bench', names],
  ['all names in other cases', 'REGISTRATIONNUMBER=7ABC%20123&state=CA&UserName=bench', names],
];
const N = 300_000;
const ROUNDS = 7;

function time(qs: string, map: ReadonlyMap<string, string> | undefined): number {
  let sink = 0;
  const t = process.hrtime.bigint();
  for (let i = 0; i < N; i++) sink += Object.keys(parseForm(qs, map)).length;
  const ns = Number(process.hrtime.bigint() - t);
  if (sink === 0) throw new Error('unreachable');
  return ns / N;
}

for (const [, qs, map] of CASES) time(qs, map); // warm-up
const ratios: number[][] = CASES.map(() => []);
const nsPer: number[][] = CASES.map(() => []);
for (let r = 0; r < ROUNDS; r++) {
  // Each round starts at another case, so that no case always runs first (or last) in its round.
  const ns: number[] = new Array<number>(CASES.length);
  for (let k = 0; k < CASES.length; k++) {
    const i = (r + k) % CASES.length;
    ns[i] = time(CASES[i][1], CASES[i][2]);
  }
  ns.forEach((v, i) => {
    nsPer[i].push(v);
    ratios[i].push(v / ns[0]);
  });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`parseForm, ${ROUNDS} interleaved rounds of ${N} parses, medians (Node ${process.version})`);
console.log('| case | ns/parse | ratio to the plain parse |');
console.log('|---|---|---|');
CASES.forEach(([label], i) =>
  console.log(`| ${label} | ${median(nsPer[i]).toFixed(0)} | ${median(ratios[i]).toFixed(3)} |`),
);
