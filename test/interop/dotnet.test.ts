// .NET: Mono's `wsdl` generates a proxy from the live ?WSDL once per protocol it offers (SOAP,
// SOAP12, HttpGet, HttpPost), `mcs` compiles each with clients/dotnet/Client.cs, and the program
// calls the service through it. One server and one build per run.

import fs from 'node:fs';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server';
import { callArgs, describeCalls, parseReport, type Report, type Transport } from './calls';
import { BUILD_TIMEOUT_MS, CLIENTS, complaints, debianVersion, describeToolkit, freshBuildDir, Reports, run, type Toolkit } from './harness';
import { testTableAgrees, WorksWith } from './works-with';

const TOOLKIT: Toolkit = { id: 'dotnet', title: '.NET (Mono wsdl + mcs)', packages: ['mono-complete'], commands: ['wsdl', 'mcs', 'mono'] };

/** The transport each of wsdl's -protocol values produces a proxy for. */
const PROTOCOLS: ReadonlyArray<readonly [Transport, string]> = [
  ['SOAP 1.1', 'SOAP'],
  ['SOAP 1.2', 'SOAP12'],
  ['HTTP GET', 'HttpGet'],
  ['HTTP POST', 'HttpPost'],
];

const works = new WorksWith({
  id: '1-dotnet',
  stack: '.NET (C#)',
  toolkit: 'Mono `wsdl` proxy + `mcs`',
  version: () => `mono-complete ${debianVersion('mono-complete')}`,
  notes: 'One proxy per `wsdl -protocol:` value. On HTTP GET/POST errors read the body from `WebException.Response`.',
});

describeToolkit(TOOLKIT, () => {
  let server: TestServer;
  const reports = new Reports<Transport>();
  const generated = new Map<Transport, string>();

  beforeAll(async () => {
    server = await startServer();
    const dir = freshBuildDir(TOOLKIT.id);
    const wsdl = `${server.url}/api/reg.asmx?WSDL`;
    await Promise.all(
      PROTOCOLS.map(([transport, protocol]) =>
        reports.collect(transport, async () => {
          const out = path.join(dir, protocol);
          fs.mkdirSync(out);
          const gen = await run('wsdl', ['-nologo', `-protocol:${protocol}`, '-namespace:RegProxy', `-out:${path.join(out, 'Reg.cs')}`, wsdl]);
          generated.set(transport, gen.stdout + gen.stderr);
          const exe = path.join(out, 'client.exe');
          await run('mcs', ['-nologo', `-out:${exe}`, '-r:System.Web.Services', '-r:System.Xml', '-r:System.EnterpriseServices', path.join(CLIENTS, 'dotnet', 'Client.cs'), path.join(out, 'Reg.cs')]);
          const { stdout } = await run('mono', [exe, `${server.url}/api/reg.asmx`, ...callArgs()]);
          return parseReport(stdout);
        }),
      ),
    );
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    works.save();
    await server?.close();
  });

  for (const [transport, protocol] of PROTOCOLS) {
    describe(`${transport} (wsdl -protocol:${protocol})`, () => {
      test('wsdl generates the proxy from ?WSDL without a warning', () => {
        reports.get(transport); // fails with the build error, if any
        expect(complaints(generated.get(transport) ?? '')).toEqual([]);
      });
      describeCalls(transport, () => reports.get<Report>(transport), works);
    });
  }

  testTableAgrees(works);
});
