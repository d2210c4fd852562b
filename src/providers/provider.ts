// What an upstream provider is: something that can answer some operations for a registration by
// asking a service elsewhere (DVLA, DVSA, RDW, a RegCheck-compatible service). The chain in
// src/service decides the order, caches the answers, checks them as an imported record is checked
// (service/records.ts) and charges the caller; a provider only fetches and maps.

/** An HTTP request to an upstream, made through the shared, bounded client (keep-alive pool, size and time limits). */
export interface UpstreamRequest {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** The upstream's answer: its status, headers in lower case, and its body as text (already bounded in size). */
export interface UpstreamResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export type UpstreamHttp = (request: UpstreamRequest, signal: AbortSignal) => Promise<UpstreamResponse>;

/** What a provider is given for one fetch. */
export interface FetchContext {
  readonly http: UpstreamHttp;
  /** Aborted when the caller's time budget (UPSTREAM_TIMEOUT_MS) is spent. */
  readonly signal: AbortSignal;
  /** Which try of this call it is: 1, then 2 and 3 for the chain's retries (a trace's span says it). */
  readonly attempt?: number;
  /** When the caller's time budget ends (ms since the epoch, Date.now's clock); absent: only the signal bounds it. */
  readonly deadline?: number;
}

/**
 * A provider's answer. `record` is what an import line would hold for the operation: the
 * `vehicle` object (vehicleData keys plus any others, kept in vehicleJson) or, for UKMOT, the MOT
 * history object (docs/data.md). The chain checks it before it is cached or answered.
 */
export type ProviderAnswer =
  { readonly found: true; readonly record: Readonly<Record<string, unknown>> } | { readonly found: false };

/** Why an upstream could not answer. */
type FailureKind =
  /** The upstream said the registration is not valid for it (DVLA's 400): answered as INVALID_PARAMETER. */
  | 'invalid'
  /** Worth retrying (a time-out, a refused connection, 429, 500, 502, 503, 504). */
  | 'transient'
  /** Not worth retrying (bad credentials, a malformed or oversized answer, an unexpected status). */
  | 'permanent';

export class UpstreamFailure extends Error {
  constructor(
    readonly provider: string,
    readonly kind: FailureKind,
    message: string,
    /** Seconds the upstream asked us to wait (its Retry-After), when it gave one. */
    readonly retryAfterS?: number,
  ) {
    super(message);
    this.name = 'UpstreamFailure';
  }
}

export interface Provider {
  /** As named in PROVIDERS: dvla, dvsa, rdw, regcheck. */
  readonly name: string;
  /** Whether it can answer this operation (an operation name from contract/operations.ts). */
  answers(operation: string): boolean;
  /**
   * Fetches one registration (already normalised: upper case, no spaces) for an operation it
   * answers; `state` is '' unless the operation takes one. Throws UpstreamFailure.
   */
  fetch(operation: string, registration: string, state: string, ctx: FetchContext): Promise<ProviderAnswer>;
}

/** A provider whose upstream keeps an allowance it can be asked about (RegCheck's credits): exported as a metric. */
interface ReportsRemaining {
  /** What is left of the allowance. Throws UpstreamFailure. */
  remaining(ctx: FetchContext): Promise<number>;
}

export function reportsRemaining(p: Provider): p is Provider & ReportsRemaining {
  return typeof (p as Partial<ReportsRemaining>).remaining === 'function';
}
