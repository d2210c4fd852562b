// Reads a request body within a byte limit, for every route. A declared Content-Length over the
// limit is refused before a byte is read; a compressed body is inflated with the same limit.

import type { IncomingMessage } from 'node:http';
import zlib from 'node:zlib';
import { LookupError } from '../service/errors';

function tooLarge(limit: number): LookupError {
  return new LookupError('PAYLOAD_TOO_LARGE', `Request body is larger than ${limit} bytes`);
}

/** Refuses up front what the headers already show to be too large or of an unknown coding. */
export function checkBodyHeaders(req: IncomingMessage, limit: number): void {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
  const coding = (req.headers['content-encoding'] ?? 'identity').toLowerCase().trim();
  if (coding !== 'identity' && coding !== 'gzip' && coding !== 'deflate') {
    throw new LookupError('UNSUPPORTED_MEDIA_TYPE', `Content-Encoding '${coding.slice(0, 20)}' is not supported (use identity, gzip or deflate)`);
  }
}

export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    try {
      checkBodyHeaders(req, limit);
    } catch (e) {
      reject(e);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const fail = (e: LookupError) => {
      if (done) return;
      done = true;
      req.removeListener('data', onData);
      req.pause();
      reject(e);
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
      const raw = Buffer.concat(chunks, size);
      const coding = (req.headers['content-encoding'] ?? 'identity').toLowerCase().trim();
      if (coding === 'identity') return resolve(raw);
      try {
        resolve(coding === 'gzip' ? zlib.gunzipSync(raw, { maxOutputLength: limit }) : zlib.inflateSync(raw, { maxOutputLength: limit }));
      } catch (e) {
        reject((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' ? tooLarge(limit) : new LookupError('MALFORMED_REQUEST', `The ${coding} body could not be decompressed`));
      }
    });
  });
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
