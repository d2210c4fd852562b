// What the lookup transports (SOAP, HTTP GET/POST, JSON) share: the dependencies they are built
// from, and what each does with a lookup that failed.

import type { IncomingMessage } from 'node:http';
import type { Limits, TrustedProxies } from '../config';
import { LookupError, stackOf } from '../core/errors';
import { asLookupError } from '../service/errors';
import type { LookupService } from '../service/lookup';
import type { Logger } from '../ops/logger';
import { contextOf } from './context';

export interface TransportDeps {
  readonly service: LookupService;
  readonly namespace: string;
  readonly limits: Limits;
  readonly logger: Logger;
  /** Proxies whose X-Forwarded-For names the caller's address (TRUST_PROXY). */
  readonly trustProxy: TrustedProxies;
}

/**
 * A failed lookup as the LookupError to answer with. One that is ours (INTERNAL_ERROR) is logged
 * with its stack, except a sandbox registration's own INTERNAL_ERROR (ER19ERR), which is a
 * rehearsal of one, not a failure.
 */
export function lookupFailure(req: IncomingMessage, e: unknown, operation: string, logger: Logger): LookupError {
  const err = asLookupError(e);
  if (err.code === 'INTERNAL_ERROR' && !(e instanceof LookupError && contextOf(req)?.sandbox))
    logger.error('lookup failed', { operation, error: stackOf(e) });
  return err;
}
