// A local DVSA MOT History API: its OAuth 2.0 token endpoint (client credentials, form-encoded,
// answering {"token_type":"Bearer","expires_in":N,"access_token":"..."}) and
// GET /v1/trade/vehicles/registration/{reg}, which takes a token it issued and not revoked
// (Authorization: Bearer) and the API key (X-API-Key): 401 for a bad or revoked token, 403 for a
// bad key, 404 for a plate it does not hold, 400 for ER19BAD, 429 for ER19THR, 500 for ER19ERR.
// Vehicles are written by hand after the API's documented answer. Tests steer it: expires_in,
// a delay on token answers, the token endpoint down (503), revoking every token issued so far (401),
// or letting them expire (403 with the API's MOTH-FB-02, as its error-code table documents).

import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const DVSA_CLIENT = {
  clientId: 'client-id-1',
  clientSecret: 's3cret-value',
  scope: 'https://tapi.dvsa.gov.uk/.default',
  apiKey: 'api-key-value',
};

export const DVSA_VEHICLES: Record<string, unknown> = {
  AB12CDE: {
    registration: 'AB12CDE',
    make: 'FORD',
    model: 'FOCUS',
    firstUsedDate: '2012-03-01',
    fuelType: 'Petrol',
    primaryColour: 'Blue',
    registrationDate: '2012-03-01',
    manufactureDate: '2012-02-20',
    engineSize: '1596',
    hasOutstandingRecall: 'No',
    motTests: [
      {
        completedDate: '2025-08-20T10:15:31.000Z',
        testResult: 'PASSED',
        expiryDate: '2026-08-19',
        odometerValue: '61234',
        odometerUnit: 'MI',
        odometerResultType: 'READ',
        motTestNumber: '111122223333',
        dataSource: 'DVSA',
        defects: [
          { text: 'Nearside Front Tyre worn close to legal limit (5.2.3 (e))', type: 'ADVISORY', dangerous: false },
          { text: 'Offside Headlamp aim slightly high (4.1.2 (a))', type: 'MINOR', dangerous: false },
        ],
      },
      {
        completedDate: '2025-08-18T09:01:02.000Z',
        testResult: 'FAILED',
        odometerValue: '61200',
        odometerUnit: 'MI',
        odometerResultType: 'READ',
        motTestNumber: '444455556666',
        dataSource: 'DVSA',
        defects: [
          { text: 'Nearside Rear Brake pipe excessively corroded (1.1.11 (c))', type: 'MAJOR', dangerous: false },
          { text: 'Offside Front Tyre has a cut exposing the cords (5.2.3 (d))', type: 'DANGEROUS', dangerous: true },
          { text: 'Registration plate missing (0.1 (a))', type: 'PRS', dangerous: false },
          { text: 'Windscreen wiper does not clear the windscreen', type: 'FAIL', dangerous: false },
        ],
      },
    ],
  },
  // New: no test yet.
  NEW1234: {
    registration: 'NEW1234',
    make: 'KIA',
    model: 'NIRO',
    fuelType: 'Electric',
    primaryColour: 'White',
    registrationDate: '2025-01-10',
    manufactureDate: '2024-12-01',
    motTestDueDate: '2028-01-09',
    hasOutstandingRecall: 'Unknown',
  },
};

const STATUS: Record<string, number> = { ER19BAD: 400, ER19THR: 429, ER19ERR: 500 };

export interface FakeDvsa {
  readonly apiUrl: string;
  readonly tokenUrl: string;
  tokenRequests: number;
  motRequests: number;
  /** Seconds each new token lives (expires_in). */
  expiresIn: number;
  /** Ms a token answer is held back. */
  tokenDelayMs: number;
  /** The token endpoint answers 503. */
  tokenDown: boolean;
  /** The token endpoint takes requests and never answers them (a hung endpoint). */
  tokenHung: boolean;
  /** Every token issued so far stops working (401). */
  revokeAll(): void;
  /** Every token issued so far has expired (403, errorCode MOTH-FB-02). */
  expireAll(): void;
  /** When each MOT request arrived (ms, Date.now). */
  readonly motTimes: number[];
  /** Form bodies of the token requests (to check what was asked for). */
  readonly tokenBodies: URLSearchParams[];
  close(): Promise<void>;
}

export async function startFakeDvsa(): Promise<FakeDvsa> {
  const valid = new Set<string>();
  const held = new Set<http.ServerResponse>();
  const expired = new Set<string>();
  let issued = 0;
  const state: Omit<FakeDvsa, 'apiUrl' | 'tokenUrl' | 'close'> = {
    tokenRequests: 0,
    motRequests: 0,
    expiresIn: 3599,
    tokenDelayMs: 0,
    tokenDown: false,
    tokenHung: false,
    revokeAll: () => valid.clear(),
    expireAll: () => {
      for (const t of valid) expired.add(t);
      valid.clear();
    },
    motTimes: [],
    tokenBodies: [],
  };
  const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://localhost');
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      if (req.method === 'POST' && u.pathname === '/oauth2/v2.0/token') {
        state.tokenRequests++;
        const form = new URLSearchParams(body);
        state.tokenBodies.push(form);
        if (state.tokenHung) return held.add(res);
        if (state.tokenDown) return json(res, 503, { error: 'temporarily_unavailable' });
        const ok =
          form.get('grant_type') === 'client_credentials' &&
          form.get('client_id') === DVSA_CLIENT.clientId &&
          form.get('client_secret') === DVSA_CLIENT.clientSecret &&
          form.get('scope') === DVSA_CLIENT.scope;
        const token = `tok-${++issued}`;
        setTimeout(() => {
          if (!ok) return json(res, 401, { error: 'invalid_client' });
          valid.add(token);
          json(res, 200, {
            token_type: 'Bearer',
            expires_in: state.expiresIn,
            ext_expires_in: state.expiresIn,
            access_token: token,
          });
        }, state.tokenDelayMs);
        return;
      }
      const m = /^\/v1\/trade\/vehicles\/registration\/([^/]+)$/.exec(u.pathname);
      if (req.method !== 'GET' || !m) return json(res, 404, { errorCode: 'MOTH-NP-01', errorMessage: 'No such path' });
      state.motRequests++;
      state.motTimes.push(Date.now());
      const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
      if (auth && expired.has(auth[1]))
        return json(res, 403, {
          errorCode: 'MOTH-FB-02',
          errorMessage: 'The access token sent with the request has expired',
        });
      if (!auth || !valid.has(auth[1])) return json(res, 401, { message: 'Unauthorized' });
      if (req.headers['x-api-key'] !== DVSA_CLIENT.apiKey)
        return json(res, 403, {
          errorCode: 'MOTH-FB-03',
          errorMessage: 'The API key sent with the request is not recognised',
        });
      const reg = decodeURIComponent(m[1]);
      if (STATUS[reg])
        return json(
          res,
          STATUS[reg],
          { errorCode: 'MOTH-XX-01', errorMessage: 'error' },
          STATUS[reg] === 429 ? { 'retry-after': '3' } : {},
        );
      const vehicle = DVSA_VEHICLES[reg];
      if (!vehicle)
        return json(res, 404, { errorCode: 'MOTH-NF-01', errorMessage: `No data found for registration ${reg}` });
      json(res, 200, vehicle);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(state, {
    apiUrl: base,
    tokenUrl: `${base}/oauth2/v2.0/token`,
    close: () => {
      for (const r of held) r.destroy();
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
