// The XML guard's cost per request: scanEnvelope over the README's SOAP 1.1 and 1.2 Check envelopes
// and a larger one (a header block and 40 elements), in rounds that alternate between two builds of
// the guard, so that both meet the same machine state. Usage:
//   node -r ts-node/register/transpile-only bench/guard.ts [OTHER_XMLGUARD.ts]
// With no argument it times the working tree's guard alone.

import path from 'node:path';

type Scan = (
  xml: string,
  limits: { maxDepth: number; maxTextChars: number; maxElements: number; maxAttributes: number },
) => unknown;

const LIMITS = { maxDepth: 32, maxTextChars: 8192, maxElements: 1000, maxAttributes: 32 };
const SOAP11 =
  '<?xml version="1.0" encoding="utf-8"?>\n<soap:Envelope xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">\n  <soap:Body>\n    <Check xmlns="http://regcheck.org.uk">\n      <RegistrationNumber>RG11ABC</RegistrationNumber>\n      <username>demo</username>\n    </Check>\n  </soap:Body>\n</soap:Envelope>';
const SOAP12 = SOAP11.replace('http://schemas.xmlsoap.org/soap/envelope/', 'http://www.w3.org/2003/05/soap-envelope')
  .replace(/soap:/g, 'soap12:')
  .replace('xmlns:soap=', 'xmlns:soap12=');
const LARGE = SOAP11.replace(
  '<soap:Body>',
  `<soap:Header><Auth xmlns="urn:x" soap:mustUnderstand="0"><User>a &amp; b</User></Auth></soap:Header><soap:Body>${'<!-- pad -->'.repeat(4)}`,
).replace(
  '<username>demo</username>',
  '<username>demo</username>' + '<x:Extra xmlns:x="urn:y" a="1" b="2">text &lt; more</x:Extra>'.repeat(40),
);
const BODIES = [SOAP11, SOAP12, LARGE];

function load(file: string): Scan {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require(path.resolve(file)) as { scanEnvelope: Scan }).scanEnvelope;
}

function time(scan: Scan, n: number): number {
  const t0 = process.hrtime.bigint();
  for (let k = 0; k < n; k++) scan(BODIES[k % BODIES.length], LIMITS);
  return Number(process.hrtime.bigint() - t0) / n / 1000;
}

const here = load(path.resolve(__dirname, '../src/transport/xmlguard.ts'));
const otherFile = process.argv[2];
const other = otherFile ? load(otherFile) : null;
const N = 60_000;
const rounds: { here: number; other: number | null }[] = [];
time(here, N);
if (other) time(other, N);
for (let r = 0; r < 7; r++)
  rounds.push(
    r % 2 === 0
      ? { here: time(here, N), other: other ? time(other, N) : null }
      : { other: other ? time(other, N) : null, here: time(here, N) },
  );
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const h = median(rounds.map((r) => r.here));
console.log(`working tree: ${h.toFixed(2)} us per body (median of ${rounds.length} rounds of ${N})`);
if (other) {
  const o = median(rounds.map((r) => r.other as number));
  console.log(`${otherFile}: ${o.toFixed(2)} us per body; ratio working tree / other = ${(h / o).toFixed(3)}`);
}
