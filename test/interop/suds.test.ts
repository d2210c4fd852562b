// Python: a suds client built from the live ?WSDL (Debian's python3-suds, run with /usr/bin/python3).
// suds speaks SOAP 1.1 only, whichever SOAP port it is given (see README).

import path from 'node:path';
import { CALLS, callArgs, type Report } from './calls';
import { CLIENTS, debianVersion, PYTHON, Reports, runClient, type Toolkit } from './harness';
import { describeStack } from './stack';
import { WorksWith } from './works-with';

const TOOLKIT: Toolkit = {
  id: 'suds',
  title: 'Python (suds)',
  packages: ['python3-suds'],
  files: [PYTHON],
  check: [PYTHON, '-c', 'import suds.client'],
};

const works = new WorksWith({
  id: '4-suds',
  stack: 'Python',
  toolkit: 'suds',
  version: () => `python3-suds ${debianVersion('python3-suds')}`,
  notes: 'SOAP 1.1 only: on the RegSoap12 port suds still sends SOAP 1.1, which the service answers.',
});

const sudsClient = (port: 'RegSoap' | 'RegSoap12', wsdl: string) =>
  runClient(PYTHON, [path.join(CLIENTS, 'python', 'suds_client.py'), port, wsdl, ...callArgs()]);

/** The run on the SOAP 1.2 port, which is not a transport suds has (no describeCalls for it). */
const soap12Port = new Reports<'RegSoap12'>();

describeStack({
  toolkit: TOOLKIT,
  works,
  transports: [{ transport: 'SOAP 1.1', label: 'port RegSoap' }],
  report: (_, { wsdl }) => sudsClient('RegSoap', wsdl),
  alsoRun: ({ wsdl }) => soap12Port.collect('RegSoap12', () => sudsClient('RegSoap12', wsdl)),
  tests: () => {
    describe('port RegSoap12 (suds has no SOAP 1.2: README)', () => {
      test('suds sends SOAP 1.1 there too, and the service answers it', () => {
        const r = soap12Port.get<Report>('RegSoap12');
        expect(r.check.make).toBe(
          (CALLS.check.vehicle as { CarMake: { CurrentTextValue: string } }).CarMake.CurrentTextValue,
        );
        // A SOAP 1.1 fault code: the envelope that went out was SOAP 1.1.
        expect(r.missing.code).toMatch(/(^|:)Client$/);
      });
    });
  },
});
