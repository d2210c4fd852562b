// Errors are values with a stable code. This table is the one place that says, for each code, its
// HTTP status and its SOAP role; every transport renders from it and none invents its own. It lives
// at the bottom of the layers (docs/architecture.md): the service, the accounts and the transports
// all throw or render these.

export type SoapRole = 'Client' | 'Server' | 'VersionMismatch' | 'MustUnderstand';

export interface ErrorSpec {
  readonly status: number;
  readonly role: SoapRole;
  readonly summary: string;
}

export const ERRORS = {
  MISSING_PARAMETER: { status: 400, role: 'Client', summary: 'A required parameter is missing or empty.' },
  INVALID_PARAMETER: { status: 400, role: 'Client', summary: 'A parameter has a value that is not allowed.' },
  MALFORMED_REQUEST: {
    status: 400,
    role: 'Client',
    summary: 'The request could not be read (bad XML, bad encoding, over a parsing limit, a DTD).',
  },
  UNKNOWN_USERNAME: {
    status: 403,
    role: 'Client',
    summary:
      'The username is not registered (USERNAME_POLICY=registered), is disabled, or may not be used from this address.',
  },
  UNKNOWN_OPERATION: {
    status: 404,
    role: 'Client',
    summary: 'No such operation, or the SOAPAction does not match the body.',
  },
  VEHICLE_NOT_FOUND: { status: 404, role: 'Client', summary: 'No record is held for that registration.' },
  METHOD_NOT_ALLOWED: { status: 405, role: 'Client', summary: 'The HTTP method is not served on that path.' },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    role: 'Client',
    summary: 'The request body is over MAX_BODY_BYTES; it was not read.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    role: 'Client',
    summary: 'The Content-Type or Content-Encoding is not one this path takes.',
  },
  OUT_OF_CREDIT: {
    status: 429,
    role: 'Client',
    summary: 'The username has no lookup credit left (no Retry-After: credits do not come back by themselves).',
  },
  DAILY_LIMIT_REACHED: {
    status: 429,
    role: 'Client',
    summary: 'The username has made its daily limit of lookups; Retry-After says when the next UTC day begins.',
  },
  RATE_LIMITED: {
    status: 429,
    role: 'Client',
    summary: 'Too many requests for this username; retry after the Retry-After seconds.',
  },
  VERSION_MISMATCH: {
    status: 500,
    role: 'VersionMismatch',
    summary: 'A SOAP 1.2 envelope sent as text/xml, or a SOAP 1.1 envelope sent as application/soap+xml.',
  },
  MUST_UNDERSTAND: {
    status: 500,
    role: 'MustUnderstand',
    summary: 'A SOAP header marked mustUnderstand that this service does not process.',
  },
  INTERNAL_ERROR: { status: 500, role: 'Server', summary: 'Something failed on our side; the log has the detail.' },
  SERVICE_UNAVAILABLE: {
    status: 503,
    role: 'Server',
    summary:
      'The service cannot answer for now (maintenance, or its database cannot be reached); retry after the Retry-After seconds.',
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;

export class LookupError extends Error {
  readonly code: ErrorCode;
  /** Seconds, for RATE_LIMITED, DAILY_LIMIT_REACHED and SERVICE_UNAVAILABLE. */
  readonly retryAfter?: number;

  constructor(code: ErrorCode, message: string, retryAfter?: number) {
    super(message);
    this.name = 'LookupError';
    this.code = code;
    this.retryAfter = retryAfter;
  }

  get spec(): ErrorSpec {
    return ERRORS[this.code];
  }
}

/** A value safe to quote inside an error message: bounded, printable, one line. */
export function quote(value: string, max = 40): string {
  const cut = [...value].slice(0, max).join('');
  const printable = cut.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, '?');
  return `'${printable}${[...value].length > max ? '…' : ''}'`;
}
