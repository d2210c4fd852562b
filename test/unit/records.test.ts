// Stored records as the README's "Importing your own vehicles", "The interface" (Results) and "What
// comes back" describe them: which vehicle and MOT objects an import takes and which it refuses
// (and why), the result tree a lookup answers with (vehicleData in the WSDL's order, every composite
// written, nil where the record lacks a value), and UKMOT's Model matching make or model ignoring
// case and spaces. The records are written by hand here.

import {
  modelMatches,
  motProblem,
  resultNodes,
  unknownKeyProblem,
  vehicleProblem,
  type XNode,
} from '../../src/service/records';

/** vehicleData's children in the README's order. */
const ORDER = [
  'ABICode',
  'Description',
  'RegistrationYear',
  'ManufactureYearFrom',
  'ManufactureYearTo',
  'CarMake',
  'CarModel',
  'BodyStyle',
  'EngineSize',
  'NumberOfDoors',
  'Transmission',
  'FuelType',
  'MakeDescription',
  'ModelDescription',
  'Immobiliser',
  'NumberOfSeats',
  'IndicativeValue',
  'DriverSide',
];
const COMPOSITES = [
  'CarMake',
  'BodyStyle',
  'EngineSize',
  'NumberOfDoors',
  'Transmission',
  'FuelType',
  'Immobiliser',
  'NumberOfSeats',
  'DriverSide',
];

function vehicleData(vehicle: unknown): XNode[] {
  const nodes = resultNodes('Vehicle', JSON.stringify(vehicle));
  expect(nodes.map((n) => n.name)).toEqual(['vehicleJson', 'vehicleData']);
  return [...(nodes[1].children ?? [])];
}

const child = (nodes: readonly XNode[], name: string) => nodes.find((n) => n.name === name);

describe('vehicleProblem: what an import takes', () => {
  test("the README's example and an empty object are taken", () => {
    expect(
      vehicleProblem({
        Description: 'FORD F-150',
        RegistrationYear: 2019,
        CarMake: { CurrentValue: null, CurrentTextValue: 'FORD' },
        FuelType: 'Gasoline',
        ImageUrl: 'https://example.com/f150.jpg',
      }),
    ).toBeNull();
    expect(vehicleProblem({})).toBeNull();
  });

  test('not an object', () => {
    for (const v of [null, [], 'x', 3, true]) expect(vehicleProblem(v)).toBe('"vehicle" must be a JSON object');
  });

  test('integer fields: an integer or a string of digits; anything else names the field', () => {
    for (const ok of [2019, -1, 0, '2019', ' 2019 ', '-12', '123456789012345', null])
      expect(vehicleProblem({ RegistrationYear: ok })).toBeNull();
    for (const bad of [2019.5, '20x9', '', '1234567890123456', {}, [], true, Number.MAX_SAFE_INTEGER + 2]) {
      expect(vehicleProblem({ RegistrationYear: bad })).toBe('vehicle.RegistrationYear must be an integer');
    }
    for (const bad of ['x12', '12x', '--1', '1 2'])
      expect(vehicleProblem({ ABICode: bad })).toBe('vehicle.ABICode must be an integer');
    expect(vehicleProblem({ ABICode: 'abc' })).toBe('vehicle.ABICode must be an integer');
    expect(vehicleProblem({ ManufactureYearFrom: 'abc' })).toBe('vehicle.ManufactureYearFrom must be an integer');
    expect(vehicleProblem({ ManufactureYearTo: 'abc' })).toBe('vehicle.ManufactureYearTo must be an integer');
  });

  test('text fields: a string or a finite number, or an object of CurrentValue and CurrentTextValue', () => {
    for (const ok of [
      'FORD',
      12,
      '',
      { CurrentTextValue: 'x' },
      { CurrentValue: 1, CurrentTextValue: 'x' },
      { CurrentTextValue: null },
      {},
      null,
    ]) {
      expect(vehicleProblem({ Description: ok })).toBeNull();
    }
    expect(vehicleProblem({ Description: true })).toBe('vehicle.Description must be a string or a number');
    expect(vehicleProblem({ Description: [] })).toBe('vehicle.Description must be a string or a number');
    expect(vehicleProblem({ Description: Infinity })).toBe('vehicle.Description must be a finite number');
    expect(vehicleProblem({ Description: { CurrentTextValue: true } })).toBe(
      'vehicle.Description.CurrentTextValue must be a string or a number',
    );
    expect(vehicleProblem({ Description: { Other: 'x' } })).toBe(
      'vehicle.Description may only hold CurrentValue and CurrentTextValue',
    );
    expect(vehicleProblem({ IndicativeValue: false })).toBe('vehicle.IndicativeValue must be a string or a number');
  });

  test('text longer than 8192 characters, or holding a character XML cannot carry, is refused', () => {
    expect(vehicleProblem({ Description: 'x'.repeat(8192) })).toBeNull();
    expect(vehicleProblem({ Description: 'x'.repeat(8193) })).toBe(
      'vehicle.Description is longer than 8192 characters',
    );
    for (const c of [
      '\u0000',
      '\u0008',
      '\u000b',
      '\u000c',
      '\u000e',
      '\u001f',
      '\ufffe',
      '\uffff',
      '\ud800',
      'a\udc00',
    ]) {
      expect(vehicleProblem({ Description: `a${c}b` })).toBe('vehicle.Description holds a character XML cannot carry');
    }
    // Tab, line feed, carriage return and a proper surrogate pair are fine.
    for (const c of ['\t', '\n', '\r', '\u{1F697}', '\u00e9'])
      expect(vehicleProblem({ Description: `a${c}b` })).toBeNull();
  });

  test('composites: {"CurrentValue":int|null,"CurrentTextValue":string|number} or a plain string', () => {
    for (const ok of [
      { CurrentValue: 5, CurrentTextValue: '5' },
      { CurrentValue: null, CurrentTextValue: 'Manual' },
      { CurrentTextValue: 7 },
      {},
      'Manual',
      7,
      null,
    ]) {
      expect(vehicleProblem({ Transmission: ok })).toBeNull();
    }
    expect(vehicleProblem({ Transmission: { CurrentValue: 1, Other: 2 } })).toBe(
      'vehicle.Transmission has an unknown key "Other" (a composite holds CurrentValue and CurrentTextValue)',
    );
    expect(vehicleProblem({ Transmission: { CurrentValue: '5' } })).toBe(
      'vehicle.Transmission.CurrentValue must be an integer or null',
    );
    expect(vehicleProblem({ Transmission: { CurrentValue: 1.5 } })).toBe(
      'vehicle.Transmission.CurrentValue must be an integer or null',
    );
    expect(vehicleProblem({ Transmission: { CurrentTextValue: true } })).toBe(
      'vehicle.Transmission.CurrentTextValue must be a string or a number',
    );
    expect(vehicleProblem({ Transmission: true })).toBe(
      'vehicle.Transmission must be a string or a number (or a composite {"CurrentValue":int|null,"CurrentTextValue":string})',
    );
    expect(vehicleProblem({ Transmission: 'a\u0000' })).toBe(
      'vehicle.Transmission holds a character XML cannot carry (or a composite {"CurrentValue":int|null,"CurrentTextValue":string})',
    );
  });

  test('any other key is kept, whatever it holds', () => {
    expect(vehicleProblem({ ImageUrl: true, Colour: { a: [1] }, Extra: null })).toBeNull();
  });

  test('the first bad field in the README order is the one named', () => {
    expect(vehicleProblem({ DriverSide: true, ABICode: 'x' })).toBe('vehicle.ABICode must be an integer');
  });

  test('a valid field does not end the check: a bad field of the same kind after it is still refused', () => {
    // README: "A file is checked line by line: the first 50 invalid lines are reported ..."; a good
    // Description does not excuse a bad CarModel, nor a good CarMake a bad BodyStyle.
    expect(vehicleProblem({ Description: 'FORD F-150', CarModel: true })).toBe(
      'vehicle.CarModel must be a string or a number',
    );
    expect(
      vehicleProblem({ Description: { CurrentTextValue: 'FORD F-150' }, CarModel: { CurrentTextValue: [] } }),
    ).toBe('vehicle.CarModel.CurrentTextValue must be a string or a number');
    expect(
      vehicleProblem({
        CarMake: { CurrentValue: null, CurrentTextValue: 'FORD' },
        BodyStyle: { CurrentTextValue: true },
      }),
    ).toBe('vehicle.BodyStyle.CurrentTextValue must be a string or a number');
    expect(vehicleProblem({ CarMake: 'FORD', BodyStyle: true })).toBe(
      'vehicle.BodyStyle must be a string or a number (or a composite {"CurrentValue":int|null,"CurrentTextValue":string})',
    );
  });

  test('a composite with a CurrentValue and a null CurrentTextValue is taken (README: CurrentValue int|null, CurrentTextValue string|number; null is no value)', () => {
    expect(vehicleProblem({ CarMake: { CurrentValue: 1, CurrentTextValue: null } })).toBeNull();
    expect(vehicleProblem({ Description: { CurrentValue: 1, CurrentTextValue: null } })).toBeNull();
  });
});

describe('motProblem: what an import takes', () => {
  const README_MOT = {
    make: 'FORD',
    model: 'FOCUS',
    taxDate: '2026-09-01',
    tests: [
      {
        TestDate: '2025-08-20',
        ExpiryDate: '2026-08-19',
        Result: 'Pass',
        Odometer: '61234',
        TestNumber: '111122223333',
        FailureReasons: [],
        Advisories: ['Tyre worn'],
      },
    ],
    extendedInformation: [['Colour', 'Blue']],
  };

  test("the README's example, an empty history, and nulls are taken", () => {
    expect(motProblem(README_MOT)).toBeNull();
    expect(motProblem({})).toBeNull();
    expect(motProblem({ make: null, model: null, taxDate: null, tests: null, extendedInformation: null })).toBeNull();
    expect(motProblem({ tests: [{ TestDate: null, FailureReasons: null, Advisories: [] }] })).toBeNull();
  });

  test('not an object', () => {
    for (const m of [null, [], 'x']) expect(motProblem(m)).toBe('"mot" must be a JSON object');
  });

  test("the README's misspelling is named with the right spelling; an unknown key lists the allowed ones", () => {
    expect(motProblem({ taxdate: '2026-01-01' })).toBe(
      'unknown key "taxdate" in "mot" (did you mean "taxDate"? keys are case-sensitive)',
    );
    expect(motProblem({ colour: 'Blue' })).toBe(
      'unknown key "colour" in "mot" (allowed: make, model, taxDate, tests, extendedInformation)',
    );
    expect(motProblem({ tests: [{ result: 'Pass' }] })).toBe(
      'unknown key "result" in mot.tests[0] (did you mean "Result"? keys are case-sensitive)',
    );
    expect(motProblem({ tests: [{}, { Mileage: '1' }] })).toBe(
      'unknown key "Mileage" in mot.tests[1] (allowed: TestDate, ExpiryDate, Result, Odometer, TestNumber, FailureReasons, Advisories)',
    );
  });

  test('history fields are text', () => {
    expect(motProblem({ make: true })).toBe('mot.make must be a string or a number');
    expect(motProblem({ model: [] })).toBe('mot.model must be a string or a number');
    expect(motProblem({ taxDate: {} })).toBe('mot.taxDate must be a string or a number');
  });

  test('tests: an array of objects whose fields are text and whose lists are arrays of strings', () => {
    expect(motProblem({ tests: {} })).toBe('mot.tests must be an array');
    expect(motProblem({ tests: ['x'] })).toBe('mot.tests[0] must be an object');
    expect(motProblem({ tests: [{}, null] })).toBe('mot.tests[1] must be an object');
    for (const f of ['TestDate', 'ExpiryDate', 'Result', 'Odometer', 'TestNumber']) {
      expect(motProblem({ tests: [{ [f]: true }] })).toBe(`mot.tests[0].${f} must be a string or a number`);
    }
    expect(motProblem({ tests: [{ FailureReasons: 'x' }] })).toBe(
      'mot.tests[0].FailureReasons must be an array of strings',
    );
    expect(motProblem({ tests: [{ Advisories: ['ok', true] }] })).toBe(
      'mot.tests[0].Advisories[1] must be a string or a number',
    );
  });

  test('a valid field does not end the check: a bad one of the same kind after it is still refused', () => {
    expect(motProblem({ make: 'FORD', model: true })).toBe('mot.model must be a string or a number');
    expect(motProblem({ make: 'FORD', model: 'FOCUS', taxDate: [] })).toBe('mot.taxDate must be a string or a number');
    expect(motProblem({ tests: [{ TestDate: '2025-08-20', Result: true }] })).toBe(
      'mot.tests[0].Result must be a string or a number',
    );
    expect(motProblem({ tests: [{ FailureReasons: [], Advisories: 'Tyre worn' }] })).toBe(
      'mot.tests[0].Advisories must be an array of strings',
    );
    expect(motProblem({ tests: [{ FailureReasons: ['Brakes', false] }] })).toBe(
      'mot.tests[0].FailureReasons[1] must be a string or a number',
    );
    expect(motProblem({ extendedInformation: [['Colour', 'Blue'], 'Red'] })).toBe(
      'mot.extendedInformation[1] must be an array of strings',
    );
  });

  test("MOT text longer than 8192 characters, or holding a character XML cannot carry, is refused as a vehicle's is", () => {
    expect(motProblem({ make: 'x'.repeat(8192) })).toBeNull();
    expect(motProblem({ make: 'x'.repeat(8193) })).toBe('mot.make is longer than 8192 characters');
    expect(motProblem({ tests: [{ Result: 'Pass\u0000' }] })).toBe(
      'mot.tests[0].Result holds a character XML cannot carry',
    );
  });

  test('extendedInformation: an array of arrays of strings', () => {
    expect(motProblem({ extendedInformation: 'x' })).toBe(
      'mot.extendedInformation must be an array of arrays of strings',
    );
    expect(motProblem({ extendedInformation: [['a'], 'b'] })).toBe(
      'mot.extendedInformation[1] must be an array of strings',
    );
    expect(
      motProblem({
        extendedInformation: [
          ['a', 'b'],
          ['c', {}],
        ],
      }),
    ).toBe('mot.extendedInformation[1][1] must be a string or a number');
  });
});

describe('unknownKeyProblem', () => {
  test('names a long key cut at 40 characters', () => {
    const long = 'k'.repeat(45);
    expect(unknownKeyProblem('"x"', { [long]: 1 }, ['a'])).toBe(
      `unknown key "${'k'.repeat(40)}..." in "x" (allowed: a)`,
    );
    const forty = 'k'.repeat(40);
    expect(unknownKeyProblem('"x"', { [forty]: 1 }, ['a'])).toBe(`unknown key "${forty}" in "x" (allowed: a)`);
  });

  test('null when every key is allowed', () => {
    expect(unknownKeyProblem('"x"', { a: 1, b: 2 }, ['a', 'b'])).toBeNull();
  });
});

describe('resultNodes: a Vehicle', () => {
  test('vehicleJson is the stored text itself; vehicleData follows the README order, every composite written', () => {
    const payload =
      '{"Description":"FORD F-150","RegistrationYear":2019,"CarMake":{"CurrentValue":null,"CurrentTextValue":"FORD"},"FuelType":"Gasoline","ImageUrl":"x"}';
    const nodes = resultNodes('Vehicle', payload);
    expect(nodes[0]).toEqual({ name: 'vehicleJson', text: payload });
    const data = nodes[1].children ?? [];
    const names = data.map((n) => n.name);
    // Present: Description, RegistrationYear and every composite; in the README's order.
    expect(names).toEqual(
      ORDER.filter((n) => n === 'Description' || n === 'RegistrationYear' || COMPOSITES.includes(n)),
    );
    expect(child(data, 'Description')).toEqual({ name: 'Description', text: 'FORD F-150' });
    expect(child(data, 'RegistrationYear')).toEqual({ name: 'RegistrationYear', text: '2019' });
    expect(child(data, 'CarMake')).toEqual({
      name: 'CarMake',
      children: [
        { name: 'CurrentValue', absent: true },
        { name: 'CurrentTextValue', text: 'FORD' },
      ],
    });
    // A plain string is the CurrentTextValue.
    expect(child(data, 'FuelType')).toEqual({
      name: 'FuelType',
      children: [
        { name: 'CurrentValue', absent: true },
        { name: 'CurrentTextValue', text: 'Gasoline' },
      ],
    });
    // A composite the vehicle lacks: both nil.
    expect(child(data, 'DriverSide')).toEqual({
      name: 'DriverSide',
      children: [
        { name: 'CurrentValue', absent: true },
        { name: 'CurrentTextValue', absent: true },
      ],
    });
    // Keys outside vehicleData are in vehicleJson only.
    expect(child(data, 'ImageUrl')).toBeUndefined();
  });

  test('every field present comes out in the README order', () => {
    const v: Record<string, unknown> = {};
    for (const n of ORDER)
      v[n] = COMPOSITES.includes(n)
        ? { CurrentValue: 1, CurrentTextValue: n }
        : ['ABICode', 'RegistrationYear', 'ManufactureYearFrom', 'ManufactureYearTo'].includes(n)
          ? 7
          : n;
    expect(vehicleData(v).map((n) => n.name)).toEqual(ORDER);
  });

  test('integers: a number or a string of digits, written without spaces or leading zeros', () => {
    const data = vehicleData({
      ABICode: ' 0042 ',
      RegistrationYear: '-7',
      ManufactureYearFrom: 2001,
      ManufactureYearTo: { CurrentValue: 2005 },
    });
    expect(child(data, 'ABICode')?.text).toBe('42');
    expect(child(data, 'RegistrationYear')?.text).toBe('-7');
    expect(child(data, 'ManufactureYearFrom')?.text).toBe('2001');
    expect(child(data, 'ManufactureYearTo')?.text).toBe('2005');
    const fromText = vehicleData({
      ABICode: { CurrentTextValue: '12' },
      RegistrationYear: 'abc',
      ManufactureYearFrom: 1.5,
    });
    expect(child(fromText, 'ABICode')?.text).toBe('12');
    expect(child(fromText, 'RegistrationYear')).toBeUndefined();
    expect(child(fromText, 'ManufactureYearFrom')).toBeUndefined();
    // Strings that are not wholly an integer of at most 15 digits are left out, not half-read.
    const notWhole = vehicleData({
      ABICode: '20x9',
      RegistrationYear: 'x12',
      ManufactureYearFrom: '1234567890123456',
      ManufactureYearTo: '--1',
    });
    for (const f of ['ABICode', 'RegistrationYear', 'ManufactureYearFrom', 'ManufactureYearTo'])
      expect(child(notWhole, f)).toBeUndefined();
  });

  test("texts: a string, a number written as digits, or an object's CurrentTextValue; otherwise left out", () => {
    const data = vehicleData({
      Description: 12.5,
      CarModel: { CurrentTextValue: 'FOCUS' },
      MakeDescription: null,
      ModelDescription: { CurrentValue: 3 },
      IndicativeValue: true,
    });
    expect(child(data, 'Description')?.text).toBe('12.5');
    expect(child(data, 'CarModel')?.text).toBe('FOCUS');
    expect(child(data, 'MakeDescription')).toBeUndefined();
    expect(child(data, 'ModelDescription')).toBeUndefined();
    expect(child(data, 'IndicativeValue')).toBeUndefined();
  });

  test('composites: an integer CurrentValue (also from a string of digits), a number CurrentTextValue as text', () => {
    const data = vehicleData({
      EngineSize: { CurrentValue: 1598, CurrentTextValue: '1598cc' },
      NumberOfDoors: { CurrentValue: '5', CurrentTextValue: 5 },
      NumberOfSeats: 4,
      Immobiliser: { CurrentValue: 'x' },
    });
    expect(child(data, 'EngineSize')?.children).toEqual([
      { name: 'CurrentValue', text: '1598' },
      { name: 'CurrentTextValue', text: '1598cc' },
    ]);
    expect(child(data, 'NumberOfDoors')?.children).toEqual([
      { name: 'CurrentValue', text: '5' },
      { name: 'CurrentTextValue', text: '5' },
    ]);
    expect(child(data, 'NumberOfSeats')?.children).toEqual([
      { name: 'CurrentValue', absent: true },
      { name: 'CurrentTextValue', text: '4' },
    ]);
    expect(child(data, 'Immobiliser')?.children).toEqual([
      { name: 'CurrentValue', absent: true },
      { name: 'CurrentTextValue', absent: true },
    ]);
  });

  test('a parsed value, when given, is used instead of parsing the text again', () => {
    const nodes = resultNodes('Vehicle', '{"Description":"A"}', { Description: 'B' });
    expect(nodes[0].text).toBe('{"Description":"A"}');
    expect(child(nodes[1].children ?? [], 'Description')?.text).toBe('B');
  });
});

describe('resultNodes: a UKMOTData', () => {
  test("the README's example: Tests, taxDate, Json, ExtendedInformation, ExtendedInformationJson", () => {
    const mot = {
      make: 'FORD',
      model: 'FOCUS',
      taxDate: '2026-09-01',
      tests: [
        {
          TestDate: '2025-08-20',
          ExpiryDate: '2026-08-19',
          Result: 'Pass',
          Odometer: '61234',
          TestNumber: '111122223333',
          FailureReasons: [],
          Advisories: ['Tyre worn'],
        },
      ],
      extendedInformation: [['Colour', 'Blue']],
    };
    const nodes = resultNodes('UKMOTData', JSON.stringify(mot));
    expect(nodes).toEqual([
      {
        name: 'Tests',
        children: [
          {
            name: 'UKTest',
            children: [
              { name: 'TestDate', text: '2025-08-20' },
              { name: 'ExpiryDate', text: '2026-08-19' },
              { name: 'Result', text: 'Pass' },
              { name: 'Odometer', text: '61234' },
              { name: 'TestNumber', text: '111122223333' },
              { name: 'FailureReasons', children: [] },
              { name: 'Advisories', children: [{ name: 'string', text: 'Tyre worn' }] },
            ],
          },
        ],
      },
      { name: 'taxDate', text: '2026-09-01' },
      {
        name: 'Json',
        text: '[{"TestDate":"2025-08-20","ExpiryDate":"2026-08-19","Result":"Pass","Odometer":"61234","TestNumber":"111122223333","FailureReasons":[],"Advisories":["Tyre worn"]}]',
      },
      {
        name: 'ExtendedInformation',
        children: [
          {
            name: 'ArrayOfString',
            children: [
              { name: 'string', text: 'Colour' },
              { name: 'string', text: 'Blue' },
            ],
          },
        ],
      },
      { name: 'ExtendedInformationJson', text: '[["Colour","Blue"]]' },
    ]);
  });

  test('an empty history: empty Tests and lists, no taxDate, "[]" for the JSON texts', () => {
    expect(resultNodes('UKMOTData', '{}')).toEqual([
      { name: 'Tests', children: [] },
      { name: 'Json', text: '[]' },
      { name: 'ExtendedInformation', children: [] },
      { name: 'ExtendedInformationJson', text: '[]' },
    ]);
  });

  test('a test without lists still writes both (empty); a null string is nil; numbers are written as text', () => {
    const nodes = resultNodes(
      'UKMOTData',
      JSON.stringify({ taxDate: null, tests: [{ Result: 'Fail', Odometer: 1200, Advisories: [null, 'x', 3] }] }),
    );
    expect(nodes.map((n) => n.name)).toEqual(['Tests', 'Json', 'ExtendedInformation', 'ExtendedInformationJson']);
    expect(nodes[0].children?.[0].children).toEqual([
      { name: 'Result', text: 'Fail' },
      { name: 'Odometer', text: '1200' },
      { name: 'FailureReasons', children: [] },
      {
        name: 'Advisories',
        children: [
          { name: 'string', absent: true },
          { name: 'string', text: 'x' },
          { name: 'string', text: '3' },
        ],
      },
    ]);
  });
});

describe('modelMatches: UKMOT Model against the make, the model, or both, ignoring case and spaces', () => {
  const FORD = { make: 'FORD', model: 'FOCUS ST' };
  test('matches', () => {
    for (const m of ['FORD', 'ford', 'FOCUS ST', 'focusst', ' Focus St ', 'FORD FOCUS ST', 'fordfocusst'])
      expect(modelMatches(FORD, m)).toBe(true);
  });
  test('does not match a part, another model, or the two the other way round', () => {
    for (const m of ['FOCUS', 'FORDFOCUS', 'FIESTA', 'FOCUS ST FORD', 'F']) expect(modelMatches(FORD, m)).toBe(false);
  });
  test('an empty Model, or a record with neither make nor model, matches anything', () => {
    expect(modelMatches(FORD, '')).toBe(true);
    expect(modelMatches(FORD, '   ')).toBe(true);
    expect(modelMatches({}, 'FIESTA')).toBe(true);
    expect(modelMatches({ make: ' ', model: '' }, 'FIESTA')).toBe(true);
  });
  test('a record with only a make, or only a model, matches that one', () => {
    expect(modelMatches({ make: 'FORD' }, 'ford')).toBe(true);
    expect(modelMatches({ make: 'FORD' }, 'FIESTA')).toBe(false);
    expect(modelMatches({ make: '  ', model: 'FIESTA' }, 'fiesta')).toBe(true);
    expect(modelMatches({ make: '  ', model: 'FIESTA' }, 'FORD')).toBe(false);
  });
});
