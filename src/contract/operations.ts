// The operation catalogue: the one list of operations. Routing, the WSDL agreement check, the help
// page and the tests all derive from it; nothing else may hold a list of operations.

export type ResultKind = 'Vehicle' | 'UKMOTData';
export type StateParam = 'state' | 'State';
export type StateCountry = 'US' | 'CA' | 'AU';

export interface Operation {
  /** Operation name as it appears in the WSDL, the SOAP body and the HTTP path. */
  readonly name: string;
  /** Human-readable country or vehicle kind. */
  readonly country: string;
  /** Parameter names in WSDL order (case-sensitive). */
  readonly params: readonly string[];
  /** Parameters that must be present and non-empty. */
  readonly required: readonly string[];
  readonly result: ResultKind;
  /** For the three subdivision operations: the parameter name and the subdivision table. */
  readonly state?: { readonly param: StateParam; readonly country: StateCountry };
  /**
   * Each parameter name, under its own spelling and under its lower-case form, to its own spelling:
   * HTTP GET/POST match names ignoring case, as ASP.NET does (built once, so a request allocates
   * nothing for it when a name comes in its own spelling).
   */
  readonly paramsIgnoringCase: ReadonlyMap<string, string>;
}

/** Every name to itself and its lower-case form to it. */
export function namesIgnoringCase(names: readonly string[]): ReadonlyMap<string, string> {
  const map = new Map<string, string>();
  for (const n of names) {
    map.set(n.toLowerCase(), n);
    map.set(n, n);
  }
  return map;
}

function operation(op: Omit<Operation, 'paramsIgnoringCase'>): Operation {
  return { ...op, paramsIgnoringCase: namesIgnoringCase(op.params) };
}

function plain(name: string, country: string): Operation {
  return operation({
    name,
    country,
    params: ['RegistrationNumber', 'username'],
    required: ['RegistrationNumber', 'username'],
    result: 'Vehicle',
  });
}

function withState(name: string, country: string, param: StateParam, code: StateCountry): Operation {
  return operation({
    name,
    country,
    params: ['RegistrationNumber', param, 'username'],
    required: ['RegistrationNumber', param, 'username'],
    result: 'Vehicle',
    state: { param, country: code },
  });
}

export const OPERATIONS: readonly Operation[] = Object.freeze([
  plain('Check', 'United Kingdom'),
  plain('CheckMotorBikeUK', 'United Kingdom (motorbike)'),
  withState('CheckCanada', 'Canada', 'state', 'CA'),
  withState('CheckUSA', 'USA', 'State', 'US'),
  withState('CheckAustralia', 'Australia', 'State', 'AU'),
  plain('CheckNewZealand', 'New Zealand'),
  plain('CheckKazakhstan', 'Kazakhstan'),
  plain('CheckArgentina', 'Argentina'),
  plain('CheckSingapore', 'Singapore'),
  plain('CheckPortugal', 'Portugal'),
  plain('CheckFinland', 'Finland'),
  plain('CheckUkraine', 'Ukraine'),
  plain('CheckLebanon', 'Lebanon'),
  plain('CheckPoland', 'Poland'),
  plain('CheckCyprus', 'Cyprus'),
  plain('CheckChina', 'China'),
  plain('CheckNetherlands', 'Netherlands'),
  plain('CheckLithuania', 'Lithuania'),
  plain('CheckIndonesia', 'Indonesia'),
  plain('CheckSriLanka', 'Sri Lanka'),
  plain('CheckSlovenia', 'Slovenia'),
  plain('CheckSlovakia', 'Slovakia'),
  plain('CheckMalaysia', 'Malaysia'),
  plain('CheckColombia', 'Colombia'),
  plain('CheckRomania', 'Romania'),
  plain('CheckIreland', 'Ireland'),
  plain('CheckIceland', 'Iceland'),
  plain('CheckNigeria', 'Nigeria'),
  plain('CheckTunisia', 'Tunisia'),
  plain('CheckSouthAfrica', 'South Africa'),
  operation({
    name: 'UKMOT',
    country: 'United Kingdom (MOT test history)',
    params: ['RegistrationNumber', 'Model', 'username'],
    required: ['RegistrationNumber', 'username'],
    result: 'UKMOTData',
  }),
]);

const byName = new Map(OPERATIONS.map((op) => [op.name, op]));
const byLowerName = new Map(OPERATIONS.map((op) => [op.name.toLowerCase(), op]));

export function findOperation(name: string): Operation | undefined {
  return byName.get(name);
}

/** The operation whose name matches ignoring case, to suggest a correction. */
export function suggestOperation(name: string): Operation | undefined {
  return byLowerName.get(name.toLowerCase());
}
