// The vehicleData children of a Vehicle result (spec section 2.2), in the order the spec and the
// WSDL give them, each with its content: an integer, a text, or a composite of a CurrentValue
// (integer) and a CurrentTextValue (text). Below the service and the providers, so that the
// record checks (service/records.ts) and a provider normalising an upstream's answer to the same
// shapes (providers/regcheck-normalize.ts) read one table.

export type FieldKind = 'integer' | 'text' | 'composite';

export const VEHICLE_FIELDS: ReadonlyArray<readonly [string, FieldKind]> = [
  ['ABICode', 'integer'],
  ['Description', 'text'],
  ['RegistrationYear', 'integer'],
  ['ManufactureYearFrom', 'integer'],
  ['ManufactureYearTo', 'integer'],
  ['CarMake', 'composite'],
  ['CarModel', 'text'],
  ['BodyStyle', 'composite'],
  ['EngineSize', 'composite'],
  ['NumberOfDoors', 'composite'],
  ['Transmission', 'composite'],
  ['FuelType', 'composite'],
  ['MakeDescription', 'text'],
  ['ModelDescription', 'text'],
  ['Immobiliser', 'composite'],
  ['NumberOfSeats', 'composite'],
  ['IndicativeValue', 'text'],
  ['DriverSide', 'composite'],
];
