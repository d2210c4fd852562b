// Prometheus metrics (prom-client): what the service does, counted at the few places that know it.
// One registry per process, made when first asked for (the import counters are
// reached from code that runs outside a server too). The request path pays a few map lookups and
// additions per request: the counters' label children are looked up once and kept, never made per
// request, and the request counter is a plain tally that becomes Prometheus samples only when scraped.

import { messageOf } from '../core/errors';
import cluster from 'node:cluster';
import client from 'prom-client';
import type { ImportRun } from '../store/store';
import { VERSION } from './version';

/** Error codes that are a refusal of the caller (credit, quota, rate), counted on their own. */
const REFUSAL_CODES = ['OUT_OF_CREDIT', 'DAILY_LIMIT_REACHED', 'RATE_LIMITED'] as const;

// Seconds. Requests are served in well under a millisecond when cached and up to the request timeout.
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const STORE_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 1];

interface Latency {
  readonly bounds: readonly number[];
  /** Observations per bucket (not cumulative), in bounds order. */
  readonly buckets: Float64Array;
  sum: number;
  count: number;
}

interface Tally {
  readonly labels: { transport: string; operation: string; outcome: string };
  n: number;
}

export interface Metrics {
  readonly registry: client.Registry;
  /** One answered request (the shared finish listener). */
  request(transport: string, operation: string, outcome: string, seconds: number): void;
  /** One store read on the lookup path. */
  storeQuery(seconds: number): void;
  /** Records an import committed or rolled back. */
  imported(records: number, committed: boolean): void;
  /** The store became reachable (true) or not (false). */
  storeUp(up: boolean): void;
  /** Store calls refused because the store could not be reached. */
  storeUnavailable(calls: number): void;
  /** Where reglookup_callers_low_credit is counted from at each scrape (the store's accounts). */
  countLowCredit(count: () => Promise<number>): void;
  /**
   * One call to an upstream provider (retries included) and its outcome: found, not_found, invalid, transient,
   * permanent, timeout, breaker_open.
   */
  upstreamCall(provider: string, outcome: string, seconds: number): void;
  /**
   * A lookup the store did not hold, by what the upstream cache did: hit, miss, stale (served past its TTL while the
   * upstreams failed).
   */
  upstreamCache(operation: string, kind: 'hit' | 'miss' | 'stale'): void;
  /** A provider's circuit breaker changed state (closed, open, half_open). */
  upstreamBreaker(provider: string, state: string): void;
  /** What is left of a provider's allowance (RegCheck's credits), as it last said. */
  upstreamRemaining(provider: string, left: number): void;
  /** Calls a provider made against its quota (DVSA's), as a running count. */
  upstreamQuotaUsed(provider: string, calls: number): void;
  /** One credit taken from a caller (a lookup that found its record, by a caller with credits). */
  readonly creditSpent: () => void;
  /** Where the dependencies' gauges are read from at each scrape (Redis, the read replicas, the last import). */
  watchDependencies(sources: DependencySources): void;
}

/** What the dependency gauges read at each scrape; a source that is absent (or answers null) makes no series. */
export interface DependencySources {
  /** Whether the rate limiter's Redis answers now; null: no REDIS_URL. */
  readonly redisUp?: () => boolean | null;
  /** Each read replica (DATABASE_READ_URL, by position) and whether lookups read it now. */
  readonly replicas?: () => readonly { readonly replica: string; readonly inUse: boolean }[];
  /** The store's record of its latest import; null: none recorded. */
  readonly lastImport?: () => Promise<ImportRun | null>;
}

const UPSTREAM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const BREAKER_STATES = ['closed', 'open', 'half_open', 'isolated'];

/** The upstream providers' series (docs/upstream.md, "Metrics and logs"). */
function upstreamMetrics(
  registry: client.Registry,
): Pick<Metrics, 'upstreamCall' | 'upstreamCache' | 'upstreamBreaker' | 'upstreamRemaining' | 'upstreamQuotaUsed'> {
  const calls = new client.Counter({
    name: 'reglookup_upstream_calls_total',
    help: 'Calls to upstream providers (retries included), by provider and outcome',
    labelNames: ['provider', 'outcome'],
    registers: [registry],
  });
  const latency = new client.Histogram({
    name: 'reglookup_upstream_call_duration_seconds',
    help: 'Time an upstream call took, retries included, by provider',
    labelNames: ['provider'],
    buckets: UPSTREAM_BUCKETS,
    registers: [registry],
  });
  const cache = new client.Counter({
    name: 'reglookup_upstream_cache_total',
    help: 'Lookups the store did not hold, by operation and what the upstream cache did (hit, miss, stale)',
    labelNames: ['operation', 'result'],
    registers: [registry],
  });
  const breaker = new client.Gauge({
    name: 'reglookup_upstream_breaker_state',
    help: "Each provider's circuit breaker: 1 for its current state (closed, open, half_open), 0 for the others",
    labelNames: ['provider', 'state'],
    registers: [registry],
    aggregator: 'max',
  });
  const remaining = new client.Gauge({
    name: 'reglookup_upstream_remaining',
    help: "What is left of a provider's allowance as it last said (RegCheck: credits)",
    labelNames: ['provider'],
    registers: [registry],
    aggregator: 'min',
  });
  const quota = new client.Counter({
    name: 'reglookup_upstream_quota_used_total',
    help: "Calls made against a provider's quota",
    labelNames: ['provider'],
    registers: [registry],
  });
  return {
    upstreamCall(provider, outcome, seconds) {
      calls.inc({ provider, outcome });
      latency.observe({ provider }, seconds);
    },
    upstreamCache(operation, kind) {
      cache.inc({ operation, result: kind });
    },
    upstreamBreaker(provider, state) {
      for (const s of BREAKER_STATES) breaker.set({ provider, state: s }, s === state ? 1 : 0);
    },
    upstreamRemaining(provider, left) {
      remaining.set({ provider }, left);
    },
    upstreamQuotaUsed(provider, n) {
      quota.inc({ provider }, n);
    },
  };
}

/**
 * A histogram counted into plain arrays (prom-client's observe() hashes its labels on every call,
 * about a microsecond) and handed to prom-client's Histogram only when scraped. Returns the
 * series of one label value (made on first use).
 */
function cheapHistogram(
  registry: client.Registry,
  name: string,
  help: string,
  bounds: readonly number[],
  labelName: string | null,
): (label: string) => Latency {
  const series = new Map<string, Latency>();
  new client.Histogram({
    name,
    help,
    labelNames: labelName ? [labelName] : [],
    buckets: [...bounds],
    registers: [registry],
    collect() {
      // prom-client keeps each label set's buckets in hashMap (lib/histogram.js: labels, bucketValues
      // by upper bound, sum, count); test/cli/operability.test.ts reads what it makes of them.
      const map: Record<string, unknown> = {};
      for (const [value, l] of series) {
        const bucketValues: Record<number, number> = {};
        bounds.forEach((b, i) => (bucketValues[b] = l.buckets[i]));
        const labels = labelName ? { [labelName]: value } : {};
        map[labelName ? `${labelName}:${value}` : ''] = { labels, bucketValues, sum: l.sum, count: l.count };
      }
      (this as unknown as { hashMap: Record<string, unknown> }).hashMap = map;
    },
  });
  return (label) => {
    let l = series.get(label);
    if (!l) series.set(label, (l = { bounds, buckets: new Float64Array(bounds.length), sum: 0, count: 0 }));
    return l;
  };
}

function observe(l: Latency, seconds: number): void {
  const bounds = l.bounds;
  let i = 0;
  while (i < bounds.length && seconds > bounds[i]) i++;
  if (i < bounds.length) l.buckets[i]++;
  l.sum += seconds;
  l.count++;
}

/**
 * Requests: a plain tally per (transport, operation, outcome), copied into the counter only when
 * scraped. Returns the tally of one label set (made on first use).
 */
function requestTallies(registry: client.Registry): (transport: string, operation: string, outcome: string) => Tally {
  const tallies = new Map<string, Map<string, Map<string, Tally>>>();
  const all: Tally[] = [];
  new client.Counter({
    name: 'reglookup_requests_total',
    help: 'Requests answered, by transport, operation (empty when none was named) and outcome (ok, or the error code)',
    labelNames: ['transport', 'operation', 'outcome'],
    registers: [registry],
    collect() {
      this.reset();
      for (const t of all) if (t.n > 0) this.inc(t.labels, t.n);
    },
  });
  return (transport: string, operation: string, outcome: string): Tally => {
    let byOp = tallies.get(transport);
    if (!byOp) tallies.set(transport, (byOp = new Map<string, Map<string, Tally>>()));
    let byOutcome = byOp.get(operation);
    if (!byOutcome) byOp.set(operation, (byOutcome = new Map<string, Tally>()));
    let t = byOutcome.get(outcome);
    if (!t) {
      t = { labels: { transport, operation, outcome }, n: 0 };
      byOutcome.set(outcome, t);
      all.push(t);
    }
    return t;
  };
}

/**
 * The gauges set when scraped (callers with low credit, from the store) or once (the release, the start time);
 * returns where the low-credit count comes from.
 */
function gaugesAtScrape(registry: client.Registry): { source: (() => Promise<number>) | null } {
  const lowCredit: { source: (() => Promise<number>) | null } = { source: null };
  let lastLow = 0;
  new client.Gauge({
    name: 'reglookup_callers_low_credit',
    help: 'Callers with a balance below CREDIT_ALERT_BELOW (unlimited ones are not counted), for an alert; counted at each scrape',
    registers: [registry],
    // Every worker counts the same store.
    aggregator: 'max',
    async collect() {
      if (!lowCredit.source) return;
      // A store that cannot answer keeps the last count; reglookup_store_up says why.
      lastLow = await lowCredit.source().catch(() => lastLow);
      this.set(lastLow);
    },
  });
  new client.Gauge({
    name: 'reglookup_build_info',
    help: 'The running release (always 1)',
    labelNames: ['version'],
    registers: [registry],
    aggregator: 'first',
  }).set({ version: VERSION }, 1);
  new client.Gauge({
    name: 'reglookup_start_time_seconds',
    help: "When this instance's newest process started, in seconds since the epoch: it changes at each restart of the process or of one of its WORKERS",
    registers: [registry],
    // The primary restarts a worker that exits: the newest start time changes then too.
    aggregator: 'max',
  }).set(Math.round(Date.now() / 1000 - process.uptime()));
  return lowCredit;
}

/** Clears an unlabelled gauge's sample, so that a dependency not configured shows no series (not a 0). */
function noSample(gauge: client.Gauge): void {
  (gauge as unknown as { hashMap: Record<string, unknown> }).hashMap = {};
}

/**
 * The gauges of the service's dependencies, each read when scraped from what watchDependencies last gave: Redis up,
 * each read replica in use, the last import's result and time. Returns where they read from.
 */
function dependencyGauges(registry: client.Registry): { sources: DependencySources } {
  const at: { sources: DependencySources } = { sources: {} };
  new client.Gauge({
    name: 'reglookup_redis_up',
    help: "Whether the rate limiter's Redis (REDIS_URL) answers (1) or is failing (0); no sample without REDIS_URL",
    registers: [registry],
    aggregator: 'min',
    collect() {
      const up = at.sources.redisUp?.() ?? null;
      if (up === null) noSample(this);
      else this.set(up ? 1 : 0);
    },
  });
  new client.Gauge({
    name: 'reglookup_store_replica_up',
    help: 'Whether lookups read each replica of DATABASE_READ_URL now (1), or it is skipped: failing or behind (0)',
    labelNames: ['replica'],
    registers: [registry],
    aggregator: 'min',
    collect() {
      this.reset();
      for (const r of at.sources.replicas?.() ?? []) this.set({ replica: r.replica }, r.inUse ? 1 : 0);
    },
  });
  // Both import gauges come from one read of the store per scrape.
  let reading: Promise<ImportRun | null> | null = null;
  let last: ImportRun | null = null;
  const lastImport = async (): Promise<ImportRun | null> => {
    const source = at.sources.lastImport;
    if (!source) return null;
    if (!reading) {
      // A store that cannot answer keeps the last reading; reglookup_store_up says why.
      reading = source().then(
        (r) => (last = r),
        () => last,
      );
      setTimeout(() => (reading = null), 1000).unref();
    }
    return reading;
  };
  new client.Gauge({
    name: 'reglookup_last_import_success',
    help: 'Whether the latest import into the store committed (1) or failed and imported nothing (0); no sample before the first',
    registers: [registry],
    aggregator: 'min',
    async collect() {
      const run = await lastImport();
      if (run === null) noSample(this);
      else this.set(run.committed ? 1 : 0);
    },
  });
  new client.Gauge({
    name: 'reglookup_last_import_timestamp_seconds',
    help: 'When the latest import into the store ended (committed or not), in seconds since the epoch',
    registers: [registry],
    aggregator: 'max',
    async collect() {
      const run = await lastImport();
      if (run === null) noSample(this);
      else this.set(run.at / 1000);
    },
  });
  return at;
}

/** The imports run in this process (the sample data at a first start): returns Metrics.imported. */
function importCounters(registry: client.Registry): Metrics['imported'] {
  const imports = new client.Counter({
    name: 'reglookup_imports_total',
    help: 'Imports run in this process, by result (committed or rolled_back)',
    labelNames: ['result'],
    registers: [registry],
  });
  const importedRecords = new client.Counter({
    name: 'reglookup_imported_records_total',
    help: 'Records written by committed imports in this process',
    registers: [registry],
  });
  return (records, committed) => {
    imports.inc({ result: committed ? 'committed' : 'rolled_back' });
    if (committed) importedRecords.inc(records);
  };
}

function build(): Metrics {
  const registry = new client.Registry();
  // process_* and nodejs_* (CPU, memory, handles, GC, event-loop lag), under their usual names.
  client.collectDefaultMetrics({ register: registry });

  const tally = requestTallies(registry);

  const latency = cheapHistogram(
    registry,
    'reglookup_request_duration_seconds',
    'Time from a request reaching the service to its answer being handed to the network, by transport',
    REQUEST_BUCKETS,
    'transport',
  );

  const refusals = new client.Counter({
    name: 'reglookup_refusals_total',
    help: 'Lookups refused for the caller: out of credit, daily limit reached, rate limited (by error code)',
    labelNames: ['code'],
    registers: [registry],
  });
  // Each code present from the start, so that rate() sees the first refusal.
  const refusalBy = new Map(REFUSAL_CODES.map((code) => [code as string, refusals.labels(code)]));
  for (const child of refusalBy.values()) child.inc(0);
  const credits = new client.Counter({
    name: 'reglookup_credits_spent_total',
    help: 'Credits taken from callers: one per lookup that found its record, by callers with credits',
    registers: [registry],
  });

  const storeReads = cheapHistogram(
    registry,
    'reglookup_store_query_duration_seconds',
    'Time the store took to answer a lookup read',
    STORE_BUCKETS,
    null,
  )('');
  const storeUp = new client.Gauge({
    name: 'reglookup_store_up',
    help: 'Whether the store was reachable at its last use (1) or not (0)',
    registers: [registry],
    // Across workers: 0 when any of them finds the store unreachable.
    aggregator: 'min',
  });
  storeUp.set(1);
  const storeUnavailable = new client.Counter({
    name: 'reglookup_store_unavailable_total',
    help: 'Store calls refused because the store could not be reached (each answered SERVICE_UNAVAILABLE): lookups, and /readyz probes and usage writes',
    registers: [registry],
  });
  const lowCredit = gaugesAtScrape(registry);
  const dependencies = dependencyGauges(registry);

  return {
    registry,
    ...upstreamMetrics(registry),
    request(transport, operation, outcome, seconds) {
      tally(transport, operation, outcome).n++;
      observe(latency(transport), seconds);
      const refused = refusalBy.get(outcome);
      if (refused) refused.inc();
    },
    // Bound once: Accounts calls it without its object.
    creditSpent: () => credits.inc(),
    storeQuery(seconds) {
      observe(storeReads, seconds);
    },
    imported: importCounters(registry),
    storeUp(up) {
      storeUp.set(up ? 1 : 0);
    },
    storeUnavailable(calls) {
      storeUnavailable.inc(calls);
    },
    countLowCredit(count) {
      lowCredit.source = count;
    },
    watchDependencies(sources) {
      dependencies.sources = sources;
    },
  };
}

let instance: Metrics | null = null;

/** The process's metrics, made on first use. */
export function metrics(): Metrics {
  if (!instance) {
    instance = build();
    // A worker answers the primary's aggregation requests (WORKERS > 1) from this registry.
    // (prom-client installs the worker's listener when an AggregatorRegistry is made.)
    if (cluster.isWorker) {
      new client.AggregatorRegistry();
      client.AggregatorRegistry.setRegistries([instance.registry]);
    }
  }
  return instance;
}

export const CONTENT_TYPE = client.Registry.PROMETHEUS_CONTENT_TYPE;

const ASK = 'reglookup:metrics?';
const ANSWER = 'reglookup:metrics!';
interface MetricsMessage {
  readonly type: typeof ASK | typeof ANSWER;
  readonly id: number;
  readonly text?: string;
  readonly error?: string;
}

/**
 * The primary of a cluster (WORKERS > 1): every worker's metrics summed into one scrape (prom-client's
 * aggregation: counters and histograms add up, process gauges as prom-client defines for each).
 * Workers that were asked GET /metrics on the service port ask the primary for this text over IPC.
 */
export function clusterMetrics(): () => Promise<string> {
  const aggregator = new client.AggregatorRegistry();
  const text = () => aggregator.clusterMetrics();
  cluster.on('message', (worker, msg: MetricsMessage) => {
    if (msg?.type !== ASK) return;
    text().then(
      (t) => worker.send({ type: ANSWER, id: msg.id, text: t }),
      (e: unknown) => worker.send({ type: ANSWER, id: msg.id, error: messageOf(e) }),
    );
  });
  return text;
}

let asked = 0;
const waiting = new Map<number, { resolve: (t: string) => void; reject: (e: Error) => void }>();

/** In a worker: the whole cluster's metrics, from the primary. */
export function askPrimaryForMetrics(timeoutMs = 5000): Promise<string> {
  if (waiting.size === 0 && asked === 0) {
    process.on('message', (msg: MetricsMessage) => {
      if (msg?.type !== ANSWER) return;
      const w = waiting.get(msg.id);
      if (!w) return;
      waiting.delete(msg.id);
      if (msg.text !== undefined) w.resolve(msg.text);
      else w.reject(new Error(msg.error ?? 'no answer'));
    });
  }
  const id = ++asked;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting.delete(id);
      reject(new Error('the primary did not answer in time'));
    }, timeoutMs);
    waiting.set(id, {
      resolve: (t) => (clearTimeout(timer), resolve(t)),
      reject: (e) => (clearTimeout(timer), reject(e)),
    });
    process.send?.({ type: ASK, id });
  });
}

/** Counts an import, when this process serves metrics (a `reglookup import` run has none to count into). */
export function countImport(records: number, committed: boolean): void {
  instance?.imported(records, committed);
}
