// Node: the npm `soap` client built from the live ?WSDL, over the RegSoap port (SOAP 1.1) and the
// RegSoap12 port with forceSoap12Headers (SOAP 1.2). It models the SOAP ports only (see README).
// Its results are put in the same report shape as the other stacks' client programs.

import fs from 'node:fs';
import * as soap from 'soap';
import { CALLS, type FailureSeen, type MotSeen, type Report, type VehicleSeen } from './calls';
import type { Toolkit } from './harness';
import { describeStack } from './stack';
import { WorksWith } from './works-with';

const TOOLKIT: Toolkit = { id: 'node', title: 'Node (npm soap client)', packages: [] };

const PORTS = [
  { transport: 'SOAP 1.1', port: 'RegSoap', label: 'port RegSoap' },
  { transport: 'SOAP 1.2', port: 'RegSoap12', label: 'port RegSoap12' },
] as const;

const works = new WorksWith({
  id: '8-node',
  stack: 'Node.js',
  toolkit: 'npm `soap` client',
  version: () =>
    `soap ${(JSON.parse(fs.readFileSync(require.resolve('soap/package.json'), 'utf8')) as { version: string }).version} (npm)`,
  notes:
    'SOAP 1.2: port RegSoap12 with `forceSoap12Headers: true`. A composite whose values are all nil comes back as `null`.',
});

// node-soap results are untyped objects shaped by the schema.
type Obj = Record<string, any>;

/** simpleContent with an attribute may come back as {$value, attributes}, or as the bare text. */
function text(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'object') return text((v as Obj).$value);
  return String(v);
}

function vehicle(v: Obj): VehicleSeen {
  const d = (v.vehicleData ?? {}) as Obj;
  return {
    vehicleJson: v.vehicleJson ?? null,
    description: text(d.Description),
    year: text(d.RegistrationYear),
    make: text(d.CarMake?.CurrentTextValue),
    engineSize: text(d.EngineSize?.CurrentValue),
  };
}

const strings = (a: Obj | null | undefined): string[] =>
  a?.string === undefined ? [] : ([] as unknown[]).concat(a.string).map((s) => String(s));
const list = (x: unknown): Obj[] => (x === undefined || x === null ? [] : ([] as Obj[]).concat(x as Obj));

function mot(m: Obj): MotSeen {
  return {
    taxDate: m.taxDate ?? null,
    tests: list(m.Tests?.UKTest).map((t) => ({
      testDate: t.TestDate,
      result: t.Result,
      odometer: t.Odometer,
      failureReasons: strings(t.FailureReasons),
      advisories: strings(t.Advisories),
    })),
    extended: list(m.ExtendedInformation?.ArrayOfString).map(strings),
  };
}

/** What a caller gets from a fault: the Error's message, and the parsed fault it carries. */
function failure(e: unknown): FailureSeen {
  const fault = (e as { root?: Obj }).root?.Envelope?.Body?.Fault as Obj | undefined;
  if (!fault) return { exception: String((e as Error)?.stack ?? e) };
  return {
    error: (e as Error).message,
    code: text(fault.faultcode) ?? text(fault.Code?.Value),
    detail: text((fault.detail ?? fault.Detail)?.ErrorCode),
  };
}

/** The six calls through the client, in the report shape of the other stacks' client programs. */
async function callService(client: Obj, port: string): Promise<Report> {
  const call = (op: string, args: Record<string, string>): Promise<Obj> =>
    new Promise((resolve, reject) =>
      client.Reg[port][op](args, (err: unknown, result: Obj) => (err ? reject(err) : resolve(result))),
    );
  const attempt = async <T>(fn: () => Promise<T>): Promise<T | FailureSeen> => fn().catch(failure);
  const user = { username: 'demo' };
  return {
    check: (await attempt(async () =>
      vehicle((await call('Check', { RegistrationNumber: CALLS.check.registration, ...user })).CheckResult),
    )) as Report['check'],
    usa: (await attempt(async () =>
      vehicle(
        (
          await call('CheckUSA', {
            RegistrationNumber: CALLS.usa.registration,
            State: CALLS.usa.state as string,
            ...user,
          })
        ).CheckUSAResult,
      ),
    )) as Report['usa'],
    mot: (await attempt(async () =>
      mot((await call('UKMOT', { RegistrationNumber: CALLS.mot.registration, ...user })).UKMOTResult),
    )) as Report['mot'],
    missing: await attempt(async () => ({
      unexpected: vehicle((await call('Check', { RegistrationNumber: CALLS.missing, ...user })).CheckResult),
    })),
    empty: (await attempt(async () =>
      vehicle((await call('Check', { RegistrationNumber: CALLS.empty.registration, ...user })).CheckResult),
    )) as Report['empty'],
    quoted: (await attempt(async () =>
      vehicle((await call('Check', { RegistrationNumber: CALLS.quoted.registration, ...user })).CheckResult),
    )) as Report['quoted'],
  };
}

describeStack({
  toolkit: TOOLKIT,
  works,
  transports: PORTS,
  report: async ({ transport, port }, { wsdl }) => {
    const client = await soap.createClientAsync(wsdl, { forceSoap12Headers: transport === 'SOAP 1.2' });
    return callService(client, port);
  },
});
