// Java: Apache Axis 1.4 WSDL2Java generates a stub from the live ?WSDL, javac compiles it with
// clients/java/Client.java, and the program calls the service through it. Axis 1.x generates
// stubs for SOAP 1.1 ports only (see README), so that is the transport tested here.

import fs from 'node:fs';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server';
import { callArgs, describeCalls, parseReport, type Report } from './calls';
import { BUILD_TIMEOUT_MS, CLIENTS, complaints, debianVersion, describeToolkit, freshBuildDir, Reports, run, type Toolkit } from './harness';
import { testTableAgrees, WorksWith } from './works-with';

const JARS = ['axis', 'axis-jaxrpc', 'axis-saaj', 'wsdl4j', 'commons-discovery', 'commons-logging'].map((j) => `/usr/share/java/${j}.jar`);
// Attachment support; Axis logs a warning on every run without them, so use them when present.
const OPTIONAL_JARS = ['javax.activation', 'javax.mail'].map((j) => `/usr/share/java/${j}.jar`).filter((f) => fs.existsSync(f));

const TOOLKIT: Toolkit = { id: 'java', title: 'Java (Apache Axis 1.4 WSDL2Java)', packages: ['libaxis-java', 'openjdk-17-jdk-headless'], commands: ['java', 'javac'], files: JARS };

const works = new WorksWith({
  id: '2-java',
  stack: 'Java',
  toolkit: 'Apache Axis 1.4 `WSDL2Java` + `javac`',
  version: () => `libaxis-java ${debianVersion('libaxis-java')}, openjdk-17-jdk-headless ${debianVersion('openjdk-17-jdk-headless')}`,
  notes: 'Axis 1.x generates stubs for the SOAP 1.1 port only.',
});

describeToolkit(TOOLKIT, () => {
  let server: TestServer;
  const reports = new Reports<'SOAP 1.1'>();
  let generatorOutput = '';
  let generatedFiles: string[] = [];

  beforeAll(async () => {
    server = await startServer();
    const dir = freshBuildDir(TOOLKIT.id);
    const classpath = [...JARS, ...OPTIONAL_JARS].join(':');
    await reports.collect('SOAP 1.1', async () => {
      const src = path.join(dir, 'src');
      const gen = await run('java', ['-cp', classpath, 'org.apache.axis.wsdl.WSDL2Java', '-o', src, '-p', 'regproxy', `${server.url}/api/reg.asmx?WSDL`]);
      generatorOutput = gen.stdout + gen.stderr;
      generatedFiles = fs.readdirSync(path.join(src, 'regproxy')).sort();
      const classes = path.join(dir, 'classes');
      const sources = [...generatedFiles.map((f) => path.join(src, 'regproxy', f)), path.join(CLIENTS, 'java', 'Client.java')];
      await run('javac', ['-nowarn', '-encoding', 'UTF-8', '-cp', classpath, '-d', classes, ...sources]);
      const { stdout } = await run('java', ['-cp', `${classes}:${classpath}`, 'Client', `${server.url}/api/reg.asmx`, ...callArgs()]);
      return parseReport(stdout);
    });
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    works.save();
    await server?.close();
  });

  describe('SOAP 1.1 (port RegSoap)', () => {
    test('WSDL2Java generates the stub and every schema type from ?WSDL without a warning', () => {
      reports.get('SOAP 1.1');
      expect(complaints(generatorOutput)).toEqual([]);
      for (const type of ['Vehicle', 'VehicleData', 'Composite', 'IntegerValue', 'TextValue', 'UKMOTData', 'UKTest']) {
        expect(generatedFiles).toContain(`${type}.java`);
      }
      // The documented limitation: the SOAP 1.2 and HTTP ports get no stub.
      expect(generatedFiles.filter((f) => f.endsWith('BindingStub.java'))).toEqual(['RegSoap_BindingStub.java']);
    });
    describeCalls('SOAP 1.1', () => reports.get<Report>('SOAP 1.1'), works);
  });

  testTableAgrees(works);
});
