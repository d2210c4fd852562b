// UK vehicles (Check, CheckMotorBikeUK) from the DVLA and the DVSA together, when PROVIDERS lists
// both (registry.ts). The DVLA's Vehicle Enquiry Service has make, colour, engine, fuel, tax and
// MOT status but no model; the DVSA's MOT History has the model, its colour, engine size, fuel and
// the dates of first use and registration. Both are asked at once, on the caller's one time budget
// (UPSTREAM_TIMEOUT_MS, the signal both calls share), and their fields merged into one record: the
// DVLA's where it has them (the register of record), the DVSA's for what the DVLA lacks, and
// `Sources` saying which source gave which field. The chain sees one provider, named as the
// DVLA's: one breaker, one charge, one cache entry. Either source alone still answers; the record
// then says which one did not (`SourcesUnanswered`). The DVSA's answer is taken from its UKMOT
// record (dvsa.ts), so the DVSA provider keeps its one request, token and quota.

import { UpstreamFailure, type FetchContext, type Provider, type ProviderAnswer } from './provider';

type Json = Record<string, unknown>;

/** What one source gave: its record, its not-found, or its failure. */
type Outcome = { record: Json } | 'not found' | UpstreamFailure;

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
const yearOf = (date: string | undefined): number | undefined =>
  date !== undefined && /^\d{4}-\d{2}/.test(date) ? Number(date.slice(0, 4)) : undefined;

/** The DVSA's vehicle, read back from its UKMOT record: make, model and the extendedInformation rows by label. */
function dvsaVehicle(mot: Json): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { make: text(mot.make), model: text(mot.model) };
  for (const row of Array.isArray(mot.extendedInformation) ? (mot.extendedInformation as unknown[]) : []) {
    if (Array.isArray(row) && typeof row[0] === 'string') out[row[0]] = text(row[1]);
  }
  return out;
}

/** The record's fields the DVSA fills, each with its source; DVLA fields already in `out` are kept. */
function fillFromDvsa(out: Json, sources: Record<string, string>, v: Record<string, string | undefined>): void {
  const put = (key: string, value: unknown) => {
    if (value === undefined || Object.hasOwn(out, key)) return;
    out[key] = value;
    sources[key] = 'dvsa';
  };
  const model = v.model;
  if (model !== undefined) {
    const make = text((out.CarMake as Json | undefined)?.CurrentTextValue) ?? v.make;
    out.Description = [make, model].filter((x) => x !== undefined).join(' ');
    sources.Description = sources.CarMake === 'dvla' ? 'dvla+dvsa' : 'dvsa';
    put('CarModel', { CurrentTextValue: model });
    put('ModelDescription', { CurrentValue: null, CurrentTextValue: model });
  }
  if (v.make !== undefined) {
    put('CarMake', { CurrentTextValue: v.make });
    put('MakeDescription', { CurrentValue: null, CurrentTextValue: v.make });
  }
  put('Description', v.make);
  put('RegistrationYear', yearOf(v.RegistrationDate ?? v.FirstUsedDate));
  put('ManufactureYearFrom', yearOf(v.ManufactureDate));
  put('ManufactureYearTo', yearOf(v.ManufactureDate));
  const cc = v.EngineSize !== undefined && /^\d{1,6}$/.test(v.EngineSize) ? Number(v.EngineSize) : undefined;
  put('EngineSize', cc === undefined ? undefined : { CurrentValue: cc, CurrentTextValue: `${cc}cc` });
  put('FuelType', v.FuelType === undefined ? undefined : { CurrentValue: null, CurrentTextValue: v.FuelType });
  put('Colour', v.Colour);
  put('FirstRegistrationDate', v.RegistrationDate);
  put('FirstUsedDate', v.FirstUsedDate);
  put('ManufactureDate', v.ManufactureDate);
  put('MotTestDueDate', v.MotTestDueDate);
  put('OutstandingRecall', v.OutstandingRecall);
}

/** One record from the DVLA's (mapDvla's) and the DVSA's (UKMOT) records, either of which may be missing. */
function mergeUk(dvla: Json | null, dvsaMot: Json | null, unanswered: Record<string, string>): Json {
  const out: Json = {};
  const sources: Record<string, string> = {};
  for (const [key, value] of Object.entries(dvla ?? {})) {
    if (key === 'dvla') continue;
    out[key] = value;
    sources[key] = 'dvla';
  }
  if (dvsaMot) fillFromDvsa(out, sources, dvsaVehicle(dvsaMot));
  out.Sources = sources;
  if (Object.keys(unanswered).length > 0) out.SourcesUnanswered = unanswered;
  if (dvla && Object.hasOwn(dvla, 'dvla')) out.dvla = dvla.dvla;
  return out;
}

function settle(result: PromiseSettledResult<ProviderAnswer>, provider: string): Outcome {
  if (result.status === 'fulfilled') return result.value.found ? { record: { ...result.value.record } } : 'not found';
  const e: unknown = result.reason;
  return e instanceof UpstreamFailure ? e : new UpstreamFailure(provider, 'permanent', 'it failed unexpectedly');
}

/** Both sources failed (or the DVLA failed and the DVSA has no record): one failure saying both. */
function bothFailed(dvla: Outcome, dvsa: Outcome): UpstreamFailure {
  const failures = [dvla, dvsa].filter((o): o is UpstreamFailure => o instanceof UpstreamFailure);
  const kind = failures.some((f) => f.kind === 'invalid')
    ? 'invalid'
    : failures.some((f) => f.kind === 'transient')
      ? 'transient'
      : 'permanent';
  const waits = failures.map((f) => f.retryAfterS).filter((s): s is number => s !== undefined);
  const message = failures.map((f) => `${f.provider}: ${f.message}`).join('; ');
  return new UpstreamFailure('dvla', kind, message, waits.length > 0 ? Math.max(...waits) : undefined);
}

export class UkVehicleProvider implements Provider {
  readonly name: string;

  constructor(
    private readonly dvla: Provider,
    private readonly dvsa: Provider,
  ) {
    this.name = dvla.name;
  }

  answers(operation: string): boolean {
    return this.dvla.answers(operation);
  }

  async fetch(operation: string, registration: string, state: string, ctx: FetchContext): Promise<ProviderAnswer> {
    const [a, b] = await Promise.allSettled([
      this.dvla.fetch(operation, registration, state, ctx),
      this.dvsa.fetch('UKMOT', registration, '', ctx),
    ]);
    const dvla = settle(a, this.dvla.name);
    const dvsa = settle(b, this.dvsa.name);
    const found = (o: Outcome): o is { record: Json } => typeof o === 'object' && !(o instanceof UpstreamFailure);
    if (!found(dvla) && !found(dvsa)) {
      // The DVLA is the register: its not-found stands. Anything else that found nothing is a failure.
      if (dvla === 'not found') return { found: false };
      if (dvla instanceof UpstreamFailure && dvla.kind === 'invalid') throw dvla;
      throw bothFailed(dvla, dvsa);
    }
    const unanswered: Record<string, string> = {};
    if (!found(dvla)) unanswered.dvla = dvla === 'not found' ? 'not found' : 'failed';
    if (!found(dvsa)) unanswered.dvsa = dvsa === 'not found' ? 'not found' : 'failed';
    return {
      found: true,
      record: mergeUk(found(dvla) ? dvla.record : null, found(dvsa) ? dvsa.record : null, unanswered),
    };
  }
}
