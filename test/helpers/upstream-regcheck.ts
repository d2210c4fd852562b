// A local RegCheck service answering with the public service's real answers
// (test/fixtures/regcheck-answers.ts, each with its source): its HTTP GET binding
// (/api/reg.asmx/{Operation}?RegistrationNumber=...&username=...) gives the recorded answer of a
// plate below, a plate it has none for the service's 500 "UK Lookup failed", a username other than
// REGCHECK_TEST_USERNAME its 500 "Your username is incorrect"; /ajax/getcredits.aspx the number.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  BAD_USERNAME_LINE,
  IE_AUDI_A6_XML,
  NOT_FOUND_LINE,
  UK_BMW_520_XML,
  UK_PEUGEOT_208_JSON,
  UK_PEUGEOT_307_JSON,
  UK_RENAULT_CLIO_MOT_XML,
  UK_RENAULT_CLIO_XML,
  vehicleEnvelope,
} from '../fixtures/regcheck-answers';

export const REGCHECK_TEST_USERNAME = 'relay-account';

/**
 * Operation -> registration -> the XML answer. The plates are ours (the answers carry none), but
 * 04MH8917 and BL64JTZ.
 */
export const REGCHECK_ANSWERS: Record<string, Record<string, string>> = {
  Check: {
    AB11BMW: UK_BMW_520_XML,
    CL14RNO: UK_RENAULT_CLIO_XML,
    BL64JTZ: vehicleEnvelope(UK_PEUGEOT_208_JSON),
    AB07CDE: vehicleEnvelope(UK_PEUGEOT_307_JSON),
  },
  CheckIreland: { '04MH8917': IE_AUDI_A6_XML },
  UKMOT: { CL14RNO: UK_RENAULT_CLIO_MOT_XML },
};

export interface FakeRegcheck {
  readonly url: string;
  /** Every lookup received: operation and registration. */
  readonly calls: { operation: string; registration: string }[];
  close(): Promise<void>;
}

export async function startFakeRegcheck(credits = 250): Promise<FakeRegcheck> {
  const calls: FakeRegcheck['calls'] = [];
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://localhost');
    const text = (status: number, body: string, type = 'text/plain; charset=utf-8') =>
      res.writeHead(status, { 'content-type': type }).end(body);
    if (u.pathname === '/ajax/getcredits.aspx') return text(200, String(credits));
    const m = /^\/api\/reg\.asmx\/([A-Za-z]+)$/.exec(u.pathname);
    if (!m) return text(404, 'Not Found');
    const registration = u.searchParams.get('RegistrationNumber') ?? '';
    calls.push({ operation: m[1], registration });
    if (u.searchParams.get('username') !== REGCHECK_TEST_USERNAME) return text(500, BAD_USERNAME_LINE);
    const xml = REGCHECK_ANSWERS[m[1]]?.[registration];
    if (xml === undefined) return text(500, NOT_FOUND_LINE);
    text(200, xml, 'text/xml; charset=utf-8');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
