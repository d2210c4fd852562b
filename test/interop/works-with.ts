// The "Works with" table, produced from what the tests exercised: each stack's test file records
// which calls passed over which transport; after the file, its row (stack, installed version,
// transports on which every call passed) goes to .build/works-with/<id>.json and the table is
// rewritten to .build/WORKS_WITH.md from all rows. The committed test/interop/WORKS_WITH.md is a
// copy of that file from a full run; the last test of each stack checks that it still agrees.

import fs from 'node:fs';
import path from 'node:path';
import { readmeTable } from '../helpers/readme';
import { SCENARIOS, TRANSPORTS, type Transport } from './calls';
import { BUILD_ROOT } from './harness';

export const COMMITTED_TABLE = path.resolve(__dirname, 'WORKS_WITH.md');
const ROWS = path.join(BUILD_ROOT, 'works-with');
const TABLE = path.join(BUILD_ROOT, 'WORKS_WITH.md');

export interface StackInfo {
  /** Row id and sort key, e.g. '1-dotnet'. */
  readonly id: string;
  /** The language or platform column. */
  readonly stack: string;
  /** The toolkit as a user knows it. */
  readonly toolkit: string;
  /** Installed version(s), read when the row is written (dpkg-query, or npm for Node). */
  readonly version: () => string;
  /** What a user of this toolkit has to know; details in README.md. */
  readonly notes?: string;
}

interface Row {
  readonly id: string;
  readonly stack: string;
  readonly toolkit: string;
  readonly version: string;
  readonly transports: Transport[];
  readonly notes: string;
}

export class WorksWith {
  private readonly passed = new Map<Transport, Set<string>>();

  constructor(readonly info: StackInfo) {}

  pass(transport: Transport, scenario: string): void {
    const set = this.passed.get(transport) ?? new Set<string>();
    set.add(scenario);
    this.passed.set(transport, set);
  }

  /** Transports over which every scenario passed, in the table's order. */
  transports(): Transport[] {
    return TRANSPORTS.filter((t) => SCENARIOS.every((s) => this.passed.get(t)?.has(s)));
  }

  /** Writes this stack's row and rewrites .build/WORKS_WITH.md from every row on disk. */
  save(): void {
    const row: Row = {
      id: this.info.id,
      stack: this.info.stack,
      toolkit: this.info.toolkit,
      version: this.info.version(),
      transports: this.transports(),
      notes: this.info.notes ?? '',
    };
    fs.mkdirSync(ROWS, { recursive: true });
    fs.writeFileSync(path.join(ROWS, `${row.id}.json`), JSON.stringify(row, null, 2) + '\n');
    fs.writeFileSync(TABLE, renderTable(readRows()));
  }
}

function readRows(): Row[] {
  return fs
    .readdirSync(ROWS)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(fs.readFileSync(path.join(ROWS, f), 'utf8')) as Row);
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function renderTable(rows: readonly Row[]): string {
  const lines = [
    '<!-- Produced by the interop tests (npx jest test/interop): copied from test/interop/.build/WORKS_WITH.md. -->',
    '',
    '| Stack | Toolkit | Version | Transports | Notes |',
    '|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${cell(r.stack)} | ${cell(r.toolkit)} | ${cell(r.version)} | ${r.transports.length ? r.transports.join(', ') : 'none'} | ${cell(r.notes)} |`,
    ),
    '',
    'Transports: a transport is listed when every call of the interop suite passed over it through the',
    "toolkit's generated client: Check, CheckUSA with a state, UKMOT (tests, failure reasons,",
    'ExtendedInformation), a registration that does not exist (an error carrying our message), a vehicle',
    'with empty composites, and text holding quotes, & and <>. Details and toolkit limitations:',
    '[test/interop/README.md](test/interop/README.md).',
    '',
  ];
  return lines.join('\n');
}

/** The transports the committed WORKS_WITH.md lists for a toolkit (matched on the Toolkit column). */
export function committedTransports(toolkit: string): Transport[] | null {
  if (!fs.existsSync(COMMITTED_TABLE)) return null;
  for (const line of fs.readFileSync(COMMITTED_TABLE, 'utf8').split('\n')) {
    const cells = line.split(/(?<!\\)\|/).map((c) => c.trim());
    if (cells.length >= 6 && cells[2] === cell(toolkit)) {
      return cells[4] === 'none' ? [] : (cells[4].split(', ') as Transport[]);
    }
  }
  return null;
}

/**
 * The last test of a stack: the committed table, and the README's Works-with table, must list what this run exercised.
 */
export function testTableAgrees(works: WorksWith): void {
  test(`WORKS_WITH.md and the README list the transports this run exercised for ${works.info.toolkit}`, () => {
    const committed = committedTransports(works.info.toolkit);
    if (committed === null)
      throw new Error(
        `${COMMITTED_TABLE} has no row for ${works.info.toolkit}; copy test/interop/.build/WORKS_WITH.md after a full run`,
      );
    expect(committed).toEqual(works.transports());
    const row = readmeTable('Stack', 'Toolkit', 'Version', 'Transports').rows.find(
      (r) => r.Toolkit === works.info.toolkit,
    );
    expect(row?.Transports.split(', ')).toEqual(works.transports().length ? works.transports() : ['none']);
  });
}
