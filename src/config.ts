// Environment -> typed, validated configuration. The only module that reads process.env; a bad
// value stops start-up with a message naming the variable.

import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { AddressListError, addressSet, splitList, type AddressSet } from './net/cidr';

export const DEFAULT_NAMESPACE = 'http://regcheck.org.uk';
/** The store when DATABASE_URL is not set: made, with the sample data, on the first start. */
export const DEFAULT_DATABASE_URL = 'sqlite:data/reglookup.db';

export interface Limits {
  /** Request body bytes, every route (after decompression). */
  readonly maxBodyBytes: number;
  readonly maxDepth: number;
  /** Characters of text in one element or attribute value. */
  readonly maxTextChars: number;
  readonly maxElements: number;
  readonly maxAttributes: number;
}

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string;
  /** PostgreSQL connections per process (DATABASE_POOL). */
  readonly databasePool: number;
  /** PostgreSQL: longest a request's statement may run, ms; 0 for no limit (DATABASE_STATEMENT_TIMEOUT_MS). */
  readonly databaseStatementTimeoutMs: number;
  /**
   * PostgreSQL: longest a store call waits for its answer, enforced by this process, ms; 0: none
   * (DATABASE_QUERY_TIMEOUT_MS).
   */
  readonly databaseQueryTimeoutMs: number;
  /** PostgreSQL: longest a lookup waits for a read replica before asking the primary, ms (DATABASE_READ_TIMEOUT_MS). */
  readonly databaseReadTimeoutMs: number;
  /** PostgreSQL: a lookup is answered from this process's memory for at most this long, ms; 0: off (CACHE_TTL_MS). */
  readonly cacheTtlMs: number;
  /** PostgreSQL read replicas for record lookups (DATABASE_READ_URL, comma-separated); empty: none. */
  readonly databaseReadUrls: readonly string[];
  /** Longest a replica may be behind the primary and still be read, ms (DATABASE_READ_MAX_LAG_MS). */
  readonly databaseReadMaxLagMs: number;
  readonly namespace: string;
  /** Base URL written into the WSDL's addresses; when unset, the caller's Host header is used. */
  readonly publicUrl: string | null;
  readonly logLevel: string;
  readonly logFormat: 'json' | 'text';
  /** NODE_ENV=production: a deployment, where the bundled sample data is not loaded unless SAMPLE_DATA says so. */
  readonly production: boolean;
  /**
   * Whether `serve` loads the bundled sample data into an empty store (SAMPLE_DATA): by default only
   * when the store alone answers and NODE_ENV is not production.
   */
  readonly loadSampleData: boolean;
  readonly usernamePolicy: UsernamePolicy;
  /** Lookups per second per username (RATE_LIMIT); 0: no limit unless an account sets its own rate. */
  readonly rateLimit: number;
  /** Lookups a username may make above its rate, from a pool refilled each minute (RATE_LIMIT_BURST). */
  readonly rateLimitBurst: number;
  /** What the rate limit does while Redis cannot be reached. */
  readonly rateLimitOnRedisError: 'allow' | 'deny';
  /** Prefix of every Redis key this service writes (REDIS_PREFIX), so instances and tests can be kept apart. */
  readonly redisPrefix: string;
  /** Days of usage records kept (USAGE_DAYS). */
  readonly usageDays: number;
  /** Seconds a rotated-out username stays valid (USERNAME_ROTATION_GRACE_S, users rotate). */
  readonly rotationGraceS: number;
  /** Rows a batch job may hold (BATCH_MAX_ROWS). */
  readonly batchMaxRows: number;
  /** Hours a finished batch job's results are kept (BATCH_RETENTION_HOURS). */
  readonly batchRetentionHours: number;
  readonly requestTimeoutMs: number;
  /** Processes serving the port (node:cluster); 1 serves from the main process. WORKERS=auto: one per core. */
  readonly workers: number;
  /** Proxies whose X-Forwarded-* headers are believed (TRUST_PROXY, CIDRs); empty: none. */
  readonly trustProxy: TrustedProxies;
  /** Redis shared by workers and instances (REDIS_URL), or null for none. */
  readonly redisUrl: string | null;
  /** SANDBOX=on: the sandbox registrations answer on every operation and transport. */
  readonly sandbox: boolean;
  /** Origins allowed to call the JSON API from a browser (CORS_ORIGINS); '*' for any; empty: none. */
  readonly corsOrigins: readonly string[];
  readonly limits: Limits;
  /** Whether /metrics is served and requests are counted (METRICS). */
  readonly metrics: boolean;
  /** A separate port serving only /metrics (METRICS_PORT), or null to serve it on PORT. */
  readonly metricsPort: number | null;
  /** The admin API's own listener (ADMIN_PORT), or null: off. Never PORT. */
  readonly adminPort: number | null;
  /** Where the admin listener binds (ADMIN_HOST); HOST by default. */
  readonly adminHost: string;
  /** Bearer tokens of the admin API (ADMIN_TOKENS or ADMIN_TOKENS_FILE), each with the name the audit log records. */
  readonly adminTokens: readonly AdminToken[];
  /** Callers with fewer credits than this are counted in a gauge, for an alert (CREDIT_ALERT_BELOW). */
  readonly creditAlertBelow: number;
  /** How long a SIGTERM/SIGINT waits for the requests in flight before cutting them (SHUTDOWN_TIMEOUT_MS). */
  readonly shutdownTimeoutMs: number;
  /**
   * After SIGTERM, how long /readyz answers 503 while requests are still served, before the listener closes
   * (SHUTDOWN_DRAIN_MS).
   */
  readonly shutdownDrainMs: number;
  /**
   * Whether `serve` stops, as on SIGTERM, when the process that started it exits: set when npm started it (npx, npm
   * exec, npm start), whose shell between npm and the service does not pass on the signals npm forwards to it.
   */
  readonly stopWithParent: boolean;
  /** Upstream providers, their cache and their resilience (docs/upstream.md). */
  readonly upstream: UpstreamConfig;
  /** The DVSA MOT History API (DVSA_*), or null when its credentials are not set (docs/upstream-rdw-dvsa.md). */
  readonly dvsa: DvsaSettings | null;
  /** RDW Open Data (RDW_URL, RDW_APP_TOKEN). */
  readonly rdw: RdwSettings;
  /** OpenTelemetry tracing (OTEL_EXPORTER_OTLP_ENDPOINT and the rest of OTEL_*), or null: off. */
  readonly tracing: TracingConfig | null;
}

/** Where and how lookups' traces are sent: OTLP over HTTP (docs/operating.md, "Tracing"). */
export interface TracingConfig {
  /** The collector's OTLP/HTTP traces URL: OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces after it. */
  readonly tracesUrl: string;
  /** Headers sent with every export (OTEL_EXPORTER_OTLP_HEADERS: a collector's API key). */
  readonly headers: Readonly<Record<string, string>>;
  /** service.name of the traces (OTEL_SERVICE_NAME). */
  readonly serviceName: string;
  /** The share of lookups traced, 0 to 1 (OTEL_TRACES_SAMPLER_ARG, as OpenTelemetry's trace-id ratio sampler). */
  readonly sampleRatio: number;
}

/** The names PROVIDERS may list, in no particular order. */
const PROVIDER_NAMES = ['store', 'dvla', 'dvsa', 'rdw', 'regcheck'] as const;

export interface UpstreamConfig {
  /** PROVIDERS without `store` (asked first always: imported records win), in the order given; empty: store only. */
  readonly providers: readonly string[];
  /** Seconds a fetched vehicle answer is fresh (UPSTREAM_TTL). */
  readonly ttlS: number;
  /** Seconds a fetched MOT history is fresh (UPSTREAM_MOT_TTL). */
  readonly motTtlS: number;
  /** Seconds a not-found answer is believed (UPSTREAM_NOT_FOUND_TTL). */
  readonly notFoundTtlS: number;
  /** Seconds past its TTL an answer may still be served while the upstream fails (UPSTREAM_STALE_IF_ERROR). */
  readonly staleIfErrorS: number;
  /** The whole time a caller waits for an upstream, retries included (UPSTREAM_TIMEOUT_MS). */
  readonly timeoutMs: number;
  /**
   * Upstream calls in flight per provider per process (UPSTREAM_CONCURRENCY); more wait in a queue of the same size.
   */
  readonly concurrency: number;
  /** Largest upstream answer read, bytes (UPSTREAM_MAX_BYTES); a longer one is a failure. */
  readonly maxBytes: number;
  /** Failures in a row that open a provider's circuit breaker (UPSTREAM_BREAKER_FAILURES). */
  readonly breakerFailures: number;
  /** How long an open breaker waits before one probe call (UPSTREAM_BREAKER_OPEN_MS). */
  readonly breakerOpenMs: number;
  readonly dvla: { readonly url: string; readonly apiKey: string | null };
  readonly regcheck: { readonly url: string; readonly username: string | null; readonly creditsIntervalMs: number };
}

export interface DvsaSettings {
  readonly url: string;
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly scope: string;
  readonly apiKey: string;
  /** Processes sharing the quota through Redis (DVSA_QUOTA_PROCESSES): while Redis fails, each counts 1/N of it. */
  readonly quotaProcesses: number;
}

export interface RdwSettings {
  readonly url: string;
  readonly appToken: string | null;
}

/** An admin API token: `name:token` in ADMIN_TOKENS. */
export interface AdminToken {
  readonly name: string;
  readonly token: string;
}

/** Who may look up: any username (each registered one with its own limits), or only registered ones. */
export type UsernamePolicy = 'any' | 'registered';

export class ConfigError extends Error {}

type Env = Readonly<Record<string, string | undefined>>;

/** Every variable this module reads: filled by read(), so the list cannot fall behind the code. */
const KNOWN = new Set<string>();
/** Whether KNOWN holds every variable an empty environment reads (a refused environment may stop reading early). */
let knownComplete = false;

/** A variable that looks like a misspelling of one this service reads (DATABSE_URL for DATABASE_URL). */
interface Lookalike {
  readonly name: string;
  readonly known: string;
}

/** Edit distance with adjacent transpositions (optimal string alignment), given up past `max`. */
function distance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * Set variables that are not ours but look like a misspelling of one that is: upper-case names
 * within 2 edits of a name loadConfig reads (1 edit for names of 5 characters or fewer, so that
 * HOME is not taken for HOST). Other variables of the environment are none of our business.
 */
export function lookalikeVariables(env: Env = process.env): Lookalike[] {
  if (!knownComplete) {
    knownComplete = true;
    try {
      loadConfig({});
    } catch {
      // An empty environment is valid; the names are known either way.
    }
    lookupUsername({});
  }
  const out: Lookalike[] = [];
  for (const name of Object.keys(env)) {
    if (KNOWN.has(name) || !/^[A-Z][A-Z0-9_]*$/.test(name)) continue;
    let best: { known: string; d: number } | null = null;
    for (const known of KNOWN) {
      const max = known.length <= 5 ? 1 : 2;
      const d = distance(name, known, max);
      if (d <= max && (!best || d < best.d)) best = { known, d };
    }
    if (best) out.push({ name, known: best.known });
  }
  return out;
}

/**
 * A variable's value without the spaces around it, or undefined when it is unset or empty (what an
 * env file's `NAME=` or a compose file's `- NAME=` gives): every variable is read through here.
 */
function read(env: Env, name: string): string | undefined {
  KNOWN.add(name);
  const raw = env[name]?.trim();
  return raw === '' ? undefined : raw;
}

/**
 * REGLOOKUP_USERNAME: the caller `reglookup lookup --file` calls as when no --username is given. A username is a
 * credential: in the environment (or an env file) it is out of `ps` and the shell's history, where an argument is not.
 */
export function lookupUsername(env: Env = process.env): string | undefined {
  return read(env, 'REGLOOKUP_USERNAME');
}

function int(env: Env, name: string, dflt: number, min: number, max: number): number {
  const raw = read(env, name);
  if (raw === undefined) return dflt;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got '${raw}'`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function oneOf<T extends string>(env: Env, name: string, dflt: T, allowed: readonly T[]): T {
  const raw = read(env, name);
  if (raw === undefined) return dflt;
  if (!(allowed as readonly string[]).includes(raw))
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got '${raw}'`);
  return raw as T;
}

function bool(env: Env, name: string, dflt: boolean): boolean {
  const raw = read(env, name);
  if (raw === undefined) return dflt;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be on or off (also true/false, yes/no, 1/0, in any case), got '${raw}'`);
}

/** The proxies whose X-Forwarded-For is believed. */
export type TrustedProxies = AddressSet;

function cidrs(env: Env, name: string): TrustedProxies {
  const raw = read(env, name);
  try {
    return addressSet(raw === undefined ? [] : splitList(raw));
  } catch (e) {
    if (e instanceof AddressListError)
      throw new ConfigError(
        `${name} must be a comma-separated list of IP addresses or CIDRs (e.g. 10.0.0.0/8,::1): ${e.message}`,
      );
    throw e;
  }
}

/** A decimal number (RATE_LIMIT=0.5 is one lookup every two seconds). */
function decimal(env: Env, name: string, dflt: number, min: number, max: number): number {
  const raw = read(env, name);
  if (raw === undefined) return dflt;
  if (!/^\d+(\.\d+)?$/.test(raw)) throw new ConfigError(`${name} must be a number such as 10 or 0.5, got '${raw}'`);
  const n = Number(raw);
  if (n !== 0 && (n < min || n > max))
    throw new ConfigError(`${name} must be 0 or between ${min} and ${max}, got ${n}`);
  return n;
}

function prefix(env: Env, name: string, dflt: string): string {
  const raw = read(env, name);
  if (raw === undefined) return dflt;
  if (raw.length > 100 || /[\s\u0000-\u001f\u007f]/.test(raw))
    throw new ConfigError(`${name} must be at most 100 characters without spaces or control characters`);
  return raw;
}

/** WORKERS: a number, or `auto` for one per core the process may use. */
function workers(env: Env, name: string): number {
  if (read(env, name)?.toLowerCase() === 'auto') return Math.min(64, Math.max(1, os.availableParallelism()));
  try {
    return int(env, name, 1, 1, 64);
  } catch (e) {
    throw new ConfigError(`${(e as Error).message} (or 'auto' for one per core)`);
  }
}

/** An absolute URL with one of the given schemes, or null when unset; `what` names the form in messages. */
function urlOf(env: Env, name: string, schemes: readonly string[], what: string, unparsable: string): string | null {
  const raw = read(env, name);
  if (raw === undefined) return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be ${unparsable}, got '${raw}'`);
  }
  if (!schemes.includes(u.protocol)) throw new ConfigError(`${name} must be ${what}`);
  return raw;
}

function isPostgresUrlText(text: string): boolean {
  try {
    return /^postgres(ql)?:$/.test(new URL(text).protocol);
  } catch {
    return false;
  }
}

/** DATABASE_READ_URL: postgres:// URLs, comma-separated (a password is never repeated in a message). */
function readUrls(env: Env, name: string): readonly string[] {
  const raw = read(env, name);
  if (raw === undefined) return [];
  return splitList(raw).map((item, i) => {
    if (!isPostgresUrlText(item))
      throw new ConfigError(`${name} must be postgres:// URLs separated by commas; item ${i + 1} is not one`);
    return item;
  });
}

function redis(env: Env, name: string): string | null {
  return urlOf(env, name, ['redis:', 'rediss:'], 'a redis:// or rediss:// URL', 'a redis:// or rediss:// URL');
}

/**
 * CORS_ORIGINS: `*`, or origins as browsers send them in `Origin` (scheme, host and port, nothing
 * else). Each is normalised as a browser writes it (host in lower case, a default port dropped:
 * `https://app.example.com:443` is `https://app.example.com`), since matching is by equality.
 * Wildcards are refused rather than accepted and never matched.
 */
function origins(env: Env, name: string): readonly string[] {
  const raw = read(env, name);
  if (raw === undefined) return [];
  const list = splitList(raw);
  if (list.length === 1 && list[0] === '*') return list;
  const out: string[] = [];
  for (const item of list) {
    if (item === '*') throw new ConfigError(`${name}: * means any origin and is given alone, not in a list`);
    if (item.includes('*')) {
      throw new ConfigError(
        `${name} takes no wildcards in an origin ('${item}'): list each origin (scheme://host[:port]), or give * alone for any origin`,
      );
    }
    let u: URL | null;
    try {
      u = new URL(item);
    } catch {
      u = null;
    }
    // What is left once the origin is cut off must be nothing: no path (not even '/'), query, fragment or user.
    const rest = u ? item.slice(item.indexOf('//') + 2).replace(/^[^/?#]*/, '') : '';
    if (
      !u ||
      (u.protocol !== 'http:' && u.protocol !== 'https:') ||
      rest !== '' ||
      u.username !== '' ||
      u.password !== '' ||
      item.includes('@')
    ) {
      throw new ConfigError(
        `${name} must be * or a comma-separated list of origins such as https://app.example.com (scheme://host[:port], nothing after), got '${item}'`,
      );
    }
    if (!out.includes(u.origin)) out.push(u.origin);
  }
  return out;
}

function url(env: Env, name: string): string | null {
  return urlOf(env, name, ['http:', 'https:'], 'an http or https URL', 'an absolute URL')?.replace(/\/+$/, '') ?? null;
}

/** HOST: an IP address or a host name; a dotted quad out of range is caught here, not by a DNS lookup. */
function host(env: Env, name: string, dflt: string): string {
  const h = read(env, name);
  if (h === undefined) return dflt;
  const looksV4 = /^[\d.]+$/.test(h);
  if (
    looksV4
      ? net.isIPv4(h)
      : net.isIPv6(h) ||
        /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(
          h,
        )
  )
    return h;
  throw new ConfigError(
    `${name} must be an IP address of this machine or a host name (e.g. 0.0.0.0, 127.0.0.1, ::), got '${h}'`,
  );
}

function optionalPort(env: Env, name: string): number | null {
  return read(env, name) === undefined ? null : int(env, name, 0, 1, 65535);
}

const TOKEN_NAME_RE = /^[A-Za-z0-9._-]{1,64}$/;
const TOKEN_RE = /^[\x21-\x7e]{16,512}$/;

/**
 * ADMIN_TOKENS (or the file ADMIN_TOKENS_FILE names, for secrets mounted as files): comma-separated
 * `name:token` pairs. A token is at least 16 printable characters; no value is ever echoed in a message.
 */
function adminTokens(env: Env): readonly AdminToken[] {
  const raw = secret(env, 'ADMIN_TOKENS');
  const file = read(env, 'ADMIN_TOKENS_FILE');
  if (raw === null || raw === '') return [];
  const what = file !== undefined ? 'ADMIN_TOKENS_FILE' : 'ADMIN_TOKENS';
  const out: AdminToken[] = [];
  splitList(raw.replace(/\s*\n\s*/g, ',')).forEach((pair, i) => {
    const colon = pair.indexOf(':');
    const name = colon < 0 ? '' : pair.slice(0, colon);
    const token = colon < 0 ? '' : pair.slice(colon + 1);
    if (!TOKEN_NAME_RE.test(name))
      throw new ConfigError(
        `${what}: entry ${i + 1} must be name:token, the name 1-64 letters, digits, '.', '_' or '-'`,
      );
    if (!TOKEN_RE.test(token))
      throw new ConfigError(`${what}: the token of '${name}' must be 16 to 512 printable characters without spaces`);
    if (out.some((t) => t.name === name)) throw new ConfigError(`${what}: the name '${name}' is given twice`);
    if (out.some((t) => t.token === token)) throw new ConfigError(`${what}: two names share one token ('${name}')`);
    out.push({ name, token });
  });
  return out;
}

/**
 * An upstream's base URL: https://, or http:// to a loopback address only (a test's local server);
 * a plain http:// elsewhere would send an API key in the clear.
 */
function upstreamUrl(env: Env, name: string, dflt: string): string {
  const raw = read(env, name) ?? dflt;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute https:// URL, got '${raw}'`);
  }
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && loopback))
    throw new ConfigError(
      `${name} must be an https:// URL (plain http:// only to a loopback address such as 127.0.0.1), got '${u.protocol}//${u.host}'`,
    );
  if (u.username !== '' || u.password !== '')
    throw new ConfigError(`${name} must not carry a user or password; give credentials in their own variables`);
  return raw.replace(/\/+$/, '');
}

/**
 * A secret from NAME, or from the file NAME_FILE names (Docker secrets), trimmed; null when neither
 * is set. Messages name the variable, never the value.
 */
function secret(env: Env, name: string): string | null {
  const direct = read(env, name);
  const file = read(env, `${name}_FILE`);
  if (direct !== undefined && file !== undefined)
    throw new ConfigError(`${name} and ${name}_FILE are both set; give one, not both`);
  if (direct !== undefined) return direct;
  if (file === undefined) return null;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8').trim();
  } catch (e) {
    throw new ConfigError(
      `${name}_FILE names ${file}, which cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  if (text === '') throw new ConfigError(`${name}_FILE names ${file}, which is empty`);
  return text;
}

function providerList(env: Env, name: string): string[] {
  const raw = read(env, name);
  if (raw === undefined) return [];
  const list = splitList(raw).map((p) => p.toLowerCase());
  const seen = new Set<string>();
  for (const p of list) {
    if (!(PROVIDER_NAMES as readonly string[]).includes(p))
      throw new ConfigError(`${name} lists '${p}', which is not a provider; choose from ${PROVIDER_NAMES.join(', ')}`);
    if (seen.has(p)) throw new ConfigError(`${name} lists '${p}' twice`);
    seen.add(p);
  }
  const at = list.indexOf('store');
  if (at > 0)
    throw new ConfigError(
      `${name}: store is always asked first (imported records win over fetched ones); list it first or leave it out`,
    );
  return list.filter((p) => p !== 'store');
}

function upstreamConfig(env: Env): UpstreamConfig {
  const providers = providerList(env, 'PROVIDERS');
  const dvla = {
    url: upstreamUrl(env, 'DVLA_URL', 'https://driver-vehicle-licensing.api.gov.uk'),
    apiKey: secret(env, 'DVLA_API_KEY'),
  };
  const regcheck = {
    url: upstreamUrl(env, 'REGCHECK_URL', 'https://www.regcheck.org.uk'),
    username: secret(env, 'REGCHECK_USERNAME'),
    creditsIntervalMs: int(env, 'REGCHECK_CREDITS_INTERVAL_MS', 300_000, 0, 86_400_000),
  };
  if (providers.includes('dvla') && dvla.apiKey === null)
    throw new ConfigError(
      'PROVIDERS lists dvla: set DVLA_API_KEY (or DVLA_API_KEY_FILE); docs/upstream.md says how to get one',
    );
  if (providers.includes('regcheck') && regcheck.username === null)
    throw new ConfigError('PROVIDERS lists regcheck: set REGCHECK_USERNAME (or REGCHECK_USERNAME_FILE)');
  if (providers.includes('dvsa') && read(env, 'DVSA_CLIENT_ID') === undefined)
    throw new ConfigError(
      'PROVIDERS lists dvsa: set DVSA_CLIENT_ID, DVSA_CLIENT_SECRET and DVSA_API_KEY (secrets may come from *_FILE)',
    );
  return {
    providers,
    ttlS: int(env, 'UPSTREAM_TTL', 2_592_000, 0, 315_360_000),
    motTtlS: int(env, 'UPSTREAM_MOT_TTL', 86_400, 0, 315_360_000),
    notFoundTtlS: int(env, 'UPSTREAM_NOT_FOUND_TTL', 3_600, 0, 315_360_000),
    staleIfErrorS: int(env, 'UPSTREAM_STALE_IF_ERROR', 604_800, 0, 315_360_000),
    timeoutMs: int(env, 'UPSTREAM_TIMEOUT_MS', 5_000, 100, 600_000),
    concurrency: int(env, 'UPSTREAM_CONCURRENCY', 16, 1, 10_000),
    maxBytes: int(env, 'UPSTREAM_MAX_BYTES', 1_048_576, 1_024, 64 * 1024 * 1024),
    breakerFailures: int(env, 'UPSTREAM_BREAKER_FAILURES', 5, 1, 1_000_000),
    breakerOpenMs: int(env, 'UPSTREAM_BREAKER_OPEN_MS', 30_000, 100, 3_600_000),
    dvla,
    regcheck,
  };
}

/**
 * SAMPLE_DATA: the fictional sample answers before the upstreams, so it is off by default when
 * PROVIDERS lists one (and then refused when asked for) and under NODE_ENV=production.
 */
function sampleData(env: Env): boolean {
  const upstreams = providerList(env, 'PROVIDERS');
  const asked = read(env, 'SAMPLE_DATA') === undefined ? undefined : bool(env, 'SAMPLE_DATA', false);
  if (asked && upstreams.length > 0)
    throw new ConfigError(
      `SAMPLE_DATA is on and PROVIDERS lists ${upstreams.join(', ')}: the fictional sample records would answer in place of ${upstreams.length > 1 ? 'those upstreams' : 'that upstream'}; leave SAMPLE_DATA unset or off`,
    );
  return asked ?? (upstreams.length === 0 && read(env, 'NODE_ENV') !== 'production');
}

/** The token endpoint DVSA publishes for the MOT History API (Microsoft Entra ID, DVSA's tenant). */
const DVSA_TOKEN_URL = 'https://login.microsoftonline.com/a455b827-244f-4c97-b5b4-ce5d13b4d00c/oauth2/v2.0/token';

/** DVSA_*: null when none of its credentials is set; all three or a message naming the missing ones. */
function dvsaSettings(env: Env): DvsaSettings | null {
  const url = upstreamUrl(env, 'DVSA_URL', 'https://history.mot.api.gov.uk');
  const scope = read(env, 'DVSA_SCOPE') ?? 'https://tapi.dvsa.gov.uk/.default';
  const tokenUrl = upstreamUrl(env, 'DVSA_TOKEN_URL', DVSA_TOKEN_URL);
  const given = {
    DVSA_CLIENT_ID: read(env, 'DVSA_CLIENT_ID') ?? null,
    DVSA_CLIENT_SECRET: secret(env, 'DVSA_CLIENT_SECRET'),
    DVSA_API_KEY: secret(env, 'DVSA_API_KEY'),
  };
  const missing = Object.entries(given)
    .filter(([, v]) => v === null)
    .map(([k]) => k);
  const quotaProcesses = int(env, 'DVSA_QUOTA_PROCESSES', 1, 1, 10_000);
  if (missing.length === 3) return null;
  if (missing.length > 0)
    throw new ConfigError(
      `DVSA is partly configured: set ${missing.join(', ')} too (secrets may come from *_FILE), or none of them`,
    );
  return {
    url,
    tokenUrl,
    clientId: given.DVSA_CLIENT_ID as string,
    clientSecret: given.DVSA_CLIENT_SECRET as string,
    scope,
    apiKey: given.DVSA_API_KEY as string,
    quotaProcesses,
  };
}

/** OTEL_EXPORTER_OTLP_HEADERS: `key=value` pairs, comma-separated, values percent-encoded (OpenTelemetry's format). */
function otlpHeaders(env: Env, name: string): Record<string, string> {
  const raw = read(env, name);
  const out: Record<string, string> = {};
  for (const pair of raw === undefined ? [] : raw.split(',')) {
    const eq = pair.indexOf('=');
    const key = eq > 0 ? pair.slice(0, eq).trim() : '';
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key))
      throw new ConfigError(`${name} must be key=value pairs separated by commas (e.g. api-key=abc123)`);
    try {
      out[key] = decodeURIComponent(pair.slice(eq + 1).trim());
    } catch {
      throw new ConfigError(`${name}: the value of ${key} is not valid percent-encoding`);
    }
  }
  return out;
}

/** Tracing is on when OTEL_EXPORTER_OTLP_ENDPOINT is set; the other OTEL_* variables are read only then. */
function tracingConfig(env: Env): TracingConfig | null {
  const endpoint = url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const headers = otlpHeaders(env, 'OTEL_EXPORTER_OTLP_HEADERS');
  const serviceName = read(env, 'OTEL_SERVICE_NAME') ?? 'reglookup';
  const ratio = read(env, 'OTEL_TRACES_SAMPLER_ARG') ?? '1';
  if (!/^(0(\.\d+)?|1(\.0+)?)$/.test(ratio))
    throw new ConfigError(
      `OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 (the share of lookups traced), got '${ratio}'`,
    );
  if (endpoint === null) return null;
  return { tracesUrl: `${endpoint}/v1/traces`, headers, serviceName, sampleRatio: Number(ratio) };
}

function rdwSettings(env: Env): RdwSettings {
  return { url: upstreamUrl(env, 'RDW_URL', 'https://opendata.rdw.nl'), appToken: secret(env, 'RDW_APP_TOKEN') };
}

/** The store's settings: DATABASE_*, CACHE_TTL_MS. */
function storeSettings(env: Env) {
  return {
    databaseUrl: read(env, 'DATABASE_URL') ?? DEFAULT_DATABASE_URL,
    databasePool: int(env, 'DATABASE_POOL', 10, 1, 1000),
    databaseStatementTimeoutMs: int(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 5000, 0, 3_600_000),
    databaseQueryTimeoutMs: int(env, 'DATABASE_QUERY_TIMEOUT_MS', 2000, 0, 3_600_000),
    databaseReadTimeoutMs: int(env, 'DATABASE_READ_TIMEOUT_MS', 300, 10, 60_000),
    cacheTtlMs: int(env, 'CACHE_TTL_MS', 0, 0, 3_600_000),
    databaseReadUrls: readUrls(env, 'DATABASE_READ_URL'),
    databaseReadMaxLagMs: int(env, 'DATABASE_READ_MAX_LAG_MS', 1000, 100, 3_600_000),
  };
}

export function loadConfig(env: Env = process.env): Config {
  const namespace = read(env, 'SERVICE_NAMESPACE') ?? DEFAULT_NAMESPACE;
  if (/["<>&\s]/.test(namespace))
    throw new ConfigError(`SERVICE_NAMESPACE must be a URI without quotes, spaces or markup`);
  // Replaced, not aliased: a per-minute window and a per-second rate with a burst admit different
  // traffic, and a silent reinterpretation would change a deployment's limit without saying so.
  if (read(env, 'RATE_LIMIT_PER_MINUTE') !== undefined) {
    throw new ConfigError(
      'RATE_LIMIT_PER_MINUTE is no longer read: use RATE_LIMIT (lookups per second, e.g. RATE_LIMIT_PER_MINUTE=60 is RATE_LIMIT=1) and RATE_LIMIT_BURST',
    );
  }
  const config: Config = {
    port: int(env, 'PORT', 8080, 0, 65535),
    host: host(env, 'HOST', '0.0.0.0'),
    ...storeSettings(env),
    namespace,
    publicUrl: url(env, 'PUBLIC_URL'),
    logLevel: oneOf(env, 'LOG_LEVEL', 'info', ['error', 'warn', 'info', 'debug', 'silent']),
    logFormat: oneOf(env, 'LOG_FORMAT', 'json', ['json', 'text']),
    production: read(env, 'NODE_ENV') === 'production',
    loadSampleData: sampleData(env),
    usernamePolicy: oneOf(env, 'USERNAME_POLICY', 'any', ['any', 'registered']),
    rateLimit: decimal(env, 'RATE_LIMIT', 10, 0.001, 1_000_000),
    rateLimitBurst: int(env, 'RATE_LIMIT_BURST', 20, 0, 1_000_000),
    rateLimitOnRedisError: oneOf(env, 'RATE_LIMIT_ON_REDIS_ERROR', 'allow', ['allow', 'deny']),
    redisPrefix: prefix(env, 'REDIS_PREFIX', 'reglookup:'),
    usageDays: int(env, 'USAGE_DAYS', 400, 1, 36_500),
    rotationGraceS: int(env, 'USERNAME_ROTATION_GRACE_S', 86_400, 0, 365 * 86_400),
    batchMaxRows: int(env, 'BATCH_MAX_ROWS', 100_000, 1, 10_000_000),
    batchRetentionHours: decimal(env, 'BATCH_RETENTION_HOURS', 24, 0.0001, 8_760),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 10_000, 1_000, 600_000),
    workers: workers(env, 'WORKERS'),
    trustProxy: cidrs(env, 'TRUST_PROXY'),
    redisUrl: redis(env, 'REDIS_URL'),
    sandbox: bool(env, 'SANDBOX', false),
    corsOrigins: origins(env, 'CORS_ORIGINS'),
    limits: {
      maxBodyBytes: int(env, 'MAX_BODY_BYTES', 65_536, 1_024, 64 * 1024 * 1024),
      maxDepth: int(env, 'XML_MAX_DEPTH', 32, 4, 1_000),
      maxTextChars: int(env, 'XML_MAX_TEXT', 8_192, 64, 16 * 1024 * 1024),
      maxElements: int(env, 'XML_MAX_ELEMENTS', 1_000, 8, 10_000_000),
      maxAttributes: int(env, 'XML_MAX_ATTRIBUTES', 32, 1, 10_000),
    },
    metrics: bool(env, 'METRICS', true),
    metricsPort: optionalPort(env, 'METRICS_PORT'),
    adminPort: read(env, 'ADMIN_PORT') === undefined ? null : int(env, 'ADMIN_PORT', 0, 0, 65535),
    adminHost: host(env, 'ADMIN_HOST', host(env, 'HOST', '0.0.0.0')),
    adminTokens: adminTokens(env),
    creditAlertBelow: int(env, 'CREDIT_ALERT_BELOW', 100, 0, 1_000_000_000),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    shutdownDrainMs: int(env, 'SHUTDOWN_DRAIN_MS', 2_000, 0, 600_000),
    stopWithParent: read(env, 'npm_command') !== undefined,
    upstream: upstreamConfig(env),
    dvsa: dvsaSettings(env),
    rdw: rdwSettings(env),
    tracing: tracingConfig(env),
  };
  if (config.databaseReadUrls.length > 0 && !/^postgres(ql)?:\/\//.test(config.databaseUrl)) {
    throw new ConfigError(
      'DATABASE_READ_URL names read replicas of a PostgreSQL DATABASE_URL; DATABASE_URL is not one (leave DATABASE_READ_URL unset with SQLite)',
    );
  }
  if (config.metricsPort !== null && config.metricsPort === config.port)
    throw new ConfigError(
      `METRICS_PORT must differ from PORT (both ${config.port}); leave it unset to serve /metrics on PORT`,
    );
  if (config.adminPort !== null) {
    if (config.adminPort !== 0 && config.adminPort === config.port)
      throw new ConfigError(
        `ADMIN_PORT must differ from PORT (both ${config.port}): the admin API has a listener of its own`,
      );
    if (config.adminPort === config.metricsPort)
      throw new ConfigError(`ADMIN_PORT must differ from METRICS_PORT (both ${config.adminPort})`);
    if (config.adminTokens.length === 0)
      throw new ConfigError(
        'ADMIN_PORT is set but no admin token is: give ADMIN_TOKENS=name:token (or ADMIN_TOKENS_FILE)',
      );
  }
  return config;
}
