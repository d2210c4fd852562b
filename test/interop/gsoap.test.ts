// C/C++: gSOAP's wsdl2h reads the live ?WSDL (-R: also the HTTP bindings, -N: one proxy class per
// binding), soapcpp2 generates the C++ proxies, g++ compiles them with clients/gsoap/client.cpp.
// wsdl2h's header makes every proxy speak SOAP 1.2 once a WSDL has a SOAP 1.2 binding, so SOAP 1.1
// takes a second soapcpp2 run with -1 (see README). Both builds are compiled in parallel.

import fs from 'node:fs';
import path from 'node:path';
import { callArgs, type Report } from './calls';
import {
  BUILD_TIMEOUT_MS,
  CLIENTS,
  complaints,
  debianVersion,
  freshBuildDir,
  Reports,
  run,
  runClient,
  type Toolkit,
} from './harness';
import { describeStack, type LiveService } from './stack';
import { WorksWith } from './works-with';

const IMPORT = '/usr/share/gsoap/import';

const TOOLKIT: Toolkit = {
  id: 'gsoap',
  title: 'C++ (gSOAP wsdl2h + soapcpp2)',
  packages: ['gsoap', 'libgsoap-dev', 'g++'],
  commands: ['wsdl2h', 'soapcpp2', 'g++', 'pkg-config'],
  files: ['/usr/include/stdsoap2.h', `${IMPORT}/stlvector.h`],
  check: ['pkg-config', '--exists', 'gsoap++'],
};

/** A soapcpp2 build: "soap11" (soapcpp2 -1) or "soap12" (as wsdl2h sets it up). */
type Build = 'soap11' | 'soap12';

/** Client mode, which build it runs in, and the proxy it uses (the label). */
const MODES = [
  { transport: 'SOAP 1.1', mode: 'soap', build: 'soap11', label: 'RegSoapProxy, soapcpp2 -1' },
  { transport: 'SOAP 1.2', mode: 'soap12', build: 'soap12', label: 'RegSoap12Proxy' },
  { transport: 'HTTP GET', mode: 'get', build: 'soap11', label: 'RegHttpGetProxy' },
  { transport: 'HTTP POST', mode: 'post', build: 'soap11', label: 'RegHttpPostProxy' },
] as const;

const works = new WorksWith({
  id: '6-gsoap',
  stack: 'C/C++',
  toolkit: 'gSOAP `wsdl2h -R` + `soapcpp2` + g++',
  version: () => `gsoap ${debianVersion('gsoap')}, libgsoap-dev ${debianVersion('libgsoap-dev')}`,
  notes:
    'SOAP 1.1 needs `soapcpp2 -1`. HTTP GET: the caller appends the query string (`soap_url_query`). HTTP POST: clear `soap->http_content` before each call.',
});

/** What wsdl2h printed. */
let wsdl2hOutput = '';

/**
 * The build folder and pkg-config's flags, then a function giving a build's client executable: wsdl2h
 * runs once, and soapcpp2 and g++ once per build, when a client first needs them.
 */
async function prepare({ wsdl }: LiveService): Promise<(name: Build) => Promise<string>> {
  const dir = freshBuildDir(TOOLKIT.id);
  const header = path.join(dir, 'reg.h');
  const flags = (await run('pkg-config', ['--cflags', '--libs', 'gsoap++'])).stdout.trim().split(/\s+/);

  let generated: Promise<void> | null = null;
  const wsdl2h = () =>
    (generated ??= run('wsdl2h', ['-R', '-Nreg', '-o', header, wsdl]).then((r) => {
      wsdl2hOutput = r.stdout + r.stderr;
    }));

  const builds = new Map<Build, Promise<string>>();
  return (name) => {
    if (!builds.has(name)) {
      builds.set(
        name,
        (async () => {
          await wsdl2h();
          const gen = path.join(dir, name);
          fs.mkdirSync(gen);
          await run('soapcpp2', [
            ...(name === 'soap11' ? ['-1'] : []),
            '-j',
            '-C',
            '-x',
            '-L',
            '-d',
            gen,
            `-I${IMPORT}`,
            header,
          ]);
          const exe = path.join(gen, 'client');
          const sources = [
            'soapC.cpp',
            'soapRegSoapProxy.cpp',
            'soapRegSoap12Proxy.cpp',
            'soapRegHttpGetProxy.cpp',
            'soapRegHttpPostProxy.cpp',
          ].map((f) => path.join(gen, f));
          await run(
            'g++',
            ['-O0', '-w', `-I${gen}`, '-o', exe, path.join(CLIENTS, 'gsoap', 'client.cpp'), ...sources, ...flags],
            { timeoutMs: BUILD_TIMEOUT_MS },
          );
          return exe;
        })(),
      );
    }
    return builds.get(name) as Promise<string>;
  };
}

/** The two limitations README.md documents, re-checked each run so that a gSOAP that fixes them is noticed. */
const limits = new Reports<'soap on the SOAP 1.2 build' | 'post without the workaround'>();

describeStack({
  toolkit: TOOLKIT,
  works,
  transports: MODES,
  prepare,
  report: async ({ mode, build: name }, { endpoint }, build) =>
    runClient(await build(name), [mode, endpoint, ...callArgs()]),
  alsoRun: async ({ endpoint }, build) => {
    await Promise.all([
      limits.collect('soap on the SOAP 1.2 build', async () =>
        runClient(await build('soap12'), ['soap', endpoint, ...callArgs()]),
      ),
      limits.collect('post without the workaround', async () =>
        runClient(await build('soap11'), ['post-unfixed', endpoint, ...callArgs()]),
      ),
    ]);
  },
  tests: (report) => {
    test('wsdl2h reads ?WSDL, all four bindings included, without a warning', () => {
      report('SOAP 1.2');
      expect(complaints(wsdl2hOutput)).toEqual([]);
    });

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
  },
});
