// Python: a zeep client built from the live ?WSDL (Debian's python3-zeep, run with /usr/bin/python3)
// calls the service over each of the WSDL's four ports: SOAP 1.1, SOAP 1.2, HTTP GET, HTTP POST.

import path from 'node:path';
import { callArgs } from './calls';
import { CLIENTS, debianVersion, PYTHON, runClient, type Toolkit } from './harness';
import { describeStack } from './stack';
import { WorksWith } from './works-with';

const TOOLKIT: Toolkit = {
  id: 'zeep',
  title: 'Python (zeep)',
  packages: ['python3-zeep'],
  files: [PYTHON],
  check: [PYTHON, '-c', 'import zeep'],
};

const PORTS = (
  [
    ['SOAP 1.1', 'RegSoap'],
    ['SOAP 1.2', 'RegSoap12'],
    ['HTTP GET', 'RegHttpGet'],
    ['HTTP POST', 'RegHttpPost'],
  ] as const
).map(([transport, port]) => ({ transport, port, label: `port ${port}` }));

const works = new WorksWith({
  id: '3-zeep',
  stack: 'Python',
  toolkit: 'zeep',
  version: () => `python3-zeep ${debianVersion('python3-zeep')}`,
  notes:
    "Choose the port with `client.bind('Reg', port)`. Over HTTP POST pass optional parameters explicitly (an omitted one is sent as the text `None`).",
});

describeStack({
  toolkit: TOOLKIT,
  works,
  transports: PORTS,
  report: ({ port }, { wsdl }) =>
    runClient(PYTHON, [path.join(CLIENTS, 'python', 'zeep_client.py'), port, wsdl, ...callArgs()]),
});
