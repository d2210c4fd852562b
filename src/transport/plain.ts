// Errors for the HTTP GET/POST forms and for non-SOAP paths: the status from the error table and
// one line of text/plain naming the code, with Retry-After where it applies.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LookupError } from '../service/errors';
import { note } from './context';

export function sendPlainError(
  req: IncomingMessage,
  res: ServerResponse,
  err: LookupError,
  extraHeaders: Record<string, string> = {},
): void {
  note(req, { errorCode: err.code });
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = `${err.code}: ${err.message.replace(/[\r\n]+/g, ' ')}\n`;
  const headers: Record<string, string | number> = {
    ...extraHeaders,
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'X-Error-Code': err.code,
    'X-Content-Type-Options': 'nosniff',
  };
  if (err.retryAfter) headers['Retry-After'] = err.retryAfter;
  if (err.code === 'PAYLOAD_TOO_LARGE') headers.Connection = 'close';
  res.writeHead(err.spec.status, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
}
