// .NET: Mono's `wsdl` generates a proxy from the live ?WSDL once per protocol it offers (SOAP,
// SOAP12, HttpGet, HttpPost), `mcs` compiles each with clients/dotnet/Client.cs, and the program
// calls the service through it. One server and one build per run.

import fs from 'node:fs';
import path from 'node:path';
import { callArgs, type Transport } from './calls';
import { CLIENTS, complaints, debianVersion, freshBuildDir, run, runClient, type Toolkit } from './harness';
import { describeStack } from './stack';
import { WorksWith } from './works-with';

const TOOLKIT: Toolkit = {
  id: 'dotnet',
  title: '.NET (Mono wsdl + mcs)',
  packages: ['mono-complete'],
  commands: ['wsdl', 'mcs', 'mono'],
};

/** The transport each of wsdl's -protocol values produces a proxy for. */
const PROTOCOLS = (
  [
    ['SOAP 1.1', 'SOAP'],
    ['SOAP 1.2', 'SOAP12'],
    ['HTTP GET', 'HttpGet'],
    ['HTTP POST', 'HttpPost'],
  ] as const
).map(([transport, protocol]) => ({ transport, protocol, label: `wsdl -protocol:${protocol}` }));

const works = new WorksWith({
  id: '1-dotnet',
  stack: '.NET (C#)',
  toolkit: 'Mono `wsdl` proxy + `mcs`',
  version: () => `mono-complete ${debianVersion('mono-complete')}`,
  notes: 'One proxy per `wsdl -protocol:` value. On HTTP GET/POST errors read the body from `WebException.Response`.',
});

/** What wsdl printed while generating each transport's proxy. */
const generated = new Map<Transport, string>();

describeStack({
  toolkit: TOOLKIT,
  works,
  transports: PROTOCOLS,
  prepare: () => freshBuildDir(TOOLKIT.id),
  report: async ({ transport, protocol }, { endpoint, wsdl }, dir) => {
    const out = path.join(dir, protocol);
    fs.mkdirSync(out);
    const gen = await run('wsdl', [
      '-nologo',
      `-protocol:${protocol}`,
      '-namespace:RegProxy',
      `-out:${path.join(out, 'Reg.cs')}`,
      wsdl,
    ]);
    generated.set(transport, gen.stdout + gen.stderr);
    const exe = path.join(out, 'client.exe');
    await run('mcs', [
      '-nologo',
      `-out:${exe}`,
      '-r:System.Web.Services',
      '-r:System.Xml',
      '-r:System.EnterpriseServices',
      path.join(CLIENTS, 'dotnet', 'Client.cs'),
      path.join(out, 'Reg.cs'),
    ]);
    return runClient('mono', [exe, endpoint, ...callArgs()]);
  },
  transportTests: ({ transport }, report) => {
    test('wsdl generates the proxy from ?WSDL without a warning', () => {
      report(); // fails with the build error, if any
      expect(complaints(generated.get(transport) ?? '')).toEqual([]);
    });
  },
});
