// A node-soap client generated from the served WSDL, as a Node caller would use it, over both SOAP
// versions: results come back typed by the schema, faults as errors carrying our message.

import * as soap from 'soap';
import { startServer, type TestServer } from '../helpers/server';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(() => srv.close());

type AnyClient = soap.Client & Record<string, any>;

/** Calls an operation on one port of the generated client: [result, raw response XML]. */
function invoke(client: AnyClient, port: string, op: string, args: Record<string, string>): Promise<[any, string]> {
  return new Promise((resolve, reject) => {
    client.Reg[port][op](args, (err: unknown, result: unknown, raw: string) =>
      err ? reject(err) : resolve([result, raw]),
    );
  });
}

describe.each([
  ['SOAP 1.1', 'RegSoap', false],
  ['SOAP 1.2', 'RegSoap12', true],
] as const)('node-soap client over %s', (_label, port, soap12) => {
  let client: AnyClient;
  beforeAll(async () => {
    client = (await soap.createClientAsync(`${srv.url}/api/reg.asmx?WSDL`, {
      forceSoap12Headers: soap12,
    })) as AnyClient;
  });

  test('the WSDL gives each SOAP port the address the client used, with all 31 operations', () => {
    // node-soap's client models the SOAP ports only; the HTTP ports are for .NET/Java HTTP proxies.
    const ports = client.describe().Reg;
    expect(Object.keys(ports)).toEqual(expect.arrayContaining(['RegSoap', 'RegSoap12']));
    expect(Object.keys(ports[port])).toHaveLength(31);
    expect((client as any).wsdl.definitions.services.Reg.ports[port].location).toBe(`${srv.url}/api/reg.asmx`);
  });

  test('Check returns the vehicle, with vehicleJson parseable and vehicleData typed', async () => {
    const [result, raw] = await invoke(client, port, 'Check', { RegistrationNumber: 'RG11 ABC', username: 'demo' });
    const vehicle = result.CheckResult;
    expect(JSON.parse(vehicle.vehicleJson).Description).toBe('FORD FOCUS 1596cc (sample)');
    expect(vehicle.vehicleData.Description).toBe('FORD FOCUS 1596cc (sample)');
    expect(vehicle.vehicleData.CarMake.CurrentTextValue).toBe('FORD');
    expect(raw).toContain(
      soap12 ? 'http://www.w3.org/2003/05/soap-envelope' : 'http://schemas.xmlsoap.org/soap/envelope/',
    );
  });

  test('CheckUSA takes the State parameter', async () => {
    const [result] = await invoke(client, port, 'CheckUSA', {
      RegistrationNumber: '7ABC123',
      State: 'CA',
      username: 'demo',
    });
    expect(JSON.parse(result.CheckUSAResult.vehicleJson).CarMake.CurrentTextValue).toBe('FORD');
  });

  test('UKMOT returns the tests with failure reasons and the extended information', async () => {
    const [result] = await invoke(client, port, 'UKMOT', { RegistrationNumber: 'RG11ABC', username: 'demo' });
    const data = result.UKMOTResult;
    expect(data.Tests.UKTest).toHaveLength(3);
    expect(data.Tests.UKTest[1].FailureReasons.string).toEqual([
      'Offside headlamp aim too high',
      'Brake pipe corroded',
    ]);
    expect(data.ExtendedInformation.ArrayOfString[0].string).toEqual(['Colour', 'Blue']);
  });

  test('a vehicle with empty composites does not trip the client', async () => {
    const [result] = await invoke(client, port, 'Check', { RegistrationNumber: 'NO11CMP', username: 'demo' });
    expect(result.CheckResult.vehicleData.Description).toBe('UNKNOWN KIT CAR (sample, no composites)');
    expect(result.CheckResult.vehicleData).toHaveProperty('CarMake');
  });

  test('an unknown registration surfaces as a fault with our message and code', async () => {
    const err = await invoke(client, port, 'Check', { RegistrationNumber: 'ZZ99ZZZ', username: 'demo' }).then(
      () => null,
      (e: any) => e,
    );
    expect(err).not.toBeNull();
    expect(err.message).toContain("No vehicle found for registration 'ZZ99ZZZ'");
    expect(err.body).toContain('VEHICLE_NOT_FOUND');
  });
});
