// `npm run bench -- --against REF`: the arguments it takes and the table it prints, kept apart from
// the processes it drives (bench/run.ts) so that both can be checked without running a load.

export interface BenchArgs {
  readonly short: boolean;
  readonly profile: boolean;
  readonly prepareOnly: boolean;
  readonly metered: boolean;
  readonly quick: boolean;
  readonly store: 'sqlite' | 'postgres';
  /** A git ref to build in a temporary worktree and measure beside the working tree. */
  readonly against?: string;
}

const FLAGS = new Set(['--short', '--profile', '--prepare', '--quick', '--metered']);

/** Reads the bench's command line; anything it does not know is an error, said in one line. */
export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  let store: BenchArgs['store'] = 'sqlite';
  let against: string | undefined;
  const seen = new Set<string>();
  const valueOf = (name: string, i: number): [string, number] => {
    const a = argv[i];
    if (a.startsWith(`${name}=`)) return [a.slice(name.length + 1), i];
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw new Error(`${name} needs a value`);
    return [v, i + 1];
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (FLAGS.has(a)) seen.add(a);
    else if (a === '--store' || a.startsWith('--store=')) {
      const [v, next] = valueOf('--store', i);
      if (v !== 'sqlite' && v !== 'postgres') throw new Error(`--store must be sqlite or postgres, got '${v}'`);
      store = v;
      i = next;
    } else if (a === '--against' || a.startsWith('--against=')) {
      const [v, next] = valueOf('--against', i);
      if (v === '' || !/^[\w./@^~-]+$/.test(v))
        throw new Error(`--against takes a git ref (a commit, tag or branch), got '${v}'`);
      against = v;
      i = next;
    } else
      throw new Error(
        `unknown argument '${a}'; known: ${[...FLAGS, '--store sqlite|postgres', '--against REF'].join(', ')}`,
      );
  }
  if (against !== undefined && (seen.has('--profile') || seen.has('--prepare') || store === 'postgres')) {
    throw new Error('--against cannot be combined with --profile, --prepare or --store postgres');
  }
  return {
    short: seen.has('--short'),
    profile: seen.has('--profile'),
    prepareOnly: seen.has('--prepare'),
    quick: seen.has('--quick'),
    metered: seen.has('--metered'),
    store,
    against,
  };
}

/**
 * The release tag `--short` compares against: the newest tag reachable from HEAD other than those on
 * HEAD itself (what `git describe --tags --abbrev=0 --exclude=...` prints), or null when there is none.
 */
export function previousReleaseTag(describeOutput: string | null): string | null {
  const t = describeOutput?.trim();
  return t ? t : null;
}

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return NaN;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** One target's measurements of one scenario, a value per round. */
export interface Samples {
  readonly rps: readonly number[];
  readonly cpuUs: readonly number[];
  readonly p99: readonly number[];
  readonly peakRss: readonly number[];
}

export interface ComparedRow {
  readonly scenario: string;
  readonly here: Samples;
  readonly ref: Samples;
  /** The bare Express app replaying the working tree's answers, in the same rounds (absent: not run). */
  readonly express?: Samples;
}

const fmt = (x: number, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : '-');

/** Median of per-round ratios a/b: each round's pair ran back to back, so the noise between rounds cancels. */
export function roundRatio(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  const ratios: number[] = [];
  for (let i = 0; i < n; i++) if (b[i] > 0) ratios.push(a[i] / b[i]);
  return median(ratios);
}

/**
 * The side-by-side table: per scenario the working tree and REF (medians over the rounds), and the
 * ratio working tree / REF taken round by round (CPU a request below 1.00 is the working tree
 * cheaper; requests/s above 1.00 is it faster); then the same against bare Express when it ran.
 */
export function comparisonTable(refName: string, rows: readonly ComparedRow[]): string {
  const withExpress = rows.some((r) => r.express);
  const head = [
    'scenario',
    'req/s here',
    `req/s ${refName}`,
    'req/s ratio',
    'CPU us/req here',
    `CPU us/req ${refName}`,
    'CPU ratio',
    'p99 ms here',
    `p99 ms ${refName}`,
    'peak RSS MB here',
    `peak RSS MB ${refName}`,
  ];
  if (withExpress) head.push('bare Express CPU us/req', 'CPU ratio to Express', 'req/s % of Express');
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const r of rows) {
    const cells = [
      r.scenario,
      fmt(median(r.here.rps)),
      fmt(median(r.ref.rps)),
      fmt(roundRatio(r.here.rps, r.ref.rps), 2),
      fmt(median(r.here.cpuUs)),
      fmt(median(r.ref.cpuUs)),
      fmt(roundRatio(r.here.cpuUs, r.ref.cpuUs), 2),
      fmt(median(r.here.p99), 1),
      fmt(median(r.ref.p99), 1),
      fmt(Math.max(...r.here.peakRss)),
      fmt(Math.max(...r.ref.peakRss)),
    ];
    if (withExpress) {
      const e = r.express;
      cells.push(
        e ? fmt(median(e.cpuUs)) : '-',
        e ? fmt(roundRatio(r.here.cpuUs, e.cpuUs), 2) : '-',
        e ? `${fmt(100 * roundRatio(r.here.rps, e.rps))} %` : '-',
      );
    }
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

/** BENCH_HERE_ENV: `NAME=value` pairs separated by spaces, for the working tree's service only. */
export function parseEnvList(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of text.split(/\s+/).filter(Boolean)) {
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(pair);
    if (!m) throw new Error(`BENCH_HERE_ENV: '${pair}' is not NAME=value`);
    env[m[1]] = m[2];
  }
  return env;
}
