// Every shell example of the README and docs/ is either run here or named below with the reason it
// is not (a new example that is neither fails the first test, so the docs cannot grow examples
// that nobody runs):
//  - HTTP examples (blocks of curl commands) run with the real curl against a server on the bundled
//    sample data, each expected to answer 200, or the status the example's own comment shows
//    (`#   HTTP/1.1 404 Not Found`);
//  - the admin API's examples (curl to localhost:9090 with $ADMIN_TOKEN) run in order against an
//    admin listener on the same store, each expected to answer 200 or the status its comment shows;
//  - the `reglookup users` walk-through runs line by line, in order, on a store of its own, each
//    line expected to exit 0.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/cli';
import { startServer, type TestServer } from '../helpers/server';
import { startAdmin, TOKENS } from '../helpers/admin';

jest.setTimeout(120_000);

const ROOT = path.resolve(__dirname, '../..');
const PAGES = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

interface Block {
  readonly where: string;
  readonly body: string;
}

const BLOCKS: Block[] = PAGES.flatMap((page) => {
  const text = fs.readFileSync(path.join(ROOT, page), 'utf8');
  return [...text.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm)].map((m) => ({
    where: `${page}:${text.slice(0, m.index).split('\n').length}`,
    body: m[1],
  }));
});

/** The commands of a block: continuation lines and quoted newlines joined; comments kept apart. */
function commands(body: string): string[] {
  const out: string[] = [];
  let current = '';
  let quote: string | null = null;
  for (const line of body.split('\n')) {
    if (quote === null && current === '' && /^\s*(#|$)/.test(line)) {
      out.push(line.trim());
      continue;
    }
    current += (current ? '\n' : '') + line;
    for (const ch of line) {
      if (quote === null && (ch === "'" || ch === '"')) quote = ch;
      else if (ch === quote) quote = null;
    }
    if (quote === null && !line.endsWith('\\')) {
      out.push(current);
      current = '';
    }
  }
  return out.filter((c) => c !== '');
}

const isCurl = (c: string) => /^curl\s/.test(c);
const isUsers = (c: string) => /^npx reglookup users\s/.test(c);
const isComment = (c: string) => c.startsWith('#');

/** Blocks not run here, by their first line, and why. */
const NOT_RUN: Record<string, string> = {
  'npm install && npm start':
    'the two commands: .ci/run installs and test/deploy/production.test.ts starts the server as npm start does',
  'npm test': 'the test command itself: npm run test:all runs its tests',
  'npm run test:all': 'the test command itself: .ci/run runs it',
};
const NOT_RUN_PATTERNS: Array<[RegExp, string]> = [
  [
    /reglookup-refresh@|docker-compose\.refresh\.yml/,
    'the daily refresh: test/deploy/refresh.test.ts verifies its units and compose file and runs deploy/refresh.sh',
  ],
  [
    /^npx reglookup (import|export|backup)\b|reglookup (import|export)\b/,
    'import, export and backup on files of the reader: test/integration/data.test.ts and cli-guards.test.ts run each form',
  ],
  [/^(DATABASE_URL=\S+ )?npx reglookup export/, 'a move between stores: test/store/data.test.ts'],
  [
    /^mkdir -p backups/,
    'backup: test/integration/data.test.ts, and the block itself in test/cli/sqlite-layout.test.ts',
  ],
  [
    /^rm -f data\/reglookup\.db-wal|^npx reglookup migrate --to 6/,
    'restore, and going back to 0.3: test/cli/sqlite-layout.test.ts runs these blocks as written',
  ],
  [
    /^cd \/opt\/reglookup|^useradd|^sudo |^systemctl|^install -/,
    'the production install and its systemd unit: test/deploy/production.test.ts',
  ],
  [
    /^export DATABASE_URL=postgres|^DATABASE_URL=postgres/,
    'a PostgreSQL of the reader: test/store and test/redis/shared-limit.test.ts run the same settings',
  ],
  [
    /^docker |^# import a file from the host|^docker-compose/,
    'Docker: no engine on the test machines; test/deploy/deploy.test.ts validates the compose file and the image recipe',
  ],
  [
    /^npm run (bench|mutate|fuzz|faults|lint)|^npx stryker/,
    'the bench, mutation, fuzz, fault and lint runs: .ci/run runs bench --short, faults and lint',
  ],
  [/^TEST_DATABASE_URL=|^CI=true|^npx jest /, 'ways of running the tests themselves'],
  [/^printf 'operation,registration/, 'the batch round trip: test/integration/batch-docs.test.ts runs it as written'],
];

function notRunReason(block: Block): string | undefined {
  const first = commands(block.body)[0] ?? '';
  return NOT_RUN[first] ?? NOT_RUN_PATTERNS.find(([re]) => re.test(first))?.[1];
}

const isAdmin = (b: Block) => b.body.includes('localhost:9090');
const curlBlocks = BLOCKS.filter(
  (b) => commands(b.body).every((c) => isComment(c) || isCurl(c)) && commands(b.body).some(isCurl),
);
const httpBlocks = curlBlocks.filter((b) => !isAdmin(b));
const adminBlocks = curlBlocks.filter(isAdmin);
const usersBlocks = BLOCKS.filter(
  (b) => commands(b.body).every((c) => isComment(c) || isUsers(c)) && commands(b.body).some(isUsers),
);

test('every shell example is run here or says why not', () => {
  const unaccounted = BLOCKS.filter(
    (b) => !curlBlocks.includes(b) && !usersBlocks.includes(b) && notRunReason(b) === undefined,
  ).map((b) => `${b.where}: ${commands(b.body)[0]}`);
  expect(unaccounted).toEqual([]);
  expect(httpBlocks.length).toBeGreaterThanOrEqual(6);
  expect(usersBlocks.length).toBeGreaterThanOrEqual(1);
});

describe('HTTP examples', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startServer();
  });
  afterAll(() => srv.close());

  it.each(httpBlocks.map((b) => [b.where, b] as const))('%s', async (_where, block) => {
    const base = new URL(srv.url).origin;
    const cmds = commands(block.body);
    const script = [
      'curl() { command curl -sS --max-time 20 -o /dev/null -w "%{http_code}\\n" "$@"; }',
      block.body.replace(/http:\/\/localhost:8080/g, base),
    ].join('\n');
    // Asynchronously: the server answers from this very process.
    const r = await promisify(execFile)('sh', ['-c', script], { encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim().split('\n').map(Number)).toEqual(expectedStatuses(cmds));
  });
});

/** For each curl command: 200, or the status its following comment shows (`#   HTTP/1.1 404 Not Found`). */
function expectedStatuses(cmds: readonly string[]): number[] {
  const expected: number[] = [];
  cmds.forEach((c, i) => {
    if (!isCurl(c)) return;
    const shown = cmds.slice(i + 1).find((n) => !isCurl(n) && /^#\s+HTTP\/1\.1 (\d{3})/.test(n));
    const next = cmds.slice(i + 1).findIndex(isCurl);
    const shownAt = shown ? cmds.indexOf(shown, i + 1) : -1;
    expected.push(
      shown && (next === -1 || shownAt < i + 1 + next) ? Number(/HTTP\/1\.1 (\d{3})/.exec(shown)![1]) : 200,
    );
  });
  return expected;
}

describe('admin API examples', () => {
  it.each(adminBlocks.map((b) => [b.where, b] as const))(
    '%s runs in order against an admin listener',
    async (_where, block) => {
      const srv = await startServer();
      const admin = await startAdmin(srv.store, { metricsText: async () => '' });
      try {
        const script = [
          'curl() { command curl -sS --max-time 20 -o /dev/null -w "%{http_code}\\n" "$@"; }',
          block.body.replace(/http:\/\/localhost:9090/g, admin.url),
        ].join('\n');
        const r = await promisify(execFile)('sh', ['-c', script], {
          encoding: 'utf8',
          timeout: 60_000,
          env: { ...process.env, ADMIN_TOKEN: TOKENS[0].token },
        });
        expect(r.stderr).toBe('');
        expect(r.stdout.trim().split('\n').map(Number)).toEqual(expectedStatuses(commands(block.body)));
      } finally {
        await admin.close();
        await srv.close();
      }
    },
  );
});

describe('the reglookup users walk-through', () => {
  it.each(usersBlocks.map((b) => [b.where, b] as const))(
    '%s runs line by line on a store of its own',
    (_where, block) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-docs-'));
      try {
        const env = { DATABASE_URL: `sqlite:${path.join(dir, 'reglookup.db')}` };
        for (const c of commands(block.body).filter(isUsers)) {
          const args = c
            .replace(/\s+#.*$/, '')
            .replace(/^npx reglookup /, '')
            .trim()
            .split(/\s+/);
          const r = runCli(args, env);
          if (r.status !== 0) throw new Error(`'${c}' exited ${r.status}: ${r.stderr}`);
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
