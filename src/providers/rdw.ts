// RDW Open Data (Socrata), the Dutch register, open to all: GET {RDW_URL}/resource/m9d7-ebf2.json
// ?kenteken=XX999X (registered vehicles), then, for a plate it holds, the fuel data set 8ys7-d773
// for the same plate (a plate it does not hold costs one call, not two); an application token
// (RDW_APP_TOKEN, optional) goes in X-App-Token and only raises the throttling limits. An empty
// array is not found. It answers CheckNetherlands, mapped by rdw-map.ts.

import type { RdwSettings } from '../config';
import type { FetchContext, Provider, ProviderAnswer, UpstreamHttp } from './provider';
import { UpstreamFailure } from './provider';
import { mapRdw, type RdwRow } from './rdw-map';
import { failureForStatus, jsonBody } from './upstream-status';

/** RDW_URL and RDW_APP_TOKEN as config.ts reads them. */
type RdwConfig = RdwSettings;

const RDW_VEHICLES = 'm9d7-ebf2';
const RDW_FUEL = '8ys7-d773';

/** A Dutch plate as RDW writes a kenteken: letters and digits, upper case, no dashes. */
const KENTEKEN_RE = /^[A-Z0-9]{1,10}$/;

class RdwProvider implements Provider {
  readonly name = 'rdw';

  constructor(private readonly config: RdwConfig) {}

  answers(operation: string): boolean {
    return operation === 'CheckNetherlands';
  }

  async fetch(_operation: string, registration: string, _state: string, ctx: FetchContext): Promise<ProviderAnswer> {
    // Normalised registrations have no spaces, dashes or dots; anything else is no kenteken.
    if (!KENTEKEN_RE.test(registration)) return { found: false };
    const vehicles = await this.rows(ctx.http, RDW_VEHICLES, registration, ctx.signal);
    const row = vehicles.find((r) => typeof r.kenteken !== 'string' || r.kenteken.toUpperCase() === registration);
    if (!row) return { found: false };
    const fuel = await this.rows(ctx.http, RDW_FUEL, registration, ctx.signal);
    return { found: true, record: mapRdw(row, fuel) };
  }

  private async rows(http: UpstreamHttp, dataset: string, kenteken: string, signal: AbortSignal): Promise<RdwRow[]> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.config.appToken) headers['x-app-token'] = this.config.appToken;
    const res = await http(
      {
        method: 'GET',
        url: `${this.config.url}/resource/${dataset}.json?kenteken=${encodeURIComponent(kenteken)}`,
        headers,
      },
      signal,
    );
    const what = `RDW (${dataset})`;
    if (res.status !== 200) throw failureForStatus(this.name, res.status, res.headers, what);
    const body = jsonBody(this.name, what, res.body);
    if (!Array.isArray(body) || body.some((r) => typeof r !== 'object' || r === null || Array.isArray(r))) {
      throw new UpstreamFailure(this.name, 'permanent', `${what} answered JSON that is not an array of rows`);
    }
    return body as RdwRow[];
  }
}

/** The `rdw` provider. */
export function createRdwProvider(config: RdwConfig): Provider {
  return new RdwProvider(config);
}
