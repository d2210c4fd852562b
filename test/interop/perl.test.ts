// Perl: the stub SOAP::Lite->service builds from the live ?WSDL (Debian's libsoap-lite-perl), over
// SOAP 1.1 and, with SOAP::Lite->soapversion('1.2') set before the stub is built, SOAP 1.2.

import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server';
import { callArgs, describeCalls, parseReport, type Report, type Transport } from './calls';
import { BUILD_TIMEOUT_MS, CLIENTS, debianVersion, describeToolkit, Reports, run, type Toolkit } from './harness';
import { testTableAgrees, WorksWith } from './works-with';

const TOOLKIT: Toolkit = { id: 'perl', title: 'Perl (SOAP::Lite)', packages: ['libsoap-lite-perl'], commands: ['perl'], check: ['perl', '-MSOAP::Lite', '-MJSON::PP', '-e', '1'] };

const VERSIONS: ReadonlyArray<readonly [Transport, string]> = [
  ['SOAP 1.1', '1.1'],
  ['SOAP 1.2', '1.2'],
];

const works = new WorksWith({
  id: '7-perl',
  stack: 'Perl',
  toolkit: 'SOAP::Lite `service()`',
  version: () => `libsoap-lite-perl ${debianVersion('libsoap-lite-perl')}`,
  notes: "Set an `on_fault` handler. For SOAP 1.2 call `SOAP::Lite->soapversion('1.2')` before `service()` and read faults from `$som->fault->{Reason}{Text}`.",
});

describeToolkit(TOOLKIT, () => {
  let server: TestServer;
  const reports = new Reports<Transport>();

  beforeAll(async () => {
    server = await startServer();
    const wsdl = `${server.url}/api/reg.asmx?WSDL`;
    await Promise.all(
      VERSIONS.map(([transport, version]) =>
        reports.collect(transport, async () => {
          const { stdout, stderr } = await run('perl', ['-w', path.join(CLIENTS, 'perl', 'client.pl'), version, wsdl, ...callArgs()]);
          if (stderr.trim()) throw new Error(`perl warned while calling the service:\n${stderr}`);
          return parseReport(stdout);
        }),
      ),
    );
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    works.save();
    await server?.close();
  });

  for (const [transport, version] of VERSIONS) {
    describe(`${transport} (soapversion ${version})`, () => describeCalls(transport, () => reports.get<Report>(transport), works));
  }

  testTableAgrees(works);
});
