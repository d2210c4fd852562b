// Java: Apache Axis 1.4 WSDL2Java generates a stub from the live ?WSDL, javac compiles it with
// clients/java/Client.java, and the program calls the service through it. Axis 1.x generates
// stubs for SOAP 1.1 ports only (see README), so that is the transport tested here.

import fs from 'node:fs';
import path from 'node:path';
import { callArgs } from './calls';
import { CLIENTS, complaints, debianVersion, freshBuildDir, run, runClient, type Toolkit } from './harness';
import { describeStack } from './stack';
import { WorksWith } from './works-with';

const JARS = ['axis', 'axis-jaxrpc', 'axis-saaj', 'wsdl4j', 'commons-discovery', 'commons-logging'].map(
  (j) => `/usr/share/java/${j}.jar`,
);
// Attachment support; Axis logs a warning on every run without them, so use them when present.
const OPTIONAL_JARS = ['javax.activation', 'javax.mail']
  .map((j) => `/usr/share/java/${j}.jar`)
  .filter((f) => fs.existsSync(f));
const CLASSPATH = [...JARS, ...OPTIONAL_JARS].join(':');

const TOOLKIT: Toolkit = {
  id: 'java',
  title: 'Java (Apache Axis 1.4 WSDL2Java)',
  packages: ['libaxis-java', 'openjdk-17-jdk-headless'],
  commands: ['java', 'javac'],
  files: JARS,
};

const works = new WorksWith({
  id: '2-java',
  stack: 'Java',
  toolkit: 'Apache Axis 1.4 `WSDL2Java` + `javac`',
  version: () =>
    `libaxis-java ${debianVersion('libaxis-java')}, openjdk-17-jdk-headless ${debianVersion('openjdk-17-jdk-headless')}`,
  notes: 'Axis 1.x generates stubs for the SOAP 1.1 port only.',
});

/** What WSDL2Java printed, and the files it generated. */
let generatorOutput = '';
let generatedFiles: string[] = [];

describeStack({
  toolkit: TOOLKIT,
  works,
  transports: [{ transport: 'SOAP 1.1', label: 'port RegSoap' }],
  prepare: () => freshBuildDir(TOOLKIT.id),
  report: async (_, { endpoint, wsdl }, dir) => {
    const src = path.join(dir, 'src');
    const gen = await run('java', [
      '-cp',
      CLASSPATH,
      'org.apache.axis.wsdl.WSDL2Java',
      '-o',
      src,
      '-p',
      'regproxy',
      wsdl,
    ]);
    generatorOutput = gen.stdout + gen.stderr;
    generatedFiles = fs.readdirSync(path.join(src, 'regproxy')).sort();
    const classes = path.join(dir, 'classes');
    const sources = [
      ...generatedFiles.map((f) => path.join(src, 'regproxy', f)),
      path.join(CLIENTS, 'java', 'Client.java'),
    ];
    await run('javac', ['-nowarn', '-encoding', 'UTF-8', '-cp', CLASSPATH, '-d', classes, ...sources]);
    return runClient('java', ['-cp', `${classes}:${CLASSPATH}`, 'Client', endpoint, ...callArgs()]);
  },
  transportTests: (_, report) => {
    test('WSDL2Java generates the stub and every schema type from ?WSDL without a warning', () => {
      report();
      expect(complaints(generatorOutput)).toEqual([]);
      for (const type of ['Vehicle', 'VehicleData', 'Composite', 'IntegerValue', 'TextValue', 'UKMOTData', 'UKTest']) {
        expect(generatedFiles).toContain(`${type}.java`);
      }
      // The documented limitation: the SOAP 1.2 and HTTP ports get no stub.
      expect(generatedFiles.filter((f) => f.endsWith('BindingStub.java'))).toEqual(['RegSoap_BindingStub.java']);
    });
  },
});
