// Reads a request body within a byte limit, for every route. A declared Content-Length over the
// limit is refused before a byte is read; a compressed body is inflated with the same limit.
// Also what both transports need of the Content-Type header: its media type, and UTF-8 only.

import type { IncomingMessage } from 'node:http';
import zlib from 'node:zlib';
import { LookupError, quote } from '../service/errors';

function tooLarge(limit: number): LookupError {
  return new LookupError('PAYLOAD_TOO_LARGE', `Request body is larger than ${limit} bytes`);
}

// Once a body is refused as too large, this much more of it is still read and dropped (or for this
// long) before the 413 goes out. A client that is still sending when the server answers and closes
// gets a reset connection instead of the answer; a body somewhat over the limit (the usual honest
// mistake) thus still gets its 413, while a huge one is cut off.
const DRAIN_BYTES = 256 * 1024;
const DRAIN_MS = 1000;

/** Reads and drops what is left of a refused body, within DRAIN_BYTES and DRAIN_MS. */
function drain(req: IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    if (req.complete || req.destroyed) return resolve();
    let left = DRAIN_BYTES;
    const stop = () => {
      clearTimeout(timer);
      req.removeListener('data', onData);
      req.removeListener('end', stop);
      req.removeListener('error', stop);
      req.removeListener('close', stop);
      req.pause();
      resolve();
    };
    const onData = (chunk: Buffer) => {
      left -= chunk.length;
      if (left < 0) stop();
    };
    const timer = setTimeout(stop, DRAIN_MS);
    req.on('data', onData);
    req.on('end', stop);
    req.on('error', stop);
    req.on('close', stop);
    req.resume();
  });
}

function declaredLength(req: IncomingMessage): number | null {
  const declared = req.headers['content-length'];
  return declared === undefined ? null : Number(declared);
}

type Coding = 'identity' | 'gzip' | 'deflate';

/** Refuses up front what the headers already show to be too large or of an unknown coding; returns the coding. */
export function checkBodyHeaders(req: IncomingMessage, limit: number): Coding {
  const declared = declaredLength(req);
  if (declared !== null && declared > limit) throw tooLarge(limit);
  const coding = (req.headers['content-encoding'] ?? 'identity').toLowerCase().trim();
  if (coding !== 'identity' && coding !== 'gzip' && coding !== 'deflate') {
    throw new LookupError(
      'UNSUPPORTED_MEDIA_TYPE',
      `Content-Encoding '${coding.slice(0, 20)}' is not supported (use identity, gzip or deflate)`,
    );
  }
  return coding;
}

/** Whether the request carries a body at all (a declared length above 0, or chunked). */
export function hasBody(req: IncomingMessage): boolean {
  const declared = declaredLength(req);
  return (declared !== null && declared > 0) || req.headers['transfer-encoding'] !== undefined;
}

export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let coding: Coding;
    try {
      coding = checkBodyHeaders(req, limit);
    } catch (e) {
      const declared = declaredLength(req);
      const err = e as LookupError;
      if (err.code === 'PAYLOAD_TOO_LARGE' && declared !== null && declared <= limit + DRAIN_BYTES)
        void drain(req).then(() => reject(err));
      else reject(err);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const fail = (e: LookupError) => {
      if (done) return;
      done = true;
      req.removeListener('data', onData);
      chunks.length = 0;
      if (e.code === 'PAYLOAD_TOO_LARGE') void drain(req).then(() => reject(e));
      else {
        req.pause();
        reject(e);
      }
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return fail(tooLarge(limit));
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('error', () => fail(new LookupError('MALFORMED_REQUEST', 'The request body could not be read')));
    req.on('aborted', () => fail(new LookupError('MALFORMED_REQUEST', 'The request was aborted')));
    req.on('end', () => {
      if (done) return;
      done = true;
      try {
        resolve(decoded(Buffer.concat(chunks, size), coding, limit));
      } catch (e) {
        reject(e instanceof Error ? e : new Error('the body could not be decoded', { cause: e }));
      }
    });
  });
}

/** The body as sent, inflated within the limit when it came compressed. */
function decoded(raw: Buffer, coding: Coding, limit: number): Buffer {
  if (coding === 'identity') return raw;
  try {
    return coding === 'gzip'
      ? zlib.gunzipSync(raw, { maxOutputLength: limit })
      : zlib.inflateSync(raw, { maxOutputLength: limit });
  } catch (e) {
    throw (e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE'
      ? tooLarge(limit)
      : new LookupError('MALFORMED_REQUEST', `The ${coding} body could not be decompressed`);
  }
}

/**
 * The body, taken at once when all of it has already arrived and been buffered (a form or an
 * envelope sent in the same packets as its headers, the usual case once requests are served a turn
 * after they are read): no events and no promise. null when it is still arriving, is being read
 * already, or is to be refused, which readBody does (a refusal may first drain what is left).
 * Throws, like readBody rejects, for a body that cannot be decoded.
 */
export function bodyIfArrived(req: IncomingMessage, limit: number): Buffer | null {
  if (!req.complete || req.readableFlowing === true || req.readableEnded || req.readableLength > limit) return null;
  let coding: Coding;
  try {
    coding = checkBodyHeaders(req, limit);
  } catch {
    return null;
  }
  return decoded((req.read() as Buffer | null) ?? Buffer.alloc(0), coding, limit);
}

/**
 * Reads a request that has arrived whole and carries no body to its end now. Node's server
 * otherwise finds it unread when the answer is finished and hooks its 'end' to clean up later:
 * a listener added and removed per request.
 */
export function endIfArrived(req: IncomingMessage): void {
  if (req.complete && req.readableLength === 0 && !req.readableEnded && req.readableFlowing !== true) req.read();
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Bytes -> text, refusing anything that is not UTF-8 (UTF-16 included, by its BOM or its NULs). */
export function decodeUtf8(buf: Buffer): string {
  if (buf.length >= 2 && ((buf[0] === 0xff && buf[1] === 0xfe) || (buf[0] === 0xfe && buf[1] === 0xff))) {
    throw new LookupError('MALFORMED_REQUEST', 'The body is UTF-16; only UTF-8 is accepted');
  }
  try {
    return utf8.decode(buf);
  } catch {
    throw new LookupError('MALFORMED_REQUEST', 'The body is not valid UTF-8');
  }
}

/** A Content-Type header: the media type in lower case and its parameters. */
export interface MediaType {
  readonly type: string;
  readonly params: ReadonlyMap<string, string>;
}

export function parseMediaType(header: string | undefined): MediaType {
  const [type, ...rest] = (header ?? '').split(';');
  const params = new Map<string, string>();
  for (const p of rest) {
    const eq = p.indexOf('=');
    if (eq === -1) continue;
    params.set(
      p.slice(0, eq).trim().toLowerCase(),
      p
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1'),
    );
  }
  return { type: type.trim().toLowerCase(), params };
}

/** Refuses a declared charset other than UTF-8 (the only one either transport reads). */
export function checkCharset(media: MediaType): void {
  const charset = media.params.get('charset');
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    throw new LookupError('MALFORMED_REQUEST', `charset ${quote(charset, 20)} is not supported; send UTF-8`);
  }
}
