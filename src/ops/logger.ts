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

export interface AccessRecord {
  readonly id: string;
  readonly method: string | undefined;
  readonly path: string;
  readonly transport: string | undefined;
  readonly operation: string | undefined;
  /** The caller's username, once a transport decoded it. */
  readonly username?: string;
  /** true when a sandbox registration answered (SANDBOX=on); absent otherwise. */
  readonly sandbox?: boolean;
  readonly status: number;
  readonly error: string | undefined;
  readonly ms: number;
}

/**
 * The one line per request, at level info, in the same stream and JSON shape as the logger's own
 * lines, but without winston's format pipeline, which measured at about a quarter of a GET's time.
 */
export function logAccess(logger: Logger, r: AccessRecord): void {
  if (logger.silent || !logger.isInfoEnabled()) return;
  const sink = accessSinks.get(logger);
  if (!sink) {
    logger.info('request', { ...r });
    return;
  }
  const timestamp = new Date().toISOString();
  if (sink.format === 'json') sink.out.append(JSON.stringify({ level: 'info', message: 'request', ...r, timestamp }) + '\n');
  else sink.out.append(`info: request ${JSON.stringify({ ...r, timestamp })}\n`);
}

export function createLogger(level: string, format: 'json' | 'text'): Logger {
  const out = stdout();
  const logger = winston.createLogger({
    level: level === 'silent' ? 'error' : level,
    silent: level === 'silent',
    format:
      format === 'json'
        ? winston.format.combine(winston.format.timestamp(), winston.format.json())
        : winston.format.combine(winston.format.timestamp(), winston.format.simple()),
    transports: [new winston.transports.Stream({ stream: out })],
  });
  accessSinks.set(logger, { out, format });
  return logger;
}
