// The rdw provider (issue 28, deliverable 4) against a local server speaking RDW Open Data's
// Socrata API (test/helpers/upstream-rdw.ts): the registered-vehicles row joined with the plate's
// fuel rows, mapped as docs/upstream-rdw-dvsa.md's table says (expected records written out by
// hand below), an empty array is not found, X-App-Token only when a token is configured, and each
// error status to its failure kind (provider.ts: 429 and 5xx transient, with Retry-After).

import { createRdwProvider } from '../../src/providers/rdw';
import { rdwFieldName } from '../../src/providers/rdw-map';
import { UpstreamFailure, type Provider } from '../../src/providers/provider';
import { vehicleProblems } from '../../src/service/records';
import { fetchContext } from '../helpers/upstream-http';
import { RDW_FUEL, RDW_VEHICLES, startFakeRdw, type FakeRdw } from '../helpers/upstream-rdw';

let fake: FakeRdw;
let rdw: Provider;

beforeAll(async () => {
  fake = await startFakeRdw();
  rdw = createRdwProvider({ url: fake.url, appToken: null });
});
afterAll(() => fake.close());

const fetchPlate = (plate: string, provider = rdw) => provider.fetch('CheckNetherlands', plate, '', fetchContext());

test('answers CheckNetherlands only', () => {
  expect(rdw.name).toBe('rdw');
  expect(['CheckNetherlands', 'Check', 'UKMOT', 'CheckUSA'].map((op) => rdw.answers(op))).toEqual([
    true,
    false,
    false,
    false,
  ]);
});

test('a registered car: every mapped field, the extras in vehicleJson, the rows kept whole', async () => {
  const answer = await fetchPlate('XX999X');
  expect(answer).toEqual({
    found: true,
    record: {
      Description: 'VOLKSWAGEN GOLF 1498cc',
      RegistrationYear: 2019,
      CarMake: { CurrentTextValue: 'VOLKSWAGEN' },
      CarModel: { CurrentTextValue: 'GOLF' },
      BodyStyle: { CurrentValue: null, CurrentTextValue: 'hatchback' },
      EngineSize: { CurrentValue: 1498, CurrentTextValue: '1498cc' },
      NumberOfDoors: { CurrentValue: 4, CurrentTextValue: '4' },
      MakeDescription: { CurrentValue: null, CurrentTextValue: 'VOLKSWAGEN' },
      ModelDescription: { CurrentValue: null, CurrentTextValue: 'GOLF' },
      NumberOfSeats: { CurrentValue: 5, CurrentTextValue: '5' },
      Colour: 'GRIJS',
      VehicleType: 'Personenauto',
      FirstRegistrationDate: '2019-03-15',
      FirstRegistrationDateNL: '2019-03-15',
      MotExpiryDate: '2027-03-14',
      ListPrice: 31990,
      EuropeanVehicleCategory: 'M1',
      Cylinders: 4,
      MassEmpty: 1255,
      rdw: RDW_VEHICLES[0],
      FuelType: { CurrentValue: null, CurrentTextValue: 'Benzine' },
      Co2Emissions: 112,
      Co2TestCycle: 'NEDC',
      EmissionStandard: 'EURO 6 AG',
      PowerKw: '110.00',
      rdwFuel: [RDW_FUEL[0]],
    },
  });
  // Fields RDW does not hold are absent (answered as empty elements), and the record is one an import would take.
  if (!answer.found) throw new Error('not found');
  for (const f of [
    'ABICode',
    'ManufactureYearFrom',
    'ManufactureYearTo',
    'Transmission',
    'Immobiliser',
    'IndicativeValue',
    'DriverSide',
    'SecondColour',
  ])
    expect(answer.record).not.toHaveProperty(f);
  expect(vehicleProblems(answer.record)).toEqual([]);
});

test('a hybrid: both fuels in fuel-number order, the first CO2 figure given', async () => {
  const answer = await fetchPlate('HB123Z');
  if (!answer.found) throw new Error('not found');
  expect(answer.record.FuelType).toEqual({ CurrentValue: null, CurrentTextValue: 'Benzine/Elektriciteit' });
  expect(answer.record.Co2Emissions).toBe(101);
  expect(answer.record).not.toHaveProperty('NumberOfDoors');
  expect((answer.record.rdwFuel as { brandstof_volgnummer: string }[]).map((r) => r.brandstof_volgnummer)).toEqual([
    '1',
    '2',
  ]);
});

test('a trailer: no fuel rows and no engine, so no FuelType nor EngineSize', async () => {
  const answer = await fetchPlate('WX12AB');
  if (!answer.found) throw new Error('not found');
  expect(answer.record).not.toHaveProperty('FuelType');
  expect(answer.record).not.toHaveProperty('EngineSize');
  expect(answer.record.rdwFuel).toEqual([]);
  expect(answer.record.Description).toBe('HUMBAUR HA 132513');
});

test('a plate RDW does not hold (an empty array) is not found, and its fuel data set is not asked', async () => {
  fake.requests.length = 0;
  expect(await fetchPlate('ZZ000Z')).toEqual({ found: false });
  expect(fake.requests.map((r) => [r.path, r.kenteken])).toEqual([['/resource/m9d7-ebf2.json', 'ZZ000Z']]);
  expect(fake.requests[0].headers['x-app-token']).toBeUndefined();
});

test('a plate RDW holds: both data sets asked', async () => {
  fake.requests.length = 0;
  await fetchPlate('XX999X');
  expect(fake.requests.map((r) => [r.path, r.kenteken])).toEqual([
    ['/resource/m9d7-ebf2.json', 'XX999X'],
    ['/resource/8ys7-d773.json', 'XX999X'],
  ]);
});

test('NISSAN with the trade name "NISSAN MURANO": the make once; WLTP CO2 before NEDC, and named', async () => {
  const answer = await fetchPlate('85XXXN');
  if (!answer.found) throw new Error('not found');
  expect(answer.record).toMatchObject({
    Description: 'NISSAN MURANO 3498cc',
    CarModel: { CurrentTextValue: 'MURANO' },
    Co2Emissions: 290,
    Co2TestCycle: 'WLTP',
    PowerKw: '188.00',
    MotExpiryDate: '2024-01-06',
  });
});

test('an electric car: its power from netto_max_vermogen_elektrisch, doors 0 (not registered) left out', async () => {
  const answer = await fetchPlate('EV001X');
  if (!answer.found) throw new Error('not found');
  expect(answer.record).toMatchObject({ Description: 'TESLA MODEL 3', PowerKw: '208.00' });
  expect(answer.record).not.toHaveProperty('NumberOfDoors');
  expect(answer.record).not.toHaveProperty('Co2Emissions');
});

test('RDW_APP_TOKEN is sent as X-App-Token', async () => {
  fake.requests.length = 0;
  await fetchPlate('XX999X', createRdwProvider({ url: fake.url, appToken: 'app-token-123' }));
  expect(fake.requests.map((r) => r.headers['x-app-token'])).toEqual(['app-token-123', 'app-token-123']);
});

test.each([
  ['ER19BAD', 'permanent', undefined],
  ['ER19NFD', 'permanent', undefined],
  ['ER19THR', 'transient', 7],
  ['ER19ERR', 'transient', undefined],
  ['ER19MNT', 'transient', undefined],
  ['ER19BIG', 'permanent', undefined],
])('%s: an UpstreamFailure of kind %s (Retry-After %s)', async (plate, kind, retryAfterS) => {
  const e = (await fetchPlate(plate).catch((err: unknown) => err)) as UpstreamFailure;
  expect(e).toBeInstanceOf(UpstreamFailure);
  expect([e.provider, e.kind, e.retryAfterS]).toEqual(['rdw', kind, retryAfterS]);
  expect(e.message).not.toContain(fake.url);
});

test("the portal export's column titles name the API's fields", () => {
  expect(
    [
      'Kenteken',
      'Merk',
      'Handelsbenaming',
      'Eerste kleur',
      'Datum eerste toelating',
      'Vervaldatum APK',
      'WAM verzekerd',
      'Aantal zitplaatsen',
      'kenteken',
    ].map(rdwFieldName),
  ).toEqual([
    'kenteken',
    'merk',
    'handelsbenaming',
    'eerste_kleur',
    'datum_eerste_toelating',
    'vervaldatum_apk',
    'wam_verzekerd',
    'aantal_zitplaatsen',
    'kenteken',
  ]);
});
