// The service object every transport calls: (operation, raw parameters) -> result tree, or a
// LookupError. It never sees XML or HTTP; transports decode into RawParams and encode the result.
// The result is the stored record's payload: the transport writes the answer from it
// (transport/answers.ts, through resultNodes).

import type { Operation, ResultKind } from '../contract/operations';
import type { Accounts, Admitted, Caller } from '../accounts/accounts';
import type { ChargeCaller, FoundRecord, RecordKey, VehicleStore } from '../store/store';
import { CONTROL_RE, MAX_PARAM_CHARS } from '../core/params';
import { LookupError, quote } from './errors';
import { normalizeRegistration, normalizeState } from './normalize';
import { modelMatches, parseMot } from './records';
import { ImportTimesCache, withProvenance } from './provenance';
import { isSandboxPlate, sandboxPayload } from './sandbox';
import type { UpstreamCaller, UpstreamChain } from './upstream';

/** A lookup's answer: the found record, for the transport to write (see resultNodes), and where it came from. */
export interface LookupResult {
  readonly kind: ResultKind;
  /** The record's JSON text; a Vehicle's with AnswerSource and AnswerAsOf added (provenance.ts): vehicleJson. */
  readonly payload: string;
  /** Where the answer came from: `import`, `cache`, `sandbox`, or the upstream provider that answered now. */
  readonly source: string;
  /** When the answer is as of (ms since the epoch); null when not known (records imported before times were kept). */
  readonly asOf: number | null;
  /** Seconds since an answer served from the upstream cache was fetched (HTTP's Age); absent for any other. */
  readonly ageS?: number;
}

/** What find() found: the payload and its provenance, as LookupResult gives them. */
type Found = Omit<LookupResult, 'kind'>;

/**
 * Parameters as a transport decoded them: a string, repeated values as an array, or (from SOAP)
 * an object when the element carried attributes ({$value}) or child elements.
 */
export type RawParams = Readonly<Record<string, unknown>>;

/**
 * What a lookup tells its caller beside the answer, for the access log: the transport passes its
 * request context (transport/context.ts), which has these fields; nothing is allocated for it.
 */
export interface CallNotes {
  username?: string;
  /** The name of the caller's account, when it has one (for the access log). */
  account?: string;
  sandbox?: boolean;
  /** Where the answer came from: store, cache, or the provider that answered (dvla, regcheck, ...). */
  source?: string;
  /** The caller's connection, for the charge: no charge is kept once it is destroyed (the caller left). */
  readonly socket?: ChargeCaller;
}

interface LookupOptions {
  /** SANDBOX=on: the sandbox registrations (service/sandbox.ts) answer before the store is asked. */
  readonly sandbox?: boolean;
  /** The upstream providers (PROVIDERS), asked for what the store does not hold; none: the store answers alone. */
  readonly upstream?: UpstreamChain;
}

/** Who asks for a parameter: an operation, or another call taking parameters (the credits endpoint). */
type ParamsOwner = Pick<Operation, 'name' | 'required'>;

export type { Caller } from '../accounts/accounts';

/** A parameter's value, trimmed; undefined for an optional one not given. Throws for what is not allowed. */
export function paramValue(op: ParamsOwner, raw: RawParams, name: string): string | undefined {
  let v = raw[name];
  if (Array.isArray(v)) {
    if (v.length > 1)
      throw new LookupError('INVALID_PARAMETER', `Parameter '${name}' was given ${v.length} times; give it once`);
    v = v[0];
  }
  if (v !== null && typeof v === 'object') {
    const inner = (v as Record<string, unknown>).$value;
    if (typeof inner !== 'string' && typeof inner !== 'number') {
      throw new LookupError('INVALID_PARAMETER', `Parameter '${name}' must be text, not nested elements`);
    }
    v = inner;
  }
  // Only text and numbers reach here: an object was unwrapped above, or refused.
  const scalar = v as string | number | null | undefined;
  const text = scalar === undefined || scalar === null ? '' : String(scalar).trim();
  if (text === '') {
    if (!op.required.includes(name)) return undefined;
    const near = Object.keys(raw).find((k) => k !== name && k.toLowerCase() === name.toLowerCase());
    // Only SOAP can get here with a near miss: HTTP GET/POST and JSON take names ignoring case.
    const hint = near ? ` (got '${near}'; parameter names are case-sensitive in SOAP)` : '';
    const what = v === undefined || v === null ? 'Missing required parameter' : 'Empty required parameter';
    throw new LookupError('MISSING_PARAMETER', `${what} '${name}' for ${op.name}${hint}`);
  }
  if (text.length > MAX_PARAM_CHARS && [...text].length > MAX_PARAM_CHARS) {
    throw new LookupError('INVALID_PARAMETER', `Parameter '${name}' is longer than ${MAX_PARAM_CHARS} characters`);
  }
  if (CONTROL_RE.test(text))
    throw new LookupError('INVALID_PARAMETER', `Parameter '${name}' contains control characters`);
  return text;
}

export class LookupService {
  private readonly sandbox: boolean;
  private readonly upstream: UpstreamChain | null;
  private readonly times: ImportTimesCache;

  constructor(
    private readonly store: VehicleStore,
    private readonly accounts: Accounts,
    options: LookupOptions = {},
  ) {
    this.sandbox = options.sandbox === true;
    this.upstream = options.upstream ?? null;
    this.times = new ImportTimesCache(store);
  }

  /**
   * The record's payload and where it came from: the store (imported records always win), else the
   * upstream chain (its cache, then its providers), else null. An upstream that cannot answer throws
   * SERVICE_UNAVAILABLE (nothing is charged) or, when it finds the registration not valid, INVALID_PARAMETER.
   * `stored`: what the store already answered (accounts.findCharged), undefined when not asked yet. `fetchFor`: who
   * the upstream's fetch would be for (UpstreamCaller), its reservation released by lookup once charged.
   */
  private async find(
    op: Operation,
    key: RecordKey,
    stored: FoundRecord | null | undefined,
    fetchFor: UpstreamCaller | undefined,
  ): Promise<Found | null> {
    const found = stored === undefined ? await this.store.get(key) : stored;
    if (found !== null) {
      const t = this.times.of(op.name);
      return { payload: found.payload, source: 'import', asOf: typeof t === 'number' || t === null ? t : await t };
    }
    if (this.upstream === null || !this.upstream.answers(op.name)) return null;
    const answer = await this.upstream.lookup(op, key, fetchFor);
    if (answer.payload === null) return null;
    const { payload, source, fetchedAt } = answer;
    if (source !== 'cache') return { payload, source, asOf: fetchedAt };
    return { payload, source, asOf: fetchedAt, ageS: Math.max(0, Math.floor((Date.now() - fetchedAt) / 1000)) };
  }

  /** The caller (its address) comes from the transport: transport/forwarded.ts callerOf(req, trust). */
  async lookup(op: Operation, raw: RawParams, caller: Caller, notes?: CallNotes): Promise<LookupResult> {
    const values = new Map<string, string | undefined>();
    for (const name of op.params) values.set(name, paramValue(op, raw, name));
    const regText = values.get('RegistrationNumber') as string;
    const username = values.get('username') as string;
    if (notes) notes.username = username;

    const reg = normalizeRegistration(regText);
    if (!reg.ok) throw new LookupError('INVALID_PARAMETER', `RegistrationNumber ${quote(regText)} ${reg.reason}`);
    let state = '';
    if (op.state) {
      const given = values.get(op.state.param) as string;
      const st = normalizeState(op.state.country, given);
      if (!st.ok) throw new LookupError('INVALID_PARAMETER', `${op.state.param} ${quote(given)} ${st.reason}`);
      state = st.value;
    }

    if (this.sandbox && isSandboxPlate(reg.value)) {
      if (notes) notes.sandbox = true;
      const payload = await sandboxPayload(op, reg.value, values.get('Model'));
      return answerOf(op, { payload, source: 'sandbox', asOf: Date.now() });
    }

    // Refusals come before the lookup and cost nothing; the credit and the day's count are taken
    // after it, only when it found its record (accounts/accounts.ts).
    const admitted = await this.accounts.admit(username, caller, notes);
    const key = { operation: op.name, registration: reg.value, state };
    const model = values.get('Model');
    // A metered lookup whose answer needs no further check reads its record and takes its charge in
    // one step where the store can (one round trip on PostgreSQL); a model given to UKMOT must match
    // before anything is charged.
    const stored = model === undefined ? await this.accounts.findCharged(admitted, key, notes?.socket) : undefined;
    const charged = stored !== undefined && stored !== null;
    // Only a lookup an upstream may be asked to answer is held to the caller's bound on fetches in flight
    // (UpstreamCaller); the fetch reserved for it is released once its answer is charged, or refused.
    const fetchFor: UpstreamCaller | undefined =
      this.upstream !== null && !charged ? { username, credits: this.accounts.creditsForFetch(admitted) } : undefined;
    try {
      return await this.answer(op, key, stored, fetchFor, admitted, charged, model, regText, notes);
    } finally {
      fetchFor?.release?.();
    }
  }

  /** lookup()'s second half: the record found, checked and charged. */
  private async answer(
    op: Operation,
    key: RecordKey,
    stored: FoundRecord | null | undefined,
    fetchFor: UpstreamCaller | undefined,
    admitted: Admitted,
    charged: boolean,
    model: string | undefined,
    regText: string,
    notes: CallNotes | undefined,
  ): Promise<LookupResult> {
    const state = key.state;
    const found = await this.find(op, key, stored, fetchFor);
    // The access log names an imported record's source as the store.
    if (notes && found) notes.source = found.source === 'import' ? 'store' : found.source;
    const where = state ? `${op.country}, ${state}` : op.country;
    if (found === null) {
      this.accounts.record(admitted, op.name, false);
      throw new LookupError('VEHICLE_NOT_FOUND', `No vehicle found for registration ${quote(regText)} (${where})`);
    }
    if (op.result === 'UKMOTData' && model !== undefined && !modelMatches(parseMot(found.payload), model)) {
      this.accounts.record(admitted, op.name, false);
      throw new LookupError(
        'VEHICLE_NOT_FOUND',
        `No vehicle found for registration ${quote(regText)} with model ${quote(model)} (${where})`,
      );
    }
    if (!charged) await this.accounts.charge(admitted, op.name, notes?.socket);
    this.accounts.record(admitted, op.name, true);
    return answerOf(op, found);
  }
}

/**
 * The answer to give: a Vehicle's payload says its provenance in vehicleJson; UKMOTData has no vehicleJson. Written
 * out field by field, one shape for every answer: a spread of `found` made the server's peak memory grow under load.
 */
function answerOf(op: Operation, found: Found): LookupResult {
  const payload = op.result === 'Vehicle' ? withProvenance(found.payload, found.source, found.asOf) : found.payload;
  return { kind: op.result, payload, source: found.source, asOf: found.asOf, ageS: found.ageS };
}
