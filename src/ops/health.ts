// Liveness and readiness. /healthz: the process answers (and says which release it is).
// /readyz: every named probe answers in time and the service is not shutting down. The probes
// are a list handed to createService, so that each dependency (the store, Redis, ...) brings its own.

import { messageOf } from '../core/errors';

export interface ReadinessProbe {
  /** Named in the JSON answer and the log: 'store', 'redis', ... */
  readonly name: string;
  /** Resolves when the dependency answers; rejects (or takes too long) when it does not. */
  check(): Promise<unknown>;
  /**
   * When set, this probe failing leaves the service ready but degraded, as this says (Redis under
   * RATE_LIMIT_ON_REDIS_ERROR=allow: lookups are served without a rate limit).
   */
  readonly degraded?: string;
  /**
   * Asked when the check passes: what works in a lesser way now, or null (the store, while its writes fail): the
   * probe is then `degraded`, and the service ready.
   */
  degradedNow?(): string | null;
}

interface Readiness {
  readonly ready: boolean;
  readonly checks: Record<string, string>;
  /** Why not ready, for humans: which checks fail (no detail that could name a file or a host). */
  readonly reason?: string;
  /** What works in a lesser way because a probe that only degrades the service fails. */
  readonly degraded?: string;
  /** Each failing probe's own message, for the log only. */
  readonly details: readonly { probe: string; error: string }[];
}

const PROBE_TIMEOUT_MS = 2000;

class ProbeTimeout extends Error {}

function withTimeout(p: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new ProbeTimeout(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * Runs every probe at once; the shutdown flag comes first. (There is no start-up check: the service
 * checks its contract before it listens, so nothing reaches /readyz until start-up has finished.)
 */
export async function readiness(probes: readonly ReadinessProbe[], state: { stopping: boolean }): Promise<Readiness> {
  const checks: Record<string, string> = {};
  const reasons: string[] = [];
  const details: { probe: string; error: string }[] = [];
  const degraded: string[] = [];
  if (state.stopping) {
    checks.shutdown = 'in progress';
    reasons.push('the service is shutting down');
  }
  const results = await Promise.allSettled(
    probes.map((p) =>
      withTimeout(
        Promise.resolve().then(() => p.check()),
        PROBE_TIMEOUT_MS,
      ),
    ),
  );
  results.forEach((r, i) => {
    const name = probes[i].name;
    if (r.status === 'fulfilled') {
      const lesser = probes[i].degradedNow?.() ?? null;
      checks[name] = lesser === null ? 'ok' : 'degraded';
      if (lesser !== null) degraded.push(`${name}: ${lesser}`);
    } else {
      // The answer says which dependency fails; its message (which may name a file, a host or SQL) goes to the log.
      const timedOut = r.reason instanceof ProbeTimeout;
      const why = `${name} ${timedOut ? `did not answer within ${PROBE_TIMEOUT_MS} ms` : 'is failing'}`;
      const degrades = probes[i].degraded;
      if (degrades !== undefined) {
        checks[name] = 'degraded';
        degraded.push(`${why}: ${degrades}`);
      } else {
        checks[name] = timedOut ? 'no answer in time' : 'failing';
        reasons.push(why);
      }
      details.push({ probe: name, error: messageOf(r.reason).slice(0, 500) });
    }
  });
  const lesser = degraded.length > 0 ? { degraded: degraded.join('; ') } : {};
  return reasons.length === 0
    ? { ready: true, checks, ...lesser, details }
    : { ready: false, checks, reason: reasons.join('; '), ...lesser, details };
}
