// Errors are values with a stable code. This table is the one place that says, for each code, its
// HTTP status and its SOAP role; every transport renders from it and none invents its own. It lives
// at the bottom of the layers (docs/architecture.md): the service, the accounts and the transports
// all throw or render these.

type SoapRole = 'Client' | 'Server' | 'VersionMismatch' | 'MustUnderstand';

interface ErrorSpec {
  readonly status: number;
  readonly role: SoapRole;
  readonly summary: string;
  /** The text every answer with this code carries, where the text does not depend on the request. */
  readonly message?: string;
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
  INTERNAL_ERROR: {
    status: 500,
    role: 'Server',
    summary: 'Something failed on our side; the log has the detail.',
    message: 'Internal error; the request was logged',
  },
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

  /**
   * INTERNAL_ERROR with its one text: the cause goes to the log, never to the caller. `suffix` (the
   * sandbox's tag) is appended after a space.
   */
  static internal(suffix?: string): LookupError {
    const text = ERRORS.INTERNAL_ERROR.message;
    return new LookupError('INTERNAL_ERROR', suffix === undefined ? text : `${text} ${suffix}`);
  }
}

/** A value safe to quote inside an error message: bounded, printable, one line. */
export function quote(value: string, max = 40): string {
  const cut = [...value].slice(0, max).join('');
  const printable = cut.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, '?');
  return `'${printable}${[...value].length > max ? '…' : ''}'`;
}

/** Any thrown value as one string for the log: an Error's stack (which begins with its message), else the value. */
export function stackOf(e: unknown): string {
  return String((e as Error)?.stack ?? e);
}

/** Any thrown value as one line for a message: an Error's message, else the value. */
export function messageOf(e: unknown): string {
  return String((e as Error)?.message ?? e);
}
