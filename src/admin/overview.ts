// The console's service overview, from this process's own Prometheus text (prom-client): requests
// answered by outcome since start (the console turns two readings into a rate a minute), and the
// latency p50 and p99 estimated from the request-duration histogram's buckets (the upper bound of
// the bucket the quantile falls in). Health probes and scrapes are not lookups and are left out.

const SAMPLE_RE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\} ([0-9.eE+-]+|NaN|\+Inf)$/;
const LABEL_RE = /(\w+)="((?:[^"\\]|\\.)*)"/g;
const NOT_LOOKUPS = new Set(['health', 'metrics']);

export interface Overview {
  /** When it was read (ms since the epoch). */
  readonly at: number;
  /** Requests answered since start, by outcome (ok, or the error code). */
  readonly requests: Record<string, number>;
  /** Seconds; null while nothing was measured. */
  readonly latency: { readonly p50: number | null; readonly p99: number | null };
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

export function overviewOf(metricsText: string, now = Date.now()): Overview {
  const requests: Record<string, number> = {};
  const buckets = new Map<number, number>();
  for (const line of metricsText.split('\n')) {
    const m = SAMPLE_RE.exec(line);
    if (!m) continue;
    const l = labels(m[2]);
    if (NOT_LOOKUPS.has(l.transport)) continue;
    if (m[1] === 'reglookup_requests_total') requests[l.outcome] = (requests[l.outcome] ?? 0) + Number(m[3]);
    else if (m[1] === 'reglookup_request_duration_seconds_bucket') {
      const le = l.le === '+Inf' ? Infinity : Number(l.le);
      buckets.set(le, (buckets.get(le) ?? 0) + Number(m[3]));
    }
  }
  return { at: now, requests, latency: { p50: quantile(buckets, 0.5), p99: quantile(buckets, 0.99) } };
}
