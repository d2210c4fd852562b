// Every operation of the catalogue over every transport, answered from the bundled sample data and
// held to the interface as wsdl/reg.wsdl states it: vehicleData's fields in the order of the WSDL's
// sequence, and every field of the sample record compared.

import { parseStringPromise } from 'xml2js';
import { OPERATIONS } from '../../src/contract/operations';
import { call, TRANSPORTS, type Transport } from '../helpers/call';
import { actualField, expectedField, wsdlSequence, type WsdlField } from '../helpers/contract';
import { demo, demoParams, SAMPLE } from '../helpers/sample';
import { startServer, type TestServer } from '../helpers/server';

let srv: TestServer;
let vehicleData: WsdlField[];
beforeAll(async () => {
  srv = await startServer();
  vehicleData = await wsdlSequence('vehicleData');
});
afterAll(() => srv.close());

const NS = 'http://regcheck.org.uk';
type X = Record<string, any>;

/** The result element of an answer: the SOAP <OpResult>, or the HTTP form's root. */
async function resultOf(transport: Transport, op: string, body: string): Promise<X> {
  const doc = await parseStringPromise(body, { explicitArray: false, xmlns: true, tagNameProcessors: [] });
  if (transport === 'get' || transport === 'post') return doc[Object.keys(doc)[0]];
  const env = doc['soap:Envelope'];
  const resp = env['soap:Body'][`${op}Response`];
  expect(resp.$ns.uri).toBe(NS);
  return resp[`${op}Result`];
}

const cases = OPERATIONS.flatMap((op) => TRANSPORTS.map((t) => [op.name, t] as const));

describe.each(cases)('%s over %s', (name, transport) => {
  const op = OPERATIONS.find((o) => o.name === name)!;

  test('answers the sample record with status 200, the right content type, a Content-Length and the result in the namespace', async () => {
    const params = demoParams(name, op.params);
    const res = await call(srv.url, transport, name, params);
    expect(res.status).toBe(200);
    const ct = transport === 'soap12' ? 'application/soap+xml; charset=utf-8' : 'text/xml; charset=utf-8';
    expect(res.headers.get('content-type')).toBe(ct);
    expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(res.body));
    expect(res.headers.get('transfer-encoding')).toBeNull();

    const result = await resultOf(transport, name, res.body);
    if (transport === 'get' || transport === 'post') {
      expect(result.$ns).toEqual({ local: op.result, uri: NS });
      expect(res.body.startsWith('<?xml version="1.0" encoding="utf-8"?>\r\n<' + op.result + ' ')).toBe(true);
    }
    const record = demo(name);
    if (op.result === 'Vehicle') {
      // The sample record, and where it came from and as of when (docs/calling.md, "The age of an answer").
      const vehicleJson = JSON.parse(result.vehicleJson._) as X;
      expect(vehicleJson).toEqual({
        ...record.vehicle,
        AnswerSource: 'import',
        AnswerAsOf: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      });
      // GET and POST say it in Last-Modified too; SOAP in vehicleJson only.
      const lastModified = res.headers.get('last-modified');
      if (transport === 'get' || transport === 'post')
        expect(lastModified).toBe(new Date(vehicleJson.AnswerAsOf as string).toUTCString());
      else expect(lastModified).toBeNull();
      const children = Object.keys(result.vehicleData).filter((k) => !k.startsWith('$'));
      const v = record.vehicle as X;
      const expected = vehicleData
        .map((f) => [f.name, expectedField(f, v)] as const)
        .filter(([, e]) => e.kind !== 'absent');
      // The WSDL's order, with only the fields the record lacks (and that are not composites) left out.
      expect(children).toEqual(expected.map(([name]) => name));
      for (const f of vehicleData) {
        expect([f.name, actualField(result.vehicleData[f.name], f.type === 'Composite')]).toEqual([
          f.name,
          expectedField(f, v),
        ]);
      }
    } else {
      const mot = record.mot as X;
      const tests = [].concat(result.Tests.UKTest);
      expect(tests).toHaveLength(mot.tests.length);
      expect(JSON.parse(result.Json._)).toEqual(mot.tests);
      expect(JSON.parse(result.ExtendedInformationJson._)).toEqual(mot.extendedInformation);
    }
  });
});

test.each(['soap12', 'get'] as const)(
  'every vehicle of the sample data, every field in the WSDL order (%s)',
  async (t) => {
    for (const r of SAMPLE.filter((s) => s.vehicle)) {
      const op = OPERATIONS.find((o) => o.name === r.operation)!;
      const params: Record<string, string> = { RegistrationNumber: r.registration, username: 'demo' };
      for (const p of op.params) if (p === 'state' || p === 'State') params[p] = r.state!;
      const res = await call(srv.url, t, op.name, params);
      expect(res.status).toBe(200);
      const result = await resultOf(t, op.name, res.body);
      const got = vehicleData.map((f) => [f.name, actualField(result.vehicleData[f.name], f.type === 'Composite')]);
      const want = vehicleData.map((f) => [f.name, expectedField(f, r.vehicle!)]);
      expect([r.registration, got]).toEqual([r.registration, want]);
      const present = vehicleData.filter((f) => expectedField(f, r.vehicle!).kind !== 'absent').map((f) => f.name);
      expect(Object.keys(result.vehicleData).filter((k) => !k.startsWith('$'))).toEqual(present);
    }
  },
);

describe('lookup keys', () => {
  test.each(TRANSPORTS)('a plate typed another way finds the same record (%s)', async (t) => {
    const res = await call(srv.url, t, 'Check', { RegistrationNumber: 'rg-11·abc', username: 'demo' });
    expect(res.status).toBe(200);
    expect(res.body).toContain('FORD FOCUS');
  });

  test.each(TRANSPORTS)('the state is matched by full name in any case (%s)', async (t) => {
    const res = await call(srv.url, t, 'CheckUSA', {
      RegistrationNumber: '7ABC 123',
      State: 'CALIFORNIA',
      username: 'demo',
    });
    expect(res.status).toBe(200);
    const other = await call(srv.url, t, 'CheckUSA', { RegistrationNumber: '7ABC123', State: 'NY', username: 'demo' });
    expect(other.status).toBe(t.startsWith('soap') ? 500 : 404);
    expect(other.body).toContain('VEHICLE_NOT_FOUND');
  });

  test('a Cyrillic-typed Ukrainian plate finds the Latin-imported record', async () => {
    const res = await call(srv.url, 'get', 'CheckUkraine', { RegistrationNumber: 'АА 1234 ВС', username: 'demo' });
    expect(res.status).toBe(200);
  });

  test('UKMOT: a Model matching the make or model finds the record; another model does not', async () => {
    for (const model of ['ford', 'Focus', 'FORD FOCUS']) {
      const ok = await call(srv.url, 'get', 'UKMOT', { RegistrationNumber: 'RG11ABC', Model: model, username: 'demo' });
      expect(ok.status).toBe(200);
    }
    const miss = await call(srv.url, 'soap11', 'UKMOT', {
      RegistrationNumber: 'RG11ABC',
      Model: 'Mondeo',
      username: 'demo',
    });
    expect(miss.status).toBe(500);
    expect(miss.body).toContain('<ErrorCode xmlns="http://regcheck.org.uk">VEHICLE_NOT_FOUND</ErrorCode>');
  });

  test('unknown extra parameters (a password, say) are ignored on GET and POST', async () => {
    for (const t of ['get', 'post'] as const) {
      const res = await call(srv.url, t, 'Check', {
        RegistrationNumber: 'RG11ABC',
        username: 'demo',
        password: 'secret',
      });
      expect(res.status).toBe(200);
    }
  });
});
