// C/C++: gSOAP's wsdl2h reads the live ?WSDL (-R: also the HTTP bindings, -N: one proxy class per
// binding), soapcpp2 generates the C++ proxies, g++ compiles them with clients/gsoap/client.cpp.
// wsdl2h's header makes every proxy speak SOAP 1.2 once a WSDL has a SOAP 1.2 binding, so SOAP 1.1
// takes a second soapcpp2 run with -1 (see README). Both builds are compiled in parallel.

import fs from 'node:fs';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server';
import { callArgs, describeCalls, parseReport, type Report, type Transport } from './calls';
import { BUILD_TIMEOUT_MS, CLIENTS, complaints, debianVersion, describeToolkit, freshBuildDir, Reports, run, type Toolkit } from './harness';
import { testTableAgrees, WorksWith } from './works-with';

const IMPORT = '/usr/share/gsoap/import';

const TOOLKIT: Toolkit = {
  id: 'gsoap',
  title: 'C++ (gSOAP wsdl2h + soapcpp2)',
  packages: ['gsoap', 'libgsoap-dev', 'g++'],
  commands: ['wsdl2h', 'soapcpp2', 'g++', 'pkg-config'],
  files: ['/usr/include/stdsoap2.h', `${IMPORT}/stlvector.h`],
  check: ['pkg-config', '--exists', 'gsoap++'],
};

/** Client mode, and which soapcpp2 build it runs in: "soap11" (soapcpp2 -1) or "soap12" (as wsdl2h sets it up). */
const MODES: ReadonlyArray<readonly [Transport, string, 'soap11' | 'soap12', string]> = [
  ['SOAP 1.1', 'soap', 'soap11', 'RegSoapProxy, soapcpp2 -1'],
  ['SOAP 1.2', 'soap12', 'soap12', 'RegSoap12Proxy'],
  ['HTTP GET', 'get', 'soap11', 'RegHttpGetProxy'],
  ['HTTP POST', 'post', 'soap11', 'RegHttpPostProxy'],
];

const works = new WorksWith({
  id: '6-gsoap',
  stack: 'C/C++',
  toolkit: 'gSOAP `wsdl2h -R` + `soapcpp2` + g++',
  version: () => `gsoap ${debianVersion('gsoap')}, libgsoap-dev ${debianVersion('libgsoap-dev')}`,
  notes: 'SOAP 1.1 needs `soapcpp2 -1`. HTTP GET: the caller appends the query string (`soap_url_query`). HTTP POST: clear `soap->http_content` before each call.',
});

describeToolkit(TOOLKIT, () => {
  let server: TestServer;
  const reports = new Reports<Transport>();
  const limits = new Reports<'soap on the SOAP 1.2 build' | 'post without the workaround'>();
  let wsdl2hOutput = '';

  beforeAll(async () => {
    server = await startServer();
    const dir = freshBuildDir(TOOLKIT.id);
    const header = path.join(dir, 'reg.h');
    const flags = (await run('pkg-config', ['--cflags', '--libs', 'gsoap++'])).stdout.trim().split(/\s+/);

    const builds = new Map<string, Promise<string>>();
    const build = (name: 'soap11' | 'soap12') => {
      if (!builds.has(name)) {
        builds.set(
          name,
          (async () => {
            const gen = path.join(dir, name);
            fs.mkdirSync(gen);
            await run('soapcpp2', [...(name === 'soap11' ? ['-1'] : []), '-j', '-C', '-x', '-L', '-d', gen, `-I${IMPORT}`, header]);
            const exe = path.join(gen, 'client');
            const sources = ['soapC.cpp', 'soapRegSoapProxy.cpp', 'soapRegSoap12Proxy.cpp', 'soapRegHttpGetProxy.cpp', 'soapRegHttpPostProxy.cpp'].map((f) => path.join(gen, f));
            await run('g++', ['-O0', '-w', `-I${gen}`, '-o', exe, path.join(CLIENTS, 'gsoap', 'client.cpp'), ...sources, ...flags], { timeoutMs: BUILD_TIMEOUT_MS });
            return exe;
          })(),
        );
      }
      return builds.get(name) as Promise<string>;
    };

    let generated: Promise<void> | null = null;
    const wsdl2h = () =>
      (generated ??= run('wsdl2h', ['-R', '-Nreg', '-o', header, `${server.url}/api/reg.asmx?WSDL`]).then((r) => {
        wsdl2hOutput = r.stdout + r.stderr;
      }));

    await Promise.all(
      MODES.map(([transport, mode, buildName]) =>
        reports.collect(transport, async () => {
          await wsdl2h();
          const exe = await build(buildName);
          return parseReport((await run(exe, [mode, `${server.url}/api/reg.asmx`, ...callArgs()])).stdout);
        }),
      ),
    );
    // Re-check the two limitations README.md documents, so that a gSOAP that fixes them is noticed.
    await Promise.all([
      limits.collect('soap on the SOAP 1.2 build', async () => parseReport((await run(await build('soap12'), ['soap', `${server.url}/api/reg.asmx`, ...callArgs()])).stdout)),
      limits.collect('post without the workaround', async () => parseReport((await run(await build('soap11'), ['post-unfixed', `${server.url}/api/reg.asmx`, ...callArgs()])).stdout)),
    ]);
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    works.save();
    await server?.close();
  });

  test('wsdl2h reads ?WSDL, all four bindings included, without a warning', () => {
    reports.get('SOAP 1.2');
    expect(complaints(wsdl2hOutput)).toEqual([]);
  });

  for (const [transport, , , proxy] of MODES) {
    describe(`${transport} (${proxy})`, () => describeCalls(transport, () => reports.get<Report>(transport), works));
  }

  describe('limitations documented in README.md', () => {
    test('without soapcpp2 -1, RegSoapProxy speaks SOAP 1.2 (a Sender fault)', () => {
      expect(limits.get<Report>('soap on the SOAP 1.2 build').missing.code).toMatch(/(^|:)Sender$/);
    });
    test('without clearing soap->http_content, the second REST POST goes out with the last response type', () => {
      const r = limits.get<Report>('post without the workaround');
      expect(r.check.error).toBeUndefined();
      expect(r.usa.detail).toContain('UNSUPPORTED_MEDIA_TYPE');
    });
  });

  testTableAgrees(works);
});
