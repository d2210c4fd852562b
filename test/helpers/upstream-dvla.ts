// A local DVLA Vehicle Enquiry Service speaking the format of DVLA's documented API: POST
// /vehicle-enquiry/v1/vehicles with x-api-key and {"registrationNumber"}, the test registrations of
// its developer portal's test environment (AA19AAA ... 200; ER19BAD 400, ER19NFD 404, ER19THR 429,
// ER19ERR 500, ER19MNT 503) and its error body {"errors":[{status, code, title, detail}]}. Any other
// registration is 404, unless a test put an answer of its own for it (answers), made it slow
// (delayMs), or stopped the server (stop/start on the same port: an upstream that goes away).

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as published from '../fixtures/dvla-answers';

export const DVLA_TEST_KEY = 'test-dvla-key-7f3a';

/** AA19AAA as the DVLA's test environment publishes it, its "<1 YEAR FROM NOW>" taxDueDate fixed here. */
export const AA19AAA = { ...published.AA19AAA, taxDueDate: '2027-01-01' };

/** AA19EEE: an electric car, no engine capacity. */
export const AA19EEE = { ...published.AA19EEE, taxDueDate: '2027-01-01' };

const ERRORS: Record<string, { status: number; title: string; detail: string }> = {
  ER19BAD: { status: 400, title: 'Bad Request', detail: 'Invalid format for field - vehicle registration number' },
  ER19NFD: { status: 404, title: 'Vehicle Not Found', detail: 'Record for vehicle not found' },
  ER19THR: { status: 429, title: 'Too Many Requests', detail: 'Too many requests' },
  ER19ERR: { status: 500, title: 'Internal Server Error', detail: 'System error occurred' },
  ER19MNT: { status: 503, title: 'Service Unavailable', detail: 'The service is currently unavailable' },
};

/** A raw answer a test puts in place for a registration: status, body text, headers. */
export interface RawAnswer {
  readonly status: number;
  readonly body: string;
  readonly headers?: Record<string, string>;
}

export interface FakeDvla {
  readonly url: string;
  /** Calls received, by registration (every call, whatever it answered). */
  readonly calls: Map<string, number>;
  /** Every call's x-api-key, in order. */
  readonly keys: string[];
  /** Registration -> its answer, over the documented ones. */
  readonly answers: Map<string, RawAnswer>;
  /** Milliseconds every answer waits before it is sent. */
  delayMs: number;
  totalCalls(): number;
  /** Closes the listener and drops every connection (the upstream goes away). */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

function errorBody(e: { status: number; title: string; detail: string }): string {
  return JSON.stringify({
    errors: [{ status: String(e.status), code: String(e.status) + '1', title: e.title, detail: e.detail }],
  });
}

export async function startFakeDvla(
  options: { records?: Record<string, object>; retryAfterS?: number; port?: number } = {},
): Promise<FakeDvla> {
  const records: Record<string, object> = { AA19AAA, AA19EEE, ...options.records };
  const calls = new Map<string, number>();
  const keys: string[] = [];
  const answers = new Map<string, RawAnswer>();
  const state = { delayMs: 0 };
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const send = (status: number, text: string, headers: Record<string, string> = {}) =>
        setTimeout(() => {
          if (!res.destroyed) res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(text);
        }, state.delayMs).unref();
      if (req.method !== 'POST' || req.url !== '/vehicle-enquiry/v1/vehicles')
        return send(404, errorBody({ status: 404, title: 'Not Found', detail: 'No such path' }));
      keys.push(String(req.headers['x-api-key'] ?? ''));
      if (req.headers['x-api-key'] !== DVLA_TEST_KEY) return send(403, JSON.stringify({ message: 'Forbidden' }));
      let reg: string;
      try {
        reg = String((JSON.parse(body) as { registrationNumber?: unknown }).registrationNumber ?? '');
      } catch {
        return send(400, errorBody({ status: 400, title: 'Bad Request', detail: 'Invalid JSON' }));
      }
      calls.set(reg, (calls.get(reg) ?? 0) + 1);
      const own = answers.get(reg);
      if (own) return send(own.status, own.body, own.headers);
      const err = ERRORS[reg];
      if (err)
        return send(
          err.status,
          errorBody(err),
          err.status === 429 && options.retryAfterS !== undefined ? { 'retry-after': String(options.retryAfterS) } : {},
        );
      const rec = records[reg];
      if (rec) return send(200, JSON.stringify(rec));
      send(404, errorBody(ERRORS.ER19NFD));
    });
  };
  let server = http.createServer({ keepAliveTimeout: 5000 }, handler);
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const fake: FakeDvla = {
    url: `http://127.0.0.1:${port}`,
    calls,
    keys,
    answers,
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(v: number) {
      state.delayMs = v;
    },
    totalCalls: () => [...calls.values()].reduce((a, b) => a + b, 0),
    stop: async () => {
      if (!server.listening) return;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    start: async () => {
      if (server.listening) return;
      server = http.createServer({ keepAliveTimeout: 5000 }, handler);
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
    close: () => fake.stop(),
  };
  return fake;
}

/**
 * Run as a process of its own (`node -r ts-node/register/transpile-only upstream-dvla.ts PORT`): a DVLA a test can
 * kill.
 */
if (require.main === module) {
  void startFakeDvla({ port: Number(process.argv[2] ?? 0) }).then((f) => process.stdout.write(`listening ${f.url}\n`));
}
