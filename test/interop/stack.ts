// The shape every stack's test file shares: start the real service, run the stack's client once per
// transport (all in parallel; a broken client fails only its own transport's tests), hold each
// transport's report to what calls.ts asserts, save the stack's "Works with" row and stop the
// service after the file, and check the committed table last. A stack file supplies only what is
// its own: how its client is generated, built and run, and any tests of its own.
// (Not in harness.ts: works-with.ts reads BUILD_ROOT from harness.ts as it loads.)

import { startServer, type TestServer } from '../helpers/server';
import { describeCalls, type Report, type Transport } from './calls';
import { BUILD_TIMEOUT_MS, describeToolkit, Reports, type Toolkit } from './harness';
import { testTableAgrees, type WorksWith } from './works-with';

/** The service under test, as the clients are pointed at it. */
export interface LiveService {
  /** http://127.0.0.1:PORT/api/reg.asmx, where the calls go. */
  readonly endpoint: string;
  /** The endpoint's ?WSDL, which the toolkits generate or load their clients from. */
  readonly wsdl: string;
}

/** One transport a stack is tested over; a stack file adds what its client needs (a port, a mode). */
export interface StackTransport {
  readonly transport: Transport;
  /** Names the transport's describe block, `${transport} (${label})`: e.g. 'port RegSoap12'. */
  readonly label: string;
}

export interface Stack<E extends StackTransport, P> {
  readonly toolkit: Toolkit;
  readonly works: WorksWith;
  readonly transports: readonly E[];
  /** Once, before any client runs (a build folder, shared generator steps); its result goes to report and alsoRun. */
  readonly prepare?: (service: LiveService) => P | Promise<P>;
  /** Generates, builds and runs the client for one transport and gives its report. */
  readonly report: (entry: E, service: LiveService, prepared: P) => Promise<Report>;
  /** More client runs, in parallel with the transports' (keep their results in the stack's own Reports). */
  readonly alsoRun?: (service: LiveService, prepared: P) => Promise<void>;
  /** Tests of the stack's own in each transport's describe block, before the calls' tests. */
  readonly transportTests?: (entry: E, report: () => Report) => void;
  /** Tests of the stack's own after the transports' blocks (the table check stays last). */
  readonly tests?: (report: (transport: Transport) => Report) => void;
}

/**
 * A stack's whole test file: describeToolkit, one server, the reports, describeCalls per transport, testTableAgrees.
 */
export function describeStack<E extends StackTransport, P = undefined>(stack: Stack<E, P>): void {
  describeToolkit(stack.toolkit, () => {
    let server: TestServer | undefined;
    const reports = new Reports<Transport>();
    const report = (transport: Transport) => reports.get<Report>(transport);

    beforeAll(async () => {
      server = await startServer();
      const endpoint = `${server.url}/api/reg.asmx`;
      const service: LiveService = { endpoint, wsdl: `${endpoint}?WSDL` };
      const prepared = (await stack.prepare?.(service)) as P;
      await Promise.all([
        ...stack.transports.map((entry) =>
          reports.collect(entry.transport, () => stack.report(entry, service, prepared)),
        ),
        stack.alsoRun?.(service, prepared),
      ]);
    }, BUILD_TIMEOUT_MS);

    afterAll(async () => {
      stack.works.save();
      await server?.close();
    });

    for (const entry of stack.transports) {
      describe(`${entry.transport} (${entry.label})`, () => {
        stack.transportTests?.(entry, () => report(entry.transport));
        describeCalls(entry.transport, () => report(entry.transport), stack.works);
      });
    }

    stack.tests?.(report);
    testTableAgrees(stack.works);
  });
}
