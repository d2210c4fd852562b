// Any RegCheck-compatible service (the public one, or another reglookup) over its HTTP GET binding:
// GET {REGCHECK_URL}/api/reg.asmx/{Op}?RegistrationNumber=..&username=..[&state=..]. It answers
// every operation of the catalogue. Its XML answer is read with bounds (the HTTP client caps its
// size; a DTD, an entity declaration or a processing instruction past the declaration is refused,
// nothing is expanded but the five predefined entities and character references), and only the
// elements that carry the record are taken: vehicleJson for a Vehicle, Json,
// ExtendedInformationJson and taxDate for UKMOTData, then made fit for the contract as the public
// service writes them (regcheck-normalize.ts). Its error lines ("CODE: message", the X-Error-Code
// header a reglookup sends, or the public service's own texts) map back to our codes.

import { findOperation, OPERATIONS } from '../contract/operations';
import { normalizeRegcheckMot, normalizeRegcheckVehicle } from './regcheck-normalize';
import { parseUpstreamJson } from './http';
import { failureForStatus, retryAfterOf } from './upstream-status';
import { UpstreamFailure, type FetchContext, type Provider, type ProviderAnswer } from './provider';

interface RegcheckOptions {
  readonly url: string;
  readonly username: string;
}

const FORBIDDEN = /<!DOCTYPE|<!ENTITY|<!\[CDATA\[|<\?(?!xml[\s?])/i;
const ENTITY = /&(?:(amp|lt|gt|quot|apos)|#(\d{1,7})|#x([0-9a-fA-F]{1,6}));|&/g;
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** XML text with its references resolved; an undefined entity or a bare '&' is refused. */
function xmlText(raw: string): string {
  return raw.replace(ENTITY, (m, name: string | undefined, dec: string | undefined, hex: string | undefined) => {
    if (name) return NAMED[name];
    const code = dec !== undefined ? Number(dec) : hex !== undefined ? parseInt(hex, 16) : NaN;
    if (!Number.isFinite(code) || code > 0x10ffff) throw new Error(`bad reference ${m}`);
    return String.fromCodePoint(code);
  });
}

/**
 * The text of the first element named `name` (any prefix, no child elements), or undefined when it
 * is absent or nil; one linear pass of indexOf, no backtracking.
 */
function elementText(xml: string, name: string): string | undefined {
  const open = new RegExp(`<(?:[A-Za-z_][\\w.-]*:)?${name}(\\s[^<>]*)?(/?)>`, 'g');
  const m = open.exec(xml);
  if (!m || m[2] === '/') return undefined;
  const start = m.index + m[0].length;
  const end = xml.indexOf('<', start);
  if (end === -1) throw new Error(`<${name}> is not closed`);
  if (!new RegExp(`^</(?:[A-Za-z_][\\w.-]*:)?${name}\\s*>`).test(xml.slice(end, end + name.length + 40)))
    throw new Error(`<${name}> holds elements, not text`);
  return xmlText(xml.slice(start, end));
}

/** The codes a reglookup answers with, to what each means for the chain. */
function errorFailure(
  provider: string,
  status: number,
  headers: Readonly<Record<string, string>>,
  body: string,
): UpstreamFailure | 'not-found' {
  const line = body.split('\n', 1)[0].slice(0, 200);
  const code = headers['x-error-code'] ?? /^([A-Z_]{4,40}):/.exec(line)?.[1] ?? '';
  const retryAfter = retryAfterOf(headers['retry-after']);
  // The public service answers a plate it has no record of with a 500 whose text says so ("UK Lookup failed").
  if (code === 'VEHICLE_NOT_FOUND' || (code === '' && /no vehicle|not found|lookup failed/i.test(line)))
    return 'not-found';
  if (code === 'INVALID_PARAMETER' || code === 'MISSING_PARAMETER')
    return new UpstreamFailure(provider, 'invalid', 'the RegCheck service says the registration number is not valid');
  if (code === 'OUT_OF_CREDIT' || (code === '' && /credit/i.test(line)))
    return new UpstreamFailure(provider, 'permanent', 'the RegCheck account is out of credit');
  if (code === 'UNKNOWN_USERNAME' || (code === '' && /username is incorrect/i.test(line)))
    return new UpstreamFailure(provider, 'permanent', 'the RegCheck service does not know REGCHECK_USERNAME');
  if (code === 'RATE_LIMITED' || code === 'DAILY_LIMIT_REACHED' || code === 'SERVICE_UNAVAILABLE') {
    return new UpstreamFailure(
      provider,
      'transient',
      `the RegCheck service refused the call for now (${code})`,
      retryAfter,
    );
  }
  return failureForStatus(provider, status, headers, 'the RegCheck service');
}

function parseAnswer(provider: string, operation: string, xml: string): ProviderAnswer {
  if (FORBIDDEN.test(xml))
    throw new UpstreamFailure(
      provider,
      'permanent',
      'the RegCheck service answered XML with a DTD, CDATA or a processing instruction',
    );
  try {
    if (findOperation(operation)?.result === 'UKMOTData') {
      const tests = elementText(xml, 'Json');
      if (tests === undefined) throw new Error('no <Json> element');
      const ext = elementText(xml, 'ExtendedInformationJson');
      const taxDate = elementText(xml, 'taxDate');
      const record: Record<string, unknown> = { tests: parseUpstreamJson(tests) };
      if (ext !== undefined) record.extendedInformation = parseUpstreamJson(ext);
      if (taxDate !== undefined) record.taxDate = taxDate;
      return { found: true, record: normalizeRegcheckMot(record) };
    }
    const json = elementText(xml, 'vehicleJson');
    if (json === undefined) throw new Error('no <vehicleJson> element');
    const record = parseUpstreamJson(json);
    if (typeof record !== 'object' || record === null || Array.isArray(record))
      throw new Error('vehicleJson is not an object');
    return { found: true, record: normalizeRegcheckVehicle(record as Record<string, unknown>) };
  } catch (e) {
    throw new UpstreamFailure(
      provider,
      'permanent',
      `the RegCheck service's answer could not be read: ${(e as Error).message.slice(0, 120)}`,
    );
  }
}

export class RegcheckProvider implements Provider {
  readonly name = 'regcheck';

  constructor(private readonly options: RegcheckOptions) {}

  answers(operation: string): boolean {
    return OPERATIONS.some((op) => op.name === operation);
  }

  async fetch(operation: string, registration: string, state: string, ctx: FetchContext): Promise<ProviderAnswer> {
    const op = findOperation(operation);
    const q = new URLSearchParams({ RegistrationNumber: registration, username: this.options.username });
    if (op?.state) q.set(op.state.param, state);
    const res = await ctx.http(
      {
        method: 'GET',
        url: `${this.options.url}/api/reg.asmx/${encodeURIComponent(operation)}?${q.toString()}`,
        headers: { accept: 'text/xml' },
      },
      ctx.signal,
    );
    if (res.status !== 200) {
      const f = errorFailure(this.name, res.status, res.headers, res.body);
      if (f === 'not-found') return { found: false };
      throw f;
    }
    return parseAnswer(this.name, operation, res.body);
  }

  /** The account's credits left, from the service's credits endpoint. */
  async remaining(ctx: FetchContext): Promise<number> {
    const q = new URLSearchParams({ username: this.options.username });
    const res = await ctx.http(
      { method: 'GET', url: `${this.options.url}/ajax/getcredits.aspx?${q.toString()}` },
      ctx.signal,
    );
    if (res.status !== 200) throw failureForStatus(this.name, res.status, res.headers, 'the RegCheck credits endpoint');
    const n = res.body.trim();
    if (!/^-?\d{1,15}$/.test(n))
      throw new UpstreamFailure(
        this.name,
        'permanent',
        'the RegCheck credits endpoint answered something that is not a number',
      );
    return Number(n);
  }
}
