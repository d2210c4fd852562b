// PHP: SoapClient (Debian's php-cli + php-soap) built from the live ?WSDL, once with
// soap_version SOAP_1_1 and once with SOAP_1_2. SoapClient speaks SOAP only (see README).

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { callArgs } from './calls';
import { CLIENTS, debianVersion, runClient, type Toolkit } from './harness';
import { describeStack } from './stack';
import { WorksWith } from './works-with';

const TOOLKIT: Toolkit = {
  id: 'php',
  title: 'PHP (SoapClient)',
  packages: ['php-cli', 'php-soap'],
  commands: ['php'],
  check: ['php', '-r', 'exit(class_exists("SoapClient") ? 0 : 1);'],
};

const VERSIONS = [
  { transport: 'SOAP 1.1', version: '1.1', label: 'soap_version SOAP_1_1' },
  { transport: 'SOAP 1.2', version: '1.2', label: 'soap_version SOAP_1_2' },
] as const;

/** php-soap is a metapackage; the version worth showing is that of php<major.minor>-soap. */
function phpSoapVersion(): string {
  const branch = spawnSync('php', ['-r', 'echo PHP_MAJOR_VERSION, ".", PHP_MINOR_VERSION;'], {
    encoding: 'utf8',
  }).stdout.trim();
  const pkg = `php${branch}-soap`;
  return `${pkg} ${debianVersion(pkg) ?? `(not found; php-soap ${debianVersion('php-soap')})`}`;
}

const works = new WorksWith({
  id: '5-php',
  stack: 'PHP',
  toolkit: 'SoapClient (ext-soap)',
  version: phpSoapVersion,
  notes:
    '`soap_version` SOAP_1_1 or SOAP_1_2; use `features => SOAP_SINGLE_ELEMENT_ARRAYS` so lists of one stay arrays.',
});

describeStack({
  toolkit: TOOLKIT,
  works,
  transports: VERSIONS,
  report: ({ version }, { wsdl }) =>
    runClient(
      'php',
      [
        '-d',
        'error_reporting=-1',
        '-d',
        'display_errors=stderr',
        path.join(CLIENTS, 'php', 'client.php'),
        version,
        wsdl,
        ...callArgs(),
      ],
      {
        failOnStderr: 'PHP reported while calling the service',
      },
    ),
});
