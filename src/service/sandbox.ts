// Sandbox registrations (SANDBOX=on): fixed plates, named as on the DVLA's own test service, that
// answer every operation over every transport without data or an account, so that integrators can
// exercise their success path and each error their code handles. The records here are fictional;
// their answers are written by the same renderers as stored records'. Nothing here costs credit or
// meets the accounts (username policy, rate limit).

import { setTimeout as sleep } from 'node:timers/promises';
import type { Operation } from '../contract/operations';
import { LookupError, quote } from './errors';
import { modelMatches, parseMot } from './records';

/** The fictional vehicle every vehicle operation answers for AA19AAA (and, late, for ER19SLO). */
export const SANDBOX_VEHICLE = JSON.stringify({
  ABICode: '99999999',
  Description: 'SANDBOX TESTCAR 1598cc (fictional sandbox vehicle)',
  RegistrationYear: '2019',
  ManufactureYearFrom: 2019,
  ManufactureYearTo: 2024,
  CarMake: { CurrentTextValue: 'SANDBOX' },
  CarModel: { CurrentTextValue: 'TESTCAR' },
  BodyStyle: { CurrentValue: null, CurrentTextValue: 'Hatchback' },
  EngineSize: { CurrentValue: 1598, CurrentTextValue: '1598cc' },
  NumberOfDoors: { CurrentValue: 5, CurrentTextValue: '5' },
  Transmission: { CurrentValue: null, CurrentTextValue: 'Manual' },
  FuelType: { CurrentValue: null, CurrentTextValue: 'Petrol' },
  MakeDescription: { CurrentValue: null, CurrentTextValue: 'SANDBOX' },
  ModelDescription: { CurrentValue: null, CurrentTextValue: 'TESTCAR' },
  Immobiliser: { CurrentTextValue: 'Fitted' },
  NumberOfSeats: { CurrentValue: 5, CurrentTextValue: '5' },
  IndicativeValue: { CurrentTextValue: '1000' },
  DriverSide: { CurrentTextValue: 'RHD' },
  Colour: 'Grey',
  VehicleIdentificationNumber: 'SANDBOX0000000001',
  ImageUrl: `/image.aspx/@${Buffer.from('SANDBOX TESTCAR').toString('base64')}`,
  SampleData: 'Fictional sandbox record (SANDBOX=on); not a real vehicle.',
});

/** The fictional MOT history UKMOT answers for AA19AAA: a fail, then a pass with an advisory. */
export const SANDBOX_MOT = JSON.stringify({
  make: 'SANDBOX',
  model: 'TESTCAR',
  taxDate: '2026-12-01',
  tests: [
    {
      TestDate: '2025-11-20',
      ExpiryDate: '2026-11-19',
      Result: 'Pass',
      Odometer: '41230',
      TestNumber: '999900000002',
      FailureReasons: [],
      Advisories: ['Nearside front tyre worn close to legal limit (sandbox)'],
    },
    {
      TestDate: '2025-11-18',
      Result: 'Fail',
      Odometer: '41228',
      TestNumber: '999900000001',
      FailureReasons: ['Offside headlamp aim too high (sandbox)'],
      Advisories: [],
    },
  ],
  extendedInformation: [
    ['Colour', 'Grey'],
    ['FuelType', 'Petrol'],
  ],
});

/** How long ER19SLO waits before answering, for testing a client's time-out. */
export const SANDBOX_SLOW_MS = 5000;

type Plate = 'AA19AAA' | 'ER19NFD' | 'ER19BAD' | 'ER19USR' | 'ER19CRD' | 'ER19THR' | 'ER19ERR' | 'ER19MNT' | 'ER19SLO';

// Keys are registrations as normalizeRegistration writes them (so 'aa19 aaa' is AA19AAA too).
const PLATES: ReadonlySet<string> = new Set<Plate>([
  'AA19AAA',
  'ER19NFD',
  'ER19BAD',
  'ER19USR',
  'ER19CRD',
  'ER19THR',
  'ER19ERR',
  'ER19MNT',
  'ER19SLO',
]);

export function isSandboxPlate(registration: string): boolean {
  return PLATES.has(registration);
}

function failure(plate: Plate): LookupError | null {
  const tag = `(sandbox registration ${plate})`;
  switch (plate) {
    case 'ER19NFD':
      return new LookupError('VEHICLE_NOT_FOUND', `No vehicle found for registration '${plate}' ${tag}`);
    case 'ER19BAD':
      return new LookupError('INVALID_PARAMETER', `RegistrationNumber '${plate}' is not a valid registration ${tag}`);
    case 'ER19USR':
      return new LookupError('UNKNOWN_USERNAME', `Your username is incorrect ${tag}`);
    case 'ER19CRD':
      return new LookupError('OUT_OF_CREDIT', `Out of credit ${tag}`);
    case 'ER19THR':
      return new LookupError('RATE_LIMITED', `Too many requests; retry in 30 s ${tag}`, 30);
    case 'ER19ERR':
      return LookupError.internal(tag);
    case 'ER19MNT':
      return new LookupError('SERVICE_UNAVAILABLE', `Service unavailable for maintenance; retry in 120 s ${tag}`, 120);
    default:
      return null;
  }
}

/**
 * The sandbox answer for a sandbox registration (isSandboxPlate): the fictional record's payload,
 * or the plate's error thrown. UKMOT's Model is matched as for stored histories.
 */
export async function sandboxPayload(op: Operation, registration: string, model: string | undefined): Promise<string> {
  const plate = registration as Plate;
  const err = failure(plate);
  if (err) throw err;
  if (plate === 'ER19SLO') await sleep(SANDBOX_SLOW_MS);
  if (op.result === 'UKMOTData') {
    if (model !== undefined && !modelMatches(parseMot(SANDBOX_MOT), model)) {
      throw new LookupError(
        'VEHICLE_NOT_FOUND',
        `No vehicle found for registration '${plate}' with model ${quote(model)} (sandbox)`,
      );
    }
    return SANDBOX_MOT;
  }
  return SANDBOX_VEHICLE;
}
