// Environment -> typed, validated configuration. The only module that reads process.env; a bad
// value stops start-up with a message naming the variable.

import net from 'node:net';
import os from 'node:os';
import type { UsernamePolicy } from './accounts/accounts';

export const DEFAULT_NAMESPACE = 'http://regcheck.org.uk';

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
  /** PostgreSQL: a lookup is answered from this process's memory for at most this long, ms; 0: off (CACHE_TTL_MS). */
  readonly cacheTtlMs: number;
  readonly namespace: string;
  /** Base URL written into the WSDL's addresses; when unset, the caller's Host header is used. */
  readonly publicUrl: string | null;
  readonly logLevel: string;
  readonly logFormat: 'json' | 'text';
  readonly loadSampleData: boolean;
  readonly usernamePolicy: UsernamePolicy;
  readonly rateLimitPerMinute: number;
  readonly requestTimeoutMs: number;
  /** Processes serving the port (node:cluster); 1 serves from the main process. WORKERS=auto: one per core. */
  readonly workers: number;
  /** Proxies whose X-Forwarded-* headers are believed (TRUST_PROXY, CIDRs); empty: none. */
  readonly trustProxy: TrustedProxies;
  /** Redis shared by workers and instances (REDIS_URL), or null for none. */
  readonly redisUrl: string | null;
  readonly limits: Limits;
}

export class ConfigError extends Error {}

type Env = Readonly<Record<string, string | undefined>>;

function int(env: Env, name: string, dflt: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got '${raw}'`);
  const n = Number(raw.trim());
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function oneOf<T extends string>(env: Env, name: string, dflt: T, allowed: readonly T[]): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got '${raw}'`);
  return raw as T;
}

function bool(env: Env, name: string, dflt: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got '${raw}'`);
}

/** A set of addresses given as CIDRs or single addresses (IPv4 and IPv6). */
export interface TrustedProxies {
  /** The CIDRs as given, for logs and the README. */
  readonly list: readonly string[];
  has(address: string): boolean;
}

function cidrs(env: Env, name: string): TrustedProxies {
  const raw = env[name];
  const list = raw === undefined || raw.trim() === '' ? [] : raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const block = new net.BlockList();
  for (const item of list) {
    const m = /^([^/]+?)(?:\/(\d{1,3}))?$/.exec(item);
    const family = m ? net.isIP(m[1]) : 0;
    const bits = m?.[2] === undefined ? (family === 6 ? 128 : 32) : Number(m[2]);
    if (!m || family === 0 || bits > (family === 6 ? 128 : 32)) throw new ConfigError(`${name} must be a comma-separated list of IP addresses or CIDRs (e.g. 10.0.0.0/8,::1), got '${item}'`);
    block.addSubnet(m[1], bits, family === 6 ? 'ipv6' : 'ipv4');
  }
  return {
    list,
    has(address: string): boolean {
      const v4mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
      const a = v4mapped ? v4mapped[1] : address;
      const family = net.isIP(a);
      return family !== 0 && block.check(a, family === 6 ? 'ipv6' : 'ipv4');
    },
  };
}

/** WORKERS: a number, or `auto` for one per core the process may use. */
function workers(env: Env, name: string): number {
  if (env[name]?.trim().toLowerCase() === 'auto') return Math.min(64, Math.max(1, os.availableParallelism()));
  try {
    return int(env, name, 1, 1, 64);
  } catch (e) {
    throw new ConfigError(`${(e as Error).message} (or 'auto' for one per core)`);
  }
}

function redis(env: Env, name: string): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a redis:// or rediss:// URL, got '${raw}'`);
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw new ConfigError(`${name} must be a redis:// or rediss:// URL`);
  return raw;
}

function url(env: Env, name: string): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute URL, got '${raw}'`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ConfigError(`${name} must be an http or https URL`);
  return raw.replace(/\/+$/, '');
}

export function loadConfig(env: Env = process.env): Config {
  const namespace = env.SERVICE_NAMESPACE || DEFAULT_NAMESPACE;
  if (/["<>&\s]/.test(namespace)) throw new ConfigError(`SERVICE_NAMESPACE must be a URI without quotes, spaces or markup`);
  return {
    port: int(env, 'PORT', 8080, 0, 65535),
    host: env.HOST || '0.0.0.0',
    databaseUrl: env.DATABASE_URL || 'sqlite:data/reglookup.db',
    databasePool: int(env, 'DATABASE_POOL', 10, 1, 1000),
    databaseStatementTimeoutMs: int(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 5000, 0, 3_600_000),
    cacheTtlMs: int(env, 'CACHE_TTL_MS', 0, 0, 3_600_000),
    namespace,
    publicUrl: url(env, 'PUBLIC_URL'),
    logLevel: oneOf(env, 'LOG_LEVEL', 'info', ['error', 'warn', 'info', 'debug', 'silent']),
    logFormat: oneOf(env, 'LOG_FORMAT', 'json', ['json', 'text']),
    loadSampleData: bool(env, 'SAMPLE_DATA', true),
    usernamePolicy: oneOf(env, 'USERNAME_POLICY', 'any', ['any', 'registered']),
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 0, 0, 1_000_000_000),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 10_000, 1_000, 600_000),
    workers: workers(env, 'WORKERS'),
    trustProxy: cidrs(env, 'TRUST_PROXY'),
    redisUrl: redis(env, 'REDIS_URL'),
    limits: {
      maxBodyBytes: int(env, 'MAX_BODY_BYTES', 65_536, 1_024, 64 * 1024 * 1024),
      maxDepth: int(env, 'XML_MAX_DEPTH', 32, 4, 1_000),
      maxTextChars: int(env, 'XML_MAX_TEXT', 8_192, 64, 16 * 1024 * 1024),
      maxElements: int(env, 'XML_MAX_ELEMENTS', 1_000, 8, 10_000_000),
      maxAttributes: int(env, 'XML_MAX_ATTRIBUTES', 32, 1, 10_000),
    },
  };
}
