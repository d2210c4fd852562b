// DVLA Vehicle Enquiry Service: POST {DVLA_URL}/vehicle-enquiry/v1/vehicles with the key in
// x-api-key and {"registrationNumber": "..."}. It answers Check (UK cars; the service covers every
// vehicle the DVLA registers, so CheckMotorBikeUK too). Its record maps to the Vehicle result as
// docs/upstream.md's table says; what it lacks (model, body style, doors, seats, ...) is left out,
// which the answer writes as an empty (nil) element; the whole DVLA record is kept under "dvla".

import { failureForStatus, jsonBody, retryAfterOf } from './upstream-status';
import { UpstreamFailure, type FetchContext, type Provider, type ProviderAnswer } from './provider';

interface DvlaOptions {
  readonly url: string;
  readonly apiKey: string;
}

const OPERATIONS = new Set(['Check', 'CheckMotorBikeUK']);

type Json = Record<string, unknown>;

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
const whole = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) ? v : undefined);

/** A DVLA record (the 200 answer's object) as a vehicle object in the import format (docs/data.md). */
function mapDvla(d: Json): Json {
  const make = text(d.make);
  const colour = text(d.colour);
  const fuel = text(d.fuelType);
  const cc = whole(d.engineCapacity);
  const year = whole(d.yearOfManufacture);
  const firstReg = text(d.monthOfFirstRegistration);
  const regYear = firstReg && /^\d{4}-\d{2}$/.test(firstReg) ? Number(firstReg.slice(0, 4)) : undefined;
  const out: Json = {};
  const description = [make, cc !== undefined ? `${cc}cc` : undefined].filter((x) => x !== undefined).join(' ');
  if (description !== '') out.Description = description;
  if (regYear !== undefined) out.RegistrationYear = regYear;
  if (year !== undefined) {
    out.ManufactureYearFrom = year;
    out.ManufactureYearTo = year;
  }
  if (make !== undefined) {
    out.CarMake = { CurrentTextValue: make };
    out.MakeDescription = { CurrentValue: null, CurrentTextValue: make };
  }
  if (cc !== undefined) out.EngineSize = { CurrentValue: cc, CurrentTextValue: `${cc}cc` };
  if (fuel !== undefined) out.FuelType = { CurrentValue: null, CurrentTextValue: fuel };
  if (colour !== undefined) out.Colour = colour;
  const co2 = whole(d.co2Emissions);
  if (co2 !== undefined) out.Co2Emissions = co2;
  for (const [from, to] of [
    ['taxStatus', 'TaxStatus'],
    ['taxDueDate', 'TaxDueDate'],
    ['motStatus', 'MotStatus'],
    ['motExpiryDate', 'MotExpiryDate'],
    ['monthOfFirstRegistration', 'FirstRegistered'],
  ] as const) {
    const v = text(d[from]);
    if (v !== undefined) out[to] = v;
  }
  out.dvla = d;
  return out;
}

export class DvlaProvider implements Provider {
  readonly name = 'dvla';

  constructor(private readonly options: DvlaOptions) {}

  answers(operation: string): boolean {
    return OPERATIONS.has(operation);
  }

  async fetch(_operation: string, registration: string, _state: string, ctx: FetchContext): Promise<ProviderAnswer> {
    const res = await ctx.http(
      {
        method: 'POST',
        url: `${this.options.url}/vehicle-enquiry/v1/vehicles`,
        headers: { 'x-api-key': this.options.apiKey, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ registrationNumber: registration }),
      },
      ctx.signal,
    );
    if (res.status === 404) return { found: false };
    if (res.status === 400)
      throw new UpstreamFailure(this.name, 'invalid', 'the DVLA says the registration number is not valid');
    if (res.status === 429)
      throw new UpstreamFailure(
        this.name,
        'transient',
        'the DVLA refused the call for now (429, over its quota)',
        retryAfterOf(res.headers['retry-after']),
      );
    if (res.status !== 200) throw failureForStatus(this.name, res.status, res.headers, 'the DVLA');
    const body = jsonBody(this.name, 'the DVLA', res.body);
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new UpstreamFailure(this.name, 'permanent', 'the DVLA answered JSON that is not a vehicle object');
    return { found: true, record: mapDvla(body as Json) };
  }
}
