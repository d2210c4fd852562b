// GET /image.aspx/@{base64 of "Make Model"}: the vehicle picture the sample data's ImageUrl points
// at, shaped like the public service's image URLs. It is a small generated SVG naming the make and
// model, so the bundled data refers to nothing that does not exist. The path segment is hostile
// input: its length is bounded, it must be canonical base64 of UTF-8 text without controls, and the
// text is escaped into the SVG, which is served with nosniff and a CSP that lets nothing run.

import express from 'express';
import { asLookupError, LookupError } from '../service/errors';
import { note } from './context';
import { sendPlainError } from './plain';
import { escapeAttr } from './xml';

const IMAGE_PATH = '/image.aspx';

/** Longest "Make Model" text drawn (characters); its base64 (up to 4 UTF-8 bytes a character) bounds the segment. */
const MAX_TEXT_CHARS = 80;
const MAX_SEGMENT = 4 * Math.ceil((MAX_TEXT_CHARS * 4) / 3);
const BASE64_RE = /^[A-Za-z0-9+/]+={0,2}$/;
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The text the segment (after '@') encodes, or a LookupError saying why it is refused. */
export function imageText(segment: string): string {
  // Bounded before decoding: percent-encoding at most triples it.
  if (segment.length > 3 * MAX_SEGMENT)
    throw new LookupError('INVALID_PARAMETER', `The image name is longer than ${MAX_SEGMENT} characters`);
  let b64: string;
  try {
    b64 = decodeURIComponent(segment);
  } catch {
    throw new LookupError('MALFORMED_REQUEST', 'The image name is not valid percent-encoded UTF-8');
  }
  if (b64.length === 0 || b64.length > MAX_SEGMENT || b64.length % 4 !== 0 || !BASE64_RE.test(b64)) {
    throw new LookupError(
      'INVALID_PARAMETER',
      `The image name must be @ and the base64 of at most ${MAX_TEXT_CHARS} characters of "Make Model"`,
    );
  }
  const bytes = Buffer.from(b64, 'base64');
  // Node's decoder skips what it cannot read; only a canonical encoding is taken.
  if (bytes.toString('base64') !== b64)
    throw new LookupError('INVALID_PARAMETER', 'The image name is not canonical base64');
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new LookupError('INVALID_PARAMETER', 'The image name does not encode UTF-8 text');
  }
  if (CONTROL_RE.test(text) || text.trim() === '' || [...text].length > MAX_TEXT_CHARS) {
    throw new LookupError(
      'INVALID_PARAMETER',
      `The image name must encode 1 to ${MAX_TEXT_CHARS} printable characters`,
    );
  }
  return text.trim();
}

/** A 320x200 picture with the make on one line and the model below it. */
export function imageSvg(text: string): string {
  const space = text.indexOf(' ');
  const make = space === -1 ? text : text.slice(0, space);
  const model = space === -1 ? '' : text.slice(space + 1);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="320" height="200" viewBox="0 0 320 200" role="img" aria-label="${escapeAttr(text)}">` +
    `<title>${escapeAttr(text)}</title>` +
    `<rect width="320" height="200" fill="#e8eef4"/>` +
    `<rect x="40" y="120" width="240" height="36" rx="12" fill="#50627a"/>` +
    `<rect x="90" y="92" width="140" height="34" rx="10" fill="#6d829c"/>` +
    `<circle cx="95" cy="158" r="16" fill="#222"/><circle cx="225" cy="158" r="16" fill="#222"/>` +
    `<text x="160" y="42" text-anchor="middle" font-family="sans-serif" font-size="22" font-weight="bold" fill="#1d2b3a">${escapeAttr(make)}</text>` +
    `<text x="160" y="72" text-anchor="middle" font-family="sans-serif" font-size="18" fill="#1d2b3a">${escapeAttr(model)}</text>` +
    `</svg>`
  );
}

const PREFIX = `${IMAGE_PATH.toLowerCase()}/`;

/** GET /image.aspx/@...: the rest of the path is the name (base64 may hold '/'). */
export function imageHandler(): express.RequestHandler {
  return (req, res, next) => {
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);
    if (!pathname.toLowerCase().startsWith(PREFIX)) return next();
    note(req, { transport: 'other' });
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendPlainError(req, res, new LookupError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here; use GET`), {
        Allow: 'GET, HEAD',
      });
      return;
    }
    // The raw name, before anything decodes it, so that decoding errors are ours to answer.
    const segment = pathname.slice(PREFIX.length);
    if (!segment.startsWith('@')) {
      sendPlainError(
        req,
        res,
        new LookupError('INVALID_PARAMETER', `The image name must be @ and the base64 of "Make Model"`),
      );
      return;
    }
    let text: string;
    try {
      text = imageText(segment.slice(1));
    } catch (e) {
      sendPlainError(req, res, asLookupError(e));
      return;
    }
    const body = imageSvg(text);
    res.writeHead(200, {
      'Content-Type': 'image/svg+xml; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      'Content-Security-Policy': "default-src 'none'",
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'public, max-age=86400',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}
