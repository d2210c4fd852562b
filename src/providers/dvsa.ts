// DVSA MOT History API: GET {DVSA_URL}/v1/trade/vehicles/registration/{reg} with an OAuth 2.0
// client-credentials token (dvsa-token.ts) and X-API-Key. It answers UKMOT: the vehicle's make and
// model, its MOT tests as UKTest records (mapDvsa below, docs/upstream-rdw-dvsa.md), and the rest
// of the vehicle (colour, fuel, dates) as extendedInformation rows. The published quota is taken
// before every call, a token request and the retry after a refused token included (dvsa-quota.ts):
// a call over the per-second quota waits its turn within the lookup's deadline; when the quota
// cannot be had in time the call is not made and the chain is told when the quota frees. A token
// the API refuses (401, or 403 with the codes the API documents for an expired or missing token)
// is refreshed once and the call made again; any other 403 is our credentials refused.

import { Redis } from 'ioredis';
import { DVSA_QUOTA, DvsaQuota, type DvsaQuotaLimits } from './dvsa-quota';
import type { DvsaSettings } from '../config';
import type { ReadinessProbe } from '../ops/health';
import type { Logger } from '../ops/logger';
import { TokenSource } from './dvsa-token';
import { UpstreamFailure, type FetchContext, type Provider, type ProviderAnswer } from './provider';
import { failureForStatus, jsonBody } from './upstream-status';

/** DVSA_* as config.ts reads them. */
type DvsaConfig = Omit<DvsaSettings, 'quotaProcesses'> & { readonly quotaProcesses?: number };

interface DvsaDeps {
  /** Redis to share the quota through (REDIS_URL); null or absent: this process's memory. */
  readonly redisUrl?: string | null;
  readonly redisPrefix?: string;
  /** The clock tokens expire by (tests move it). */
  readonly now?: () => number;
  /** The quota (tests make it small). */
  readonly quota?: DvsaQuotaLimits;
  /** Where the quota's failing over to the local share is told. */
  readonly log?: Pick<Logger, 'warn'> | null;
}

type Json = Record<string, unknown>;

/** How long the first calls wait for Redis before counting in this process's memory instead. */
const CONNECT_WAIT_MS = 3000;
/** How long a quota command may wait for Redis before the quota fails over to this process's share. */
const QUOTA_REDIS_TIMEOUT_MS = 200;

const FAILURE = new Set(['FAIL', 'MAJOR', 'DANGEROUS', 'PRS']);

/** The API's error codes for a token it does not take: MOTH-FB-02 expired, MOTH-FB-04 missing. */
const TOKEN_CODES = new Set(['MOTH-FB-02', 'MOTH-FB-04']);

/** Whether a 403's body says the token (not the API key or a permission) is what was refused. */
export function refusesToken(body: string): boolean {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return false;
  }
  if (typeof json !== 'object' || json === null) return false;
  const { errorCode, errorMessage, message } = json as Json;
  if (typeof errorCode === 'string') return TOKEN_CODES.has(errorCode.trim().toUpperCase());
  const said = typeof errorMessage === 'string' ? errorMessage : typeof message === 'string' ? message : '';
  return /\baccess token\b/i.test(said) && /\b(expired|missing|invalid)\b/i.test(said);
}

const text = (v: unknown): string | undefined =>
  typeof v === 'string' && v.trim() !== ''
    ? v.trim()
    : typeof v === 'number' && Number.isFinite(v)
      ? String(v)
      : undefined;

const RESULTS: Readonly<Record<string, string>> = { PASSED: 'Pass', FAILED: 'Fail' };

/** One DVSA motTests entry as a UKTest record (docs/data.md). */
function mapDvsaTest(t: Json): Json {
  const out: Json = {};
  const completed = text(t.completedDate);
  if (completed !== undefined) out.TestDate = /^\d{4}-\d{2}-\d{2}/.test(completed) ? completed.slice(0, 10) : completed;
  const expiry = text(t.expiryDate);
  if (expiry !== undefined) out.ExpiryDate = expiry;
  const result = text(t.testResult);
  if (result !== undefined) out.Result = RESULTS[result.toUpperCase()] ?? result;
  const odometer = text(t.odometerValue);
  const unit = text(t.odometerUnit);
  if (odometer !== undefined) out.Odometer = unit === undefined ? odometer : `${odometer} ${unit.toLowerCase()}`;
  const number = text(t.motTestNumber);
  if (number !== undefined) out.TestNumber = number;
  const failures: string[] = [];
  const advisories: string[] = [];
  for (const d of Array.isArray(t.defects) ? (t.defects as unknown[]) : []) {
    if (typeof d !== 'object' || d === null) continue;
    const defect = d as Json;
    const what = text(defect.text);
    if (what === undefined) continue;
    const type = (text(defect.type) ?? '').toUpperCase();
    // ADVISORY and MINOR are advisories; a type DVSA may add later is kept as one too, not lost.
    if (FAILURE.has(type)) failures.push(what);
    else advisories.push(what);
  }
  out.FailureReasons = failures;
  out.Advisories = advisories;
  return out;
}

const EXTENDED: ReadonlyArray<readonly [string, string]> = [
  ['primaryColour', 'Colour'],
  ['fuelType', 'FuelType'],
  ['engineSize', 'EngineSize'],
  ['firstUsedDate', 'FirstUsedDate'],
  ['registrationDate', 'RegistrationDate'],
  ['manufactureDate', 'ManufactureDate'],
  ['motTestDueDate', 'MotTestDueDate'],
  ['hasOutstandingRecall', 'OutstandingRecall'],
];

/** A DVSA vehicle (the 200 answer) as an MOT history record (docs/data.md): make, model, tests, extendedInformation. */
function mapDvsa(v: Json): Json {
  const out: Json = {};
  const make = text(v.make);
  if (make !== undefined) out.make = make;
  const model = text(v.model);
  if (model !== undefined) out.model = model;
  const tests = Array.isArray(v.motTests) ? (v.motTests as unknown[]) : [];
  out.tests = tests.filter((t): t is Json => typeof t === 'object' && t !== null && !Array.isArray(t)).map(mapDvsaTest);
  const ext: string[][] = [];
  for (const [from, label] of EXTENDED) {
    const value = typeof v[from] === 'boolean' ? String(v[from]) : text(v[from]);
    if (value !== undefined) ext.push([label, value]);
  }
  out.extendedInformation = ext;
  return out;
}

export class DvsaProvider implements Provider {
  readonly name = 'dvsa';
  readonly tokens: TokenSource;
  private readonly quota: DvsaQuota;
  private readonly redis: Redis | null;
  private readonly connected: Promise<void>;
  private isConnected = false;

  constructor(
    private readonly config: DvsaConfig,
    deps: DvsaDeps = {},
  ) {
    this.tokens = new TokenSource(config, deps.now, (wait) => this.take(wait));
    this.redis = deps.redisUrl
      ? new Redis(deps.redisUrl, {
          enableOfflineQueue: false,
          maxRetriesPerRequest: 1,
          commandTimeout: QUOTA_REDIS_TIMEOUT_MS,
          lazyConnect: false,
        })
      : null;
    // Errors reach the quota's insurance limiter; the connection's own error events are not news.
    this.redis?.on('error', () => undefined);
    const redis = this.redis;
    // The first calls wait (a little) for the connection, so that they count in the shared quota.
    this.connected = redis
      ? new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, CONNECT_WAIT_MS);
          redis.once('ready', () => {
            clearTimeout(timer);
            resolve();
          });
        })
      : Promise.resolve();
    this.quota = new DvsaQuota(
      deps.quota ?? DVSA_QUOTA,
      this.redis,
      deps.redisPrefix ?? 'reglookup:',
      config.quotaProcesses ?? 1,
      deps.log ?? null,
    );
  }

  answers(operation: string): boolean {
    return operation === 'UKMOT';
  }

  async fetch(_operation: string, registration: string, _state: string, ctx: FetchContext): Promise<ProviderAnswer> {
    if (!this.isConnected) await this.untilConnected(ctx);
    // The token first: its request takes a call from the quota of its own, and a call's place in
    // the quota is not held while the token is fetched (the API would see those calls late, at once).
    await this.tokens.get(ctx.http, ctx);
    await this.take(ctx);
    return this.quota.inBurst(() => this.call(registration, ctx));
  }

  /**
   * Waits for the first connection to Redis, so that the call counts in the shared quota: at most half of what is left
   * of the lookup's budget (a Redis that hangs at start-up must not take it all).
   */
  private async untilConnected(ctx: FetchContext): Promise<void> {
    const left = ctx.deadline === undefined ? CONNECT_WAIT_MS : (ctx.deadline - Date.now()) / 2;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.connected.then(() => (this.isConnected = true)),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, Math.min(CONNECT_WAIT_MS, left))))),
    ]);
    clearTimeout(timer);
  }

  /** One call from the quota, waited for within the deadline; a transient failure saying when it frees otherwise. */
  private async take(wait: { readonly signal?: AbortSignal; readonly deadline?: number }): Promise<void> {
    const refused = await this.quota.take(wait.deadline, wait.signal);
    if (refused) {
      throw new UpstreamFailure(
        this.name,
        'transient',
        `the DVSA quota (${refused.which === 'second' ? 'per second' : 'per day'}) is spent for now`,
        refused.retryAfterS,
      );
    }
  }

  private async call(registration: string, ctx: FetchContext): Promise<ProviderAnswer> {
    let token = await this.tokens.get(ctx.http, ctx);
    let res = await this.get(registration, token, ctx);
    if (res.status === 401 || (res.status === 403 && refusesToken(res.body))) {
      // The token went stale before we thought (expired, revoked, a clock apart): one refresh (its
      // request takes a call from the quota, once however many calls held the token), one retry.
      this.tokens.invalidate(token);
      token = await this.tokens.get(ctx.http, ctx);
      await this.take(ctx);
      res = await this.get(registration, token, ctx);
    }
    const what = 'the DVSA MOT History API';
    if (res.status === 404) return { found: false };
    if (res.status === 400)
      throw new UpstreamFailure(this.name, 'invalid', 'the DVSA says the registration number is not valid');
    if (res.status !== 200) throw failureForStatus(this.name, res.status, res.headers, what);
    const body = jsonBody(this.name, what, res.body);
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new UpstreamFailure(this.name, 'permanent', `${what} answered JSON that is not a vehicle object`);
    return { found: true, record: mapDvsa(body as Json) };
  }

  private get(registration: string, token: string, ctx: FetchContext) {
    return ctx.http(
      {
        method: 'GET',
        url: `${this.config.url}/v1/trade/vehicles/registration/${encodeURIComponent(registration)}`,
        headers: { authorization: `Bearer ${token}`, 'x-api-key': this.config.apiKey, accept: 'application/json' },
      },
      ctx.signal,
    );
  }

  /**
   * With Redis, /readyz's check `dvsa-quota`: degraded (still ready) while the quota is counted in this process's share
   * because Redis fails. Without Redis: none.
   */
  readinessProbe(): ReadinessProbe | null {
    if (!this.redis) return null;
    return {
      name: 'dvsa-quota',
      check: async () => {
        if (this.quota.degraded()) throw new Error('Redis is failing');
      },
      degraded:
        "Redis is failing: the DVSA quota is counted in each process's share of it (DVSA_QUOTA_PROCESSES), in memory",
    };
  }

  async close(): Promise<void> {
    this.quota.close();
    this.redis?.disconnect();
  }
}

/** The `dvsa` provider. */
export function createDvsaProvider(config: DvsaConfig, deps: DvsaDeps = {}): DvsaProvider {
  return new DvsaProvider(config, deps);
}
