// The sandbox registrations, one at a time, as the README's "Sandbox" table lists them: AA19AAA a
// fictional SANDBOX TESTCAR (for UKMOT a history with a failed test and a passed one with an
// advisory), each ER19 plate its error code and Retry-After, ER19SLO the AA19AAA answer after 5
// seconds; and the phrases the README's "Errors" section says callers match on.

import { findOperation } from '../../src/contract/operations';
import { LookupError } from '../../src/service/errors';
import { modelMatches, parseMot } from '../../src/service/records';
import {
  isSandboxPlate,
  SANDBOX_MOT,
  SANDBOX_SLOW_MS,
  SANDBOX_VEHICLE,
  sandboxPayload,
} from '../../src/service/sandbox';

const CHECK = findOperation('Check')!;
const USA = findOperation('CheckUSA')!;
const MOT = findOperation('UKMOT')!;

async function outcome(p: Promise<string>): Promise<{ code: string; message: string; retryAfter?: number } | string> {
  try {
    return await p;
  } catch (e) {
    if (!(e instanceof LookupError)) throw e;
    return { code: e.code, message: e.message, retryAfter: e.retryAfter };
  }
}

describe('the plates', () => {
  test('the nine registrations of the README table are sandbox plates; others, and spaced or lower-case forms before normalisation, are not', () => {
    for (const p of ['AA19AAA', 'ER19NFD', 'ER19BAD', 'ER19USR', 'ER19CRD', 'ER19THR', 'ER19ERR', 'ER19MNT', 'ER19SLO'])
      expect(isSandboxPlate(p)).toBe(true);
    for (const p of ['AA19AAB', 'ER19XXX', 'aa19aaa', 'AA19 AAA', '']) expect(isSandboxPlate(p)).toBe(false);
  });

  test.each([
    ['ER19NFD', 'VEHICLE_NOT_FOUND', undefined, /^No vehicle found/],
    ['ER19BAD', 'INVALID_PARAMETER', undefined, /ER19BAD/],
    ['ER19USR', 'UNKNOWN_USERNAME', undefined, /^Your username is incorrect/],
    ['ER19CRD', 'OUT_OF_CREDIT', undefined, /^Out of credit/],
    ['ER19THR', 'RATE_LIMITED', 30, /retry in 30 s/],
    ['ER19ERR', 'INTERNAL_ERROR', undefined, /^Internal error/],
    ['ER19MNT', 'SERVICE_UNAVAILABLE', 120, /retry in 120 s/],
  ])('%s: %s, Retry-After %s, on every operation', async (plate, code, retryAfter, message) => {
    for (const op of [CHECK, USA, MOT]) {
      const r = await outcome(sandboxPayload(op, plate, undefined));
      expect(r).toMatchObject({ code, retryAfter });
      expect((r as { message: string }).message).toMatch(message);
      expect((r as { message: string }).message).toContain(`(sandbox registration ${plate})`);
    }
  });
});

describe('AA19AAA', () => {
  test('every vehicle operation answers the fictional SANDBOX TESTCAR', async () => {
    for (const op of [CHECK, USA]) expect(await sandboxPayload(op, 'AA19AAA', undefined)).toBe(SANDBOX_VEHICLE);
    const v = JSON.parse(SANDBOX_VEHICLE);
    expect(`${v.CarMake.CurrentTextValue} ${v.CarModel.CurrentTextValue}`).toBe('SANDBOX TESTCAR');
  });

  test('UKMOT answers a history with a failed test and a passed test with an advisory', async () => {
    const text = await sandboxPayload(MOT, 'AA19AAA', undefined);
    expect(text).toBe(SANDBOX_MOT);
    const mot = JSON.parse(text);
    const results = mot.tests.map((t: { Result: string }) => t.Result).sort();
    expect(results).toEqual(['Fail', 'Pass']);
    const pass = mot.tests.find((t: { Result: string }) => t.Result === 'Pass');
    expect(pass.Advisories.length).toBeGreaterThan(0);
  });

  test("UKMOT's Model matches the history's make or model as a stored one does; another is VEHICLE_NOT_FOUND naming it", async () => {
    expect(modelMatches(parseMot(SANDBOX_MOT), 'sandbox')).toBe(true);
    expect(await sandboxPayload(MOT, 'AA19AAA', 'sandbox')).toBe(SANDBOX_MOT);
    expect(await sandboxPayload(MOT, 'AA19AAA', 'Test Car')).toBe(SANDBOX_MOT);
    expect(await sandboxPayload(MOT, 'AA19AAA', '')).toBe(SANDBOX_MOT);
    const r = await outcome(sandboxPayload(MOT, 'AA19AAA', 'FIESTA'));
    expect(r).toMatchObject({ code: 'VEHICLE_NOT_FOUND', retryAfter: undefined });
    expect((r as { message: string }).message).toMatch(
      /^No vehicle found for registration 'AA19AAA' with model 'FIESTA'/,
    );
  });

  test('a vehicle operation ignores a Model', async () => {
    expect(await sandboxPayload(CHECK, 'AA19AAA', 'FIESTA')).toBe(SANDBOX_VEHICLE);
  });
});

describe('ER19SLO', () => {
  // node:timers/promises is not one of Jest's fake timers: the real 5 s are waited.
  test('answers as AA19AAA, after 5 seconds; AA19AAA itself does not wait', async () => {
    expect(SANDBOX_SLOW_MS).toBe(5000);
    let t = Date.now();
    expect(await sandboxPayload(CHECK, 'AA19AAA', undefined)).toBe(SANDBOX_VEHICLE);
    expect(Date.now() - t).toBeLessThan(1000);
    t = Date.now();
    expect(await sandboxPayload(CHECK, 'ER19SLO', undefined)).toBe(SANDBOX_VEHICLE);
    expect(Date.now() - t).toBeGreaterThanOrEqual(4990);
  }, 15_000);
});
