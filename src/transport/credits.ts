// GET /ajax/getcredits.aspx?username=NAME: the credits left as a bare integer in text/plain, as the
// public service answers it (callers use it as a connection test). The path and the parameter name
// match ignoring case, as on IIS and ASP.NET.

import express from 'express';
import { namesIgnoringCase } from '../contract/operations';
import type { CreditsService } from '../service/credits';
import { stackOf } from '../core/errors';
import { asLookupError, LookupError } from '../service/errors';
import type { Logger } from '../ops/logger';
import { note } from './context';
import { parseForm, queryString } from './http';
import { sendPlainError } from './plain';

const CREDITS_PATH = '/ajax/getcredits.aspx';

const NAMES = namesIgnoringCase(['username']);

export function creditsRouter(credits: CreditsService, logger: Logger): express.Router {
  const router = express.Router({ caseSensitive: false, strict: false });
  router.all(CREDITS_PATH, (req, res) => {
    note(req, { transport: 'credits' });
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendPlainError(
        req,
        res,
        new LookupError(
          'METHOD_NOT_ALLOWED',
          `${req.method} is not allowed here; use GET ${CREDITS_PATH}?username=NAME`,
        ),
        { Allow: 'GET, HEAD' },
      );
      return;
    }
    new Promise<ReturnType<typeof parseForm>>((resolve) =>
      resolve(parseForm(queryString(req.url), NAMES, 'query names are matched ignoring case')),
    )
      .then((raw) => credits.creditsLeft(raw))
      .then(({ username, account, credits: left }) => {
        note(req, { username, account });
        const body = String(left);
        res.writeHead(200, {
          'Content-Type': 'text/plain; charset=utf-8',
          'Content-Length': Buffer.byteLength(body),
          'Cache-Control': 'no-store',
          'X-Content-Type-Options': 'nosniff',
        });
        res.end(req.method === 'HEAD' ? undefined : body);
      })
      .catch((e: unknown) => {
        const err = asLookupError(e);
        if (err.code === 'INTERNAL_ERROR') logger.error('credits failed', { error: stackOf(e) });
        sendPlainError(req, res, err);
      });
  });
  return router;
}
