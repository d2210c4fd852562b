// The admin gate's slowing of failures (issue 45, point 3), on a clock the test moves: guesses sent
// in parallel are answered no faster than guesses sent one after another; failures from other
// addresses, however many, neither reset an address being slowed nor go unslowed themselves.
// The serial schedule is the documented one (docs/security.md): 5 free, then 0.25 s doubling to 10 s.

import { FailureGate } from '../../src/admin/gate';

const T0 = 1_000_000_000;

/**
 * When the k-th (from 1) slowed refusal of a serial guesser is answered, ms after the first: 0.25 s doubling
 * to 10 s.
 */
function serialAnswerAt(k: number): number {
  let at = 0;
  for (let i = 1; i <= k; i++) at += Math.min(10_000, 250 * 2 ** (i - 1));
  return at;
}

test('100 parallel guesses after five failures are each answered no sooner than serial guesses would be', () => {
  const gate = new FailureGate();
  for (let i = 0; i < 5; i++) expect(gate.failed('192.0.2.1', T0).waitMs).toBe(0);
  const waits = Array.from({ length: 100 }, () => gate.failed('192.0.2.1', T0).waitMs);
  waits.forEach((w, i) => expect(w).toBeGreaterThanOrEqual(serialAnswerAt(i + 1)));
  // The 100th: 0.25+0.5+1+2+4+8 s, then 94 at 10 s.
  expect(waits[99]).toBeGreaterThanOrEqual(15_750 + 940_000);
});

test('a serial guesser waits as before: 0.25 s, 0.5 s, 1 s after each answer', () => {
  const gate = new FailureGate();
  let now = T0;
  for (let i = 0; i < 5; i++) gate.failed('192.0.2.1', now);
  for (const expected of [250, 500, 1000, 2000]) {
    const hold = gate.failed('192.0.2.1', now);
    expect(hold.waitMs).toBe(expected);
    hold.release();
    now += hold.waitMs;
  }
});

test('10,000 failures from other addresses do not reset an address being slowed', () => {
  // The global spacing out of the way: what is tested is the table of addresses alone.
  const gate = new FailureGate({ globalBurst: 1e9 });
  for (let i = 0; i < 6; i++) gate.failed('192.0.2.1', T0).release();
  for (let i = 0; i < 10_000; i++) gate.failed(`10.0.${i >> 8}.${i & 255}`, T0 + 20_000).release();
  // Its 7th failure: held the 0.5 s its own schedule says, not one of 5 free ones again.
  expect(gate.failed('192.0.2.1', T0 + 20_000).waitMs).toBe(500);
});

test('failures from many addresses, one each, are spaced once a burst of them is spent', () => {
  const gate = new FailureGate();
  const waits = Array.from({ length: 10_000 }, (_, i) => gate.failed(`10.1.${i >> 8}.${i & 255}`, T0).waitMs);
  expect(waits.slice(0, 100).every((w) => w === 0)).toBe(true);
  expect(waits[100]).toBeGreaterThan(0);
  // 9,900 failures at 10 a second: the last answered after about 990 s.
  expect(waits[9_999]).toBeGreaterThanOrEqual(989_000);
});

test('a flood holding too many refusals is refused before its token is looked at; other addresses are not', () => {
  const gate = new FailureGate();
  for (let i = 0; i < 205; i++) gate.failed('192.0.2.1', T0);
  expect(gate.busy('192.0.2.1', T0)).toBeGreaterThan(0);
  expect(gate.busy('192.0.2.2', T0)).toBe(0);
  // Answered refusals free their places.
  const gate2 = new FailureGate();
  for (let i = 0; i < 5; i++) gate2.failed('192.0.2.1', T0);
  const holds = Array.from({ length: 200 }, () => gate2.failed('192.0.2.1', T0));
  expect(gate2.busy('192.0.2.1', T0)).toBeGreaterThan(0);
  for (const h of holds) h.release();
  expect(gate2.busy('192.0.2.1', T0)).toBe(0);
});

test('a good token forgets the address: its next failure is free again', () => {
  const gate = new FailureGate();
  for (let i = 0; i < 7; i++) gate.failed('192.0.2.1', T0).release();
  gate.succeeded('192.0.2.1');
  expect(gate.failed('192.0.2.1', T0 + 60_000).waitMs).toBe(0);
});
