// PHP: SoapClient (Debian's php-cli + php-soap) built from the live ?WSDL, once with
// soap_version SOAP_1_1 and once with SOAP_1_2. SoapClient speaks SOAP only (see README).

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server';
import { callArgs, describeCalls, parseReport, type Report, type Transport } from './calls';
import { BUILD_TIMEOUT_MS, CLIENTS, debianVersion, describeToolkit, Reports, run, type Toolkit } from './harness';
import { testTableAgrees, WorksWith } from './works-with';

const TOOLKIT: Toolkit = {
  id: 'php',
  title: 'PHP (SoapClient)',
  packages: ['php-cli', 'php-soap'],
  commands: ['php'],
  check: ['php', '-r', 'exit(class_exists("SoapClient") ? 0 : 1);'],
};

const VERSIONS: ReadonlyArray<readonly [Transport, string]> = [
  ['SOAP 1.1', '1.1'],
  ['SOAP 1.2', '1.2'],
];

/** php-soap is a metapackage; the version worth showing is that of php<major.minor>-soap. */
function phpSoapVersion(): string {
  const branch = spawnSync('php', ['-r', 'echo PHP_MAJOR_VERSION, ".", PHP_MINOR_VERSION;'], { encoding: 'utf8' }).stdout.trim();
  const pkg = `php${branch}-soap`;
  return `${pkg} ${debianVersion(pkg) ?? `(not found; php-soap ${debianVersion('php-soap')})`}`;
}

const works = new WorksWith({
  id: '5-php',
  stack: 'PHP',
  toolkit: 'SoapClient (ext-soap)',
  version: phpSoapVersion,
  notes: "`soap_version` SOAP_1_1 or SOAP_1_2; use `features => SOAP_SINGLE_ELEMENT_ARRAYS` so lists of one stay arrays.",
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
          const { stdout, stderr } = await run('php', ['-d', 'error_reporting=-1', '-d', 'display_errors=stderr', path.join(CLIENTS, 'php', 'client.php'), version, wsdl, ...callArgs()]);
          if (stderr.trim()) throw new Error(`PHP reported while calling the service:\n${stderr}`);
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
    describe(`${transport} (soap_version SOAP_${version.replace('.', '_')})`, () => describeCalls(transport, () => reports.get<Report>(transport), works));
  }

  testTableAgrees(works);
});
