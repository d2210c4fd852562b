// The calls every stack makes through its generated client, and what a caller must see. Each client
// program (clients/<stack>/) makes the same six calls and prints one JSON report; the expected
// values come from the bundled sample data, so the records and these tests cannot drift apart.

import { documentedError } from '../helpers/readme';
import { SAMPLE, type SampleRecord } from '../helpers/sample';
import type { WorksWith } from './works-with';

export type Transport = 'SOAP 1.1' | 'SOAP 1.2' | 'HTTP GET' | 'HTTP POST';
export const TRANSPORTS: readonly Transport[] = ['SOAP 1.1', 'SOAP 1.2', 'HTTP GET', 'HTTP POST'];

function record(operation: string, registration: string): SampleRecord {
  const r = SAMPLE.find((s) => s.operation === operation && s.registration === registration);
  if (!r) throw new Error(`the sample data has no ${operation} record for ${registration}`);
  return r;
}

/** The registrations the clients look up, in the order of their command-line arguments. */
export const CALLS = {
  check: record('Check', 'RG11 ABC'),
  usa: record('CheckUSA', '7ABC123'),
  mot: record('UKMOT', 'RG11 ABC'),
  missing: 'ZZ99 ZZZ',
  empty: record('Check', 'NO11 CMP'),
  quoted: record('Check', 'QU07 TED'),
} as const;

if (SAMPLE.some((s) => s.registration === CALLS.missing))
  throw new Error(`${CALLS.missing} must not be in the sample data`);

/** CHECK_REG USA_REG USA_STATE MOT_REG MISSING_REG EMPTY_REG QUOTED_REG, as every client takes them. */
export function callArgs(): string[] {
  return [
    CALLS.check.registration,
    CALLS.usa.registration,
    CALLS.usa.state as string,
    CALLS.mot.registration,
    CALLS.missing,
    CALLS.empty.registration,
    CALLS.quoted.registration,
  ];
}

/** A vehicle as a client surfaced it: vehicleJson and a few vehicleData fields, as text. */
export interface VehicleSeen {
  readonly vehicleJson: string | null;
  readonly description: string | null;
  readonly year: string | null;
  readonly make: string | null;
  readonly engineSize: string | null;
}

export interface TestSeen {
  readonly testDate: string | null;
  readonly result: string | null;
  readonly odometer: string | null;
  readonly failureReasons: string[];
  readonly advisories: string[];
}

export interface MotSeen {
  readonly taxDate: string | null;
  readonly tests: TestSeen[];
  readonly extended: string[][];
}

/** A failed call as the client surfaced it. `exception` means something unexpected was thrown. */
export interface FailureSeen {
  readonly error?: string | null;
  readonly code?: string | null;
  readonly detail?: string | null;
  readonly status?: number;
  /** The exception type and message, where the client reports them next to the error text. */
  readonly thrown?: string;
  readonly exception?: string;
  readonly unexpected?: VehicleSeen;
}

export interface Report {
  readonly check: VehicleSeen & FailureSeen;
  readonly usa: VehicleSeen & FailureSeen;
  readonly mot: MotSeen & FailureSeen;
  readonly missing: FailureSeen;
  readonly empty: VehicleSeen & FailureSeen;
  readonly quoted: VehicleSeen & FailureSeen;
}

export function parseReport(stdout: string): Report {
  try {
    return JSON.parse(stdout) as Report;
  } catch {
    throw new Error(`the client printed no JSON report:\n${stdout.slice(0, 2000)}`);
  }
}

/** Fails with what the client threw, so a failing call reads as the toolkit's own error. */
function succeeded(seen: FailureSeen, what: string): void {
  if (seen.exception !== undefined || seen.error !== undefined) {
    throw new Error(`${what} failed in the client: ${JSON.stringify(seen, null, 2)}`);
  }
}

type Vehicle = Record<string, unknown> & {
  CarMake?: { CurrentTextValue?: string };
  Description?: string;
  RegistrationYear?: string | number;
};

/**
 * vehicleJson as docs/calling.md gives it: the record's keys, then where the answer came from (an import, here) and
 * as of when (ISO 8601, UTC, to the second).
 */
function expectVehicleJson(text: string | null, v: Vehicle): void {
  expect(typeof text).toBe('string');
  expect(JSON.parse(text as string)).toEqual({
    ...v,
    AnswerSource: 'import',
    AnswerAsOf: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
  });
}

function expectVehicle(seen: VehicleSeen & FailureSeen, rec: SampleRecord, what: string): void {
  succeeded(seen, what);
  const v = rec.vehicle as Vehicle;
  expect(seen.description).toBe(v.Description);
  expect(seen.year).toBe(String(v.RegistrationYear));
  expect(seen.make).toBe(v.CarMake?.CurrentTextValue);
  expectVehicleJson(seen.vehicleJson, v);
}

/**
 * The tests of one stack over one transport. `report` gives the client's report once the suite's
 * beforeAll has built and run the client (it throws the build error when that failed).
 */
export function describeCalls(transport: Transport, report: () => Report, works: WorksWith): void {
  const pass = (scenario: string) => works.pass(transport, scenario);
  const message = `No vehicle found for registration '${CALLS.missing}'`;

  test(`Check ${CALLS.check.registration}: make, year, and vehicleJson that parses`, () => {
    expectVehicle(report().check, CALLS.check, 'Check');
    expect(report().check.engineSize).toBe(
      String((CALLS.check.vehicle as { EngineSize: { CurrentValue: number } }).EngineSize.CurrentValue),
    );
    pass('Check');
  });

  test(`CheckUSA ${CALLS.usa.registration} with State ${CALLS.usa.state}`, () => {
    expectVehicle(report().usa, CALLS.usa, 'CheckUSA');
    pass('CheckUSA');
  });

  test(`UKMOT ${CALLS.mot.registration}: tests, failure reasons and ExtendedInformation`, () => {
    const mot = report().mot;
    succeeded(mot, 'UKMOT');
    const want = CALLS.mot.mot as {
      taxDate: string;
      tests: Array<Record<string, unknown>>;
      extendedInformation: string[][];
    };
    expect(mot.taxDate).toBe(want.taxDate);
    expect(mot.tests.map((t) => [t.testDate, t.result, t.odometer])).toEqual(
      want.tests.map((t) => [t.TestDate, t.Result, t.Odometer]),
    );
    expect(mot.tests.map((t) => t.failureReasons)).toEqual(want.tests.map((t) => t.FailureReasons));
    expect(mot.tests.map((t) => t.advisories)).toEqual(want.tests.map((t) => t.Advisories));
    expect(mot.tests.some((t) => t.failureReasons.length >= 2)).toBe(true);
    expect(mot.extended).toEqual(want.extendedInformation);
    pass('UKMOT');
  });

  test(`a registration with no record (${CALLS.missing}) surfaces as an error carrying our message`, () => {
    const f = report().missing;
    expect(f.unexpected).toBeUndefined();
    expect(f.exception).toBeUndefined();
    const text = [f.error, f.detail].filter(Boolean).join('\n');
    expect(text).toContain(message);
    expect(text).toContain('VEHICLE_NOT_FOUND');
    if (transport === 'SOAP 1.1' || transport === 'SOAP 1.2') {
      // The fault code also proves which SOAP version went over the wire: Client is 1.1's word, Sender 1.2's.
      expect(f.code).toMatch(transport === 'SOAP 1.1' ? /(^|:)Client$/ : /(^|:)Sender$/);
    } else {
      // Over HTTP GET/POST the status is what tells a caller what went wrong: every client must see the README's.
      expect(Number(f.status)).toBe(documentedError('VEHICLE_NOT_FOUND').status);
    }
    pass('not found');
  });

  test(`a vehicle with empty composites (${CALLS.empty.registration}) does not make the client throw`, () => {
    const seen = report().empty;
    succeeded(seen, 'Check of a vehicle without composites');
    const v = CALLS.empty.vehicle as Vehicle;
    expect(seen.description).toBe(v.Description);
    expect(seen.year).toBe(String(v.RegistrationYear));
    // Nil (SOAP) or an empty element (HTTP): the client may show either as null or as ''.
    expect(seen.make ?? '').toBe('');
    expect(seen.engineSize ?? '').toBe('');
    expectVehicleJson(seen.vehicleJson, v);
    pass('empty composites');
  });

  test(`quotes, & and <> in text come through unchanged (${CALLS.quoted.registration})`, () => {
    expectVehicle(report().quoted, CALLS.quoted, 'Check of a vehicle with markup characters');
    expect(report().quoted.description).toMatch(/"[^"]*".*&.*<.*>/);
    pass('markup in text');
  });
}

/** The scenario names describeCalls records; a transport "works" when all of them passed. */
export const SCENARIOS = ['Check', 'CheckUSA', 'UKMOT', 'not found', 'empty composites', 'markup in text'] as const;
