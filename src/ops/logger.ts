// The process's logger (winston): JSON lines by default, one line per request from the app.
// Lines go to stdout through a small buffer flushed once per event-loop turn, so that a busy
// server makes one write call per turn rather than one per request.

import { Writable } from 'node:stream';
import winston from 'winston';

export type Logger = winston.Logger;

/** Collects lines and hands them to the target in one write per event-loop turn. */
class BatchedWriter extends Writable {
  private pending: string[] = [];
  private scheduled = false;

  constructor(private readonly target: NodeJS.WritableStream) {
    super({ decodeStrings: false });
  }

  override _write(chunk: string | Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    this.append(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    cb();
  }

  /** Adds text to the next write, without the stream machinery (the access log's path). */
  append(text: string): void {
    this.pending.push(text);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  override _final(cb: (e?: Error | null) => void): void {
    this.flush();
    cb();
  }

  flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const text = this.pending.join('');
    this.pending = [];
    this.target.write(text);
  }
}

// One buffered writer per process, shared by every logger and the access log.
let stdoutWriter: BatchedWriter | null = null;
function stdout(): BatchedWriter {
  if (!stdoutWriter) {
    const w = new BatchedWriter(process.stdout);
    process.once('exit', () => w.flush());
    stdoutWriter = w;
  }
  return stdoutWriter;
}

const accessSinks = new WeakMap<Logger, { out: BatchedWriter; format: 'json' | 'text' }>();

/** The access log's fields, in the order a text line gives them. Never a registration number. */
interface AccessRecord {
  readonly id: string;
  /** The caller's address (behind TRUST_PROXY proxies, the forwarded one). */
  readonly client: string;
  readonly method: string | undefined;
  /** The path without its query string, cut after its third segment (see app.ts). */
  readonly path: string;
  readonly transport: string | undefined;
  readonly operation: string | undefined;
  /** 'ok', or the error code the request was answered with. */
  readonly outcome: string;
  /** true when a sandbox registration answered (SANDBOX=on); absent otherwise. */
  readonly sandbox?: boolean;
  /**
   * Where a found answer came from: store, cache, or the upstream provider that answered (dvla, regcheck, ...); absent
   * otherwise.
   */
  readonly source?: string;
  readonly status: number;
  readonly ms: number;
  /** The caller's fingerprint (ops/fingerprint.ts), `-` without a username: never the username, a credential. */
  readonly caller: string;
  /** The name of the caller's account; `-` for no username, or one without an account. */
  readonly account?: string;
}

// C0, DEL, C1 and the Unicode line separators: JSON.stringify leaves all but C0 as they are, and
// in a terminal or a line-based collector they forge or split lines.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const UNSAFE_ALL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const escapeChar = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** A value a caller chose (a path, a parameter), with its control characters written as \uXXXX. */
function escapeControls(s: string): string {
  return UNSAFE.test(s) ? s.replace(UNSAFE_ALL, escapeChar) : s;
}

/** One value of a text line: bare when it is plain printable ASCII, else quoted and escaped. */
function textValue(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  const s = typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
  if (/^[\x21-\x7e]+$/.test(s) && !/["=\\]/.test(s)) return s;
  return JSON.stringify(s).replace(UNSAFE_ALL, escapeChar);
}

/** `time level message key=value ...`: one line per event, for a human reading a terminal. */
export function textLine(
  timestamp: string,
  level: string,
  message: string,
  fields: Readonly<Record<string, unknown>>,
): string {
  let line = `${timestamp} ${level} ${escapeControls(message)}`;
  for (const k of Object.keys(fields)) {
    const v = fields[k];
    if (v === undefined) continue;
    line += ` ${k}=${textValue(v)}`;
  }
  return line;
}

/**
 * The one line per request, in the same stream and shape as the logger's own lines, but without
 * winston's format pipeline, which costs about a quarter of a GET's time. Health and
 * readiness probes and scrapes are logged at debug (level 'debug'), everything else at info.
 */
export function logAccess(logger: Logger, r: AccessRecord, level: 'info' | 'debug' = 'info'): void {
  if (logger.silent || !(level === 'info' ? logger.isInfoEnabled() : logger.isDebugEnabled())) return;
  const sink = accessSinks.get(logger);
  if (!sink) {
    logger.log(level, 'request', { ...r });
    return;
  }
  const timestamp = isoNow();
  if (sink.format === 'json') sink.out.append(accessJson(level, timestamp, r));
  else sink.out.append(textLine(timestamp, level, 'request', { ...r, ms: Math.round(r.ms * 1000) / 1000 }) + '\n');
}

// The access line's clock: one ISO string per millisecond, shared by the lines written in it.
let lastMs = 0;
let lastIso = '';
function isoNow(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastIso = new Date(now).toISOString();
  }
  return lastIso;
}

// A string that JSON writes as it is: printable ASCII other than `"` and `\`.
const JSON_PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * A string as a JSON value; JSON.stringify escapes C0, escapeControls then DEL, C1 and the separators as \uXXXX (valid
 * JSON).
 */
function jsonString(s: string): string {
  return JSON_PLAIN.test(s) ? `"${s}"` : escapeControls(JSON.stringify(s));
}

/**
 * The JSON access line, written field by field: the same bytes as JSON.stringify of
 * { level, message, timestamp, ...r } with ms rounded to the microsecond, at half its cost (no
 * object copies). The keys are AccessRecord's own names, never a caller's.
 */
function accessJson(level: string, timestamp: string, r: AccessRecord): string {
  let line = `{"level":"${level}","message":"request","timestamp":"${timestamp}"`;
  for (const k of Object.keys(r) as (keyof AccessRecord)[]) {
    const v = k === 'ms' ? Math.round(r.ms * 1000) / 1000 : r[k];
    if (v === undefined) continue;
    line += `,"${k}":${typeof v === 'string' ? jsonString(v) : JSON.stringify(v)}`;
  }
  return line + '}\n';
}

const textFormat = winston.format.printf((info) => {
  const { level, message, timestamp, ...rest } = info as {
    level: string;
    message: unknown;
    timestamp?: string;
  } & Record<string, unknown>;
  return textLine(timestamp ?? new Date().toISOString(), level, String(message), rest);
});

export function createLogger(level: string, format: 'json' | 'text'): Logger {
  const out = stdout();
  const logger = winston.createLogger({
    level: level === 'silent' ? 'error' : level,
    silent: level === 'silent',
    format:
      format === 'json'
        ? winston.format.combine(winston.format.timestamp(), winston.format.json())
        : winston.format.combine(winston.format.timestamp(), textFormat),
    transports: [new winston.transports.Stream({ stream: out })],
  });
  accessSinks.set(logger, { out, format });
  return logger;
}
