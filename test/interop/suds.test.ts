// Python: a suds client built from the live ?WSDL (Debian's python3-suds, run with /usr/bin/python3).
// suds speaks SOAP 1.1 only, whichever SOAP port it is given (see README).

import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server';
import { CALLS, callArgs, describeCalls, parseReport, type Report } from './calls';
import { BUILD_TIMEOUT_MS, CLIENTS, debianVersion, describeToolkit, PYTHON, Reports, run, type Toolkit } from './harness';
import { testTableAgrees, WorksWith } from './works-with';

const TOOLKIT: Toolkit = { id: 'suds', title: 'Python (suds)', packages: ['python3-suds'], files: [PYTHON], check: [PYTHON, '-c', 'import suds.client'] };

const works = new WorksWith({
  id: '4-suds',
  stack: 'Python',
  toolkit: 'suds',
  version: () => `python3-suds ${debianVersion('python3-suds')}`,
  notes: 'SOAP 1.1 only: on the RegSoap12 port suds still sends SOAP 1.1, which the service answers.',
});

describeToolkit(TOOLKIT, () => {
  let server: TestServer;
  const reports = new Reports<'RegSoap' | 'RegSoap12'>();

  beforeAll(async () => {
    server = await startServer();
    const wsdl = `${server.url}/api/reg.asmx?WSDL`;
    const client = path.join(CLIENTS, 'python', 'suds_client.py');
    await Promise.all(
      (['RegSoap', 'RegSoap12'] as const).map((port) => reports.collect(port, async () => parseReport((await run(PYTHON, [client, port, wsdl, ...callArgs()])).stdout))),
    );
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    works.save();
    await server?.close();
  });

  describe('SOAP 1.1 (port RegSoap)', () => describeCalls('SOAP 1.1', () => reports.get<Report>('RegSoap'), works));

  describe('port RegSoap12 (suds has no SOAP 1.2: README)', () => {
    test('suds sends SOAP 1.1 there too, and the service answers it', () => {
      const r = reports.get<Report>('RegSoap12');
      expect(r.check.make).toBe((CALLS.check.vehicle as { CarMake: { CurrentTextValue: string } }).CarMake.CurrentTextValue);
      // A SOAP 1.1 fault code: the envelope that went out was SOAP 1.1.
      expect(r.missing.code).toMatch(/(^|:)Client$/);
    });
  });

  testTableAgrees(works);
});
