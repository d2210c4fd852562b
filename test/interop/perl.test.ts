// Perl: the stub SOAP::Lite->service builds from the live ?WSDL (Debian's libsoap-lite-perl), over
// SOAP 1.1 and, with SOAP::Lite->soapversion('1.2') set before the stub is built, SOAP 1.2.

import path from 'node:path';
import { callArgs } from './calls';
import { CLIENTS, debianVersion, runClient, type Toolkit } from './harness';
import { describeStack } from './stack';
import { WorksWith } from './works-with';

const TOOLKIT: Toolkit = {
  id: 'perl',
  title: 'Perl (SOAP::Lite)',
  packages: ['libsoap-lite-perl'],
  commands: ['perl'],
  check: ['perl', '-MSOAP::Lite', '-MJSON::PP', '-e', '1'],
};

const VERSIONS = [
  { transport: 'SOAP 1.1', version: '1.1', label: 'soapversion 1.1' },
  { transport: 'SOAP 1.2', version: '1.2', label: 'soapversion 1.2' },
] as const;

const works = new WorksWith({
  id: '7-perl',
  stack: 'Perl',
  toolkit: 'SOAP::Lite `service()`',
  version: () => `libsoap-lite-perl ${debianVersion('libsoap-lite-perl')}`,
  notes:
    "Set an `on_fault` handler. For SOAP 1.2 call `SOAP::Lite->soapversion('1.2')` before `service()` and read faults from `$som->fault->{Reason}{Text}`.",
});

describeStack({
  toolkit: TOOLKIT,
  works,
  transports: VERSIONS,
  report: ({ version }, { wsdl }) =>
    runClient('perl', ['-w', path.join(CLIENTS, 'perl', 'client.pl'), version, wsdl, ...callArgs()], {
      failOnStderr: 'perl warned while calling the service',
    }),
});
