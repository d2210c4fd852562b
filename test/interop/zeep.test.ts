// Python: a zeep client built from the live ?WSDL (Debian's python3-zeep, run with /usr/bin/python3)
// calls the service over each of the WSDL's four ports: SOAP 1.1, SOAP 1.2, HTTP GET, HTTP POST.

import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server';
import { callArgs, describeCalls, parseReport, type Report, type Transport } from './calls';
import { BUILD_TIMEOUT_MS, CLIENTS, debianVersion, describeToolkit, PYTHON, Reports, run, type Toolkit } from './harness';
import { testTableAgrees, WorksWith } from './works-with';

const TOOLKIT: Toolkit = { id: 'zeep', title: 'Python (zeep)', packages: ['python3-zeep'], files: [PYTHON], check: [PYTHON, '-c', 'import zeep'] };

const PORTS: ReadonlyArray<readonly [Transport, string]> = [
  ['SOAP 1.1', 'RegSoap'],
  ['SOAP 1.2', 'RegSoap12'],
  ['HTTP GET', 'RegHttpGet'],
  ['HTTP POST', 'RegHttpPost'],
];

const works = new WorksWith({
  id: '3-zeep',
  stack: 'Python',
  toolkit: 'zeep',
  version: () => `python3-zeep ${debianVersion('python3-zeep')}`,
  notes: "Choose the port with `client.bind('Reg', port)`. Over HTTP POST pass optional parameters explicitly (an omitted one is sent as the text `None`).",
});

describeToolkit(TOOLKIT, () => {
  let server: TestServer;
  const reports = new Reports<Transport>();

  beforeAll(async () => {
    server = await startServer();
    const wsdl = `${server.url}/api/reg.asmx?WSDL`;
    await Promise.all(
      PORTS.map(([transport, port]) =>
        reports.collect(transport, async () => parseReport((await run(PYTHON, [path.join(CLIENTS, 'python', 'zeep_client.py'), port, wsdl, ...callArgs()])).stdout)),
      ),
    );
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    works.save();
    await server?.close();
  });

  for (const [transport, port] of PORTS) {
    describe(`${transport} (port ${port})`, () => describeCalls(transport, () => reports.get<Report>(transport), works));
  }

  testTableAgrees(works);
});
