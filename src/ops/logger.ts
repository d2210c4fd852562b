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
    this.pending.push(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    cb();
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

export function createLogger(level: string, format: 'json' | 'text'): Logger {
  const out = new BatchedWriter(process.stdout);
  process.once('exit', () => out.flush());
  return winston.createLogger({
    level: level === 'silent' ? 'error' : level,
    silent: level === 'silent',
    format:
      format === 'json'
        ? winston.format.combine(winston.format.timestamp(), winston.format.json())
        : winston.format.combine(winston.format.timestamp(), winston.format.simple()),
    transports: [new winston.transports.Stream({ stream: out })],
  });
}
