// The console's service overview, from the service's own Prometheus text (prom-client; with
// WORKERS > 1 every worker's together): lookups by outcome since start, the latency p50 and p99
// estimated from the request-duration histogram's buckets (the upper bound of the bucket the
// quantile falls in), and, from a reading taken every minute and kept for an hour, lookups and
// refusals a minute and each minute's p99, and each upstream provider's breaker and calls.
// Lookups are the five lookup transports only: a help page, a probe, a scrape, or a request for a
// path that serves nothing (a mistaken GET /admin/api/users on the public port is transport
// "other", UNKNOWN_OPERATION) is not a lookup.

const SAMPLE_RE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\} ([0-9.eE+-]+|NaN|\+Inf)$/;
const LABEL_RE = /(\w+)="((?:[^"\\]|\\.)*)"/g;
const LOOKUP_TRANSPORTS = new Set(['soap11', 'soap12', 'get', 'post', 'json']);
/** Error codes that refuse the caller (credit, daily limit, rate): docs/interface.md's refusals. */
const REFUSALS = new Set(['OUT_OF_CREDIT', 'DAILY_LIMIT_REACHED', 'RATE_LIMITED']);
/** How often a reading is kept, and how many: an hour of minutes. */
const OVERVIEW_EVERY_MS = 60_000;
const KEPT = 61;

/** One reading of the counters, cumulative since the service started. */
interface Reading {
  readonly at: number;
  /** Lookups answered, by outcome (ok, or the error code). */
  readonly outcomes: Record<string, number>;
  /** Lookups by upper bound of the duration bucket (cumulative, as Prometheus keeps them). */
  readonly buckets: Map<number, number>;
  /** Each provider's breaker state and calls by outcome. */
  readonly upstreams: Map<string, { breaker: string; calls: Record<string, number> }>;
}

interface Minute {
  /** The end of the span, ms since the epoch, and its length (a minute, or less for the last). */
  readonly at: number;
  readonly ms: number;
  /** Lookups answered in it, and those of them refused for credit, daily limit or rate. */
  readonly lookups: number;
  readonly refusals: number;
  /** Seconds; null when it had no lookup. */
  readonly p99: number | null;
}

interface UpstreamState {
  readonly provider: string;
  /** closed, open, half_open. */
  readonly breaker: string;
  /** Calls in the span the minutes cover, by outcome (found, not_found, transient, ..., breaker_open). */
  readonly calls: Record<string, number>;
}

interface Overview {
  /** When it was read (ms since the epoch). */
  readonly at: number;
  /** Lookups answered since start, by outcome (ok, or the error code). */
  readonly requests: Record<string, number>;
  /** Seconds; null while nothing was measured. */
  readonly latency: { readonly p50: number | null; readonly p99: number | null };
  /** Up to the last hour, oldest first. */
  readonly minutes: readonly Minute[];
  readonly upstreams: readonly UpstreamState[];
}

function labels(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(LABEL_RE)) out[m[1]] = m[2];
  return out;
}

function quantile(buckets: Map<number, number>, q: number): number | null {
  const bounds = [...buckets.keys()].sort((a, b) => a - b);
  const total = buckets.get(Infinity) ?? 0;
  if (total === 0) return null;
  for (const b of bounds) if ((buckets.get(b) ?? 0) >= q * total) return Number.isFinite(b) ? b : null;
  return null;
}

function upstreamOf(r: Reading, provider: string): { breaker: string; calls: Record<string, number> } {
  let u = r.upstreams.get(provider);
  if (!u) r.upstreams.set(provider, (u = { breaker: 'closed', calls: {} }));
  return u;
}

/** One sample line of the text into the reading. */
function add(r: Reading, name: string, l: Record<string, string>, value: number): void {
  if (name === 'reglookup_requests_total' && LOOKUP_TRANSPORTS.has(l.transport))
    r.outcomes[l.outcome] = (r.outcomes[l.outcome] ?? 0) + value;
  else if (name === 'reglookup_request_duration_seconds_bucket' && LOOKUP_TRANSPORTS.has(l.transport)) {
    const le = l.le === '+Inf' ? Infinity : Number(l.le);
    r.buckets.set(le, (r.buckets.get(le) ?? 0) + value);
  } else if (name === 'reglookup_upstream_breaker_state' && value === 1) upstreamOf(r, l.provider).breaker = l.state;
  else if (name === 'reglookup_upstream_calls_total') {
    const calls = upstreamOf(r, l.provider).calls;
    calls[l.outcome] = (calls[l.outcome] ?? 0) + value;
  }
}

function readingOf(metricsText: string, at: number): Reading {
  const r: Reading = { at, outcomes: {}, buckets: new Map(), upstreams: new Map() };
  for (const line of metricsText.split('\n')) {
    const m = SAMPLE_RE.exec(line);
    if (m) add(r, m[1], labels(m[2]), Number(m[3]));
  }
  return r;
}

const sum = (o: Record<string, number>, keep: (k: string) => boolean = () => true) =>
  Object.entries(o).reduce((t, [k, v]) => (keep(k) ? t + v : t), 0);

/** What happened between two readings (a counter that went back, a restarted worker's: counted from 0). */
function minuteBetween(a: Reading, b: Reading): Minute {
  const delta = (x: number, y: number) => (y >= x ? y - x : y);
  const isRefusal = (k: string) => REFUSALS.has(k);
  const buckets = new Map<number, number>();
  for (const [le, n] of b.buckets) buckets.set(le, delta(a.buckets.get(le) ?? 0, n));
  return {
    at: b.at,
    ms: b.at - a.at,
    lookups: delta(sum(a.outcomes), sum(b.outcomes)),
    refusals: delta(sum(a.outcomes, isRefusal), sum(b.outcomes, isRefusal)),
    p99: quantile(buckets, 0.99),
  };
}

function upstreamsBetween(first: Reading, last: Reading): UpstreamState[] {
  return [...last.upstreams.entries()]
    .sort(([x], [y]) => x.localeCompare(y))
    .map(([provider, u]) => {
      const before = first.upstreams.get(provider)?.calls ?? {};
      const calls: Record<string, number> = {};
      for (const [outcome, n] of Object.entries(u.calls)) {
        const d = n >= (before[outcome] ?? 0) ? n - (before[outcome] ?? 0) : n;
        if (d > 0) calls[outcome] = d;
      }
      return { provider, breaker: u.breaker, calls };
    });
}

/**
 * Readings of the metrics every OVERVIEW_EVERY_MS, the last hour's kept, and the overview made from
 * them and one taken when asked. start() and stop() the timer (unref'd: it holds no process open).
 */
export class OverviewHistory {
  private readonly kept: Reading[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly metricsText: () => Promise<string>,
    private readonly everyMs = OVERVIEW_EVERY_MS,
  ) {}

  start(): void {
    const take = () => void this.take().catch(() => undefined);
    take();
    this.timer = setInterval(take, this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async take(): Promise<Reading> {
    const r = readingOf(await this.metricsText(), Date.now());
    this.kept.push(r);
    if (this.kept.length > KEPT) this.kept.shift();
    return r;
  }

  /** The overview now: a fresh reading, the minutes between the readings kept and up to it. Throws as metricsText. */
  async overview(): Promise<Overview> {
    const now = readingOf(await this.metricsText(), Date.now());
    return this.overviewAt(this.kept, now);
  }

  /**
   * A reading less than a tenth of the interval after the last kept one adds no span of its own (too
   * short to chart).
   */
  overviewAt(kept: readonly Reading[], now: Reading): Overview {
    const last = kept[kept.length - 1];
    const series = last && now.at - last.at < this.everyMs / 10 ? kept : [...kept, now];
    const minutes: Minute[] = [];
    for (let i = 1; i < series.length; i++) minutes.push(minuteBetween(series[i - 1], series[i]));
    return {
      at: now.at,
      requests: now.outcomes,
      latency: { p50: quantile(now.buckets, 0.5), p99: quantile(now.buckets, 0.99) },
      minutes,
      upstreams: upstreamsBetween(series[0], now),
    };
  }
}
