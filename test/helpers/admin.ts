// The admin listener for a test, in-process on a loopback port, on a store the test gives (and may
// share with a service started by startServer), with two tokens.

import type { AddressInfo } from 'node:net';
import type { AdminBatches } from '../../src/admin/batch';
import { createAdminServer } from '../../src/admin/server';
import type { AdminToken } from '../../src/config';
import { createLogger, type Logger } from '../../src/ops/logger';
import type { VehicleStore } from '../../src/store/store';

export const TOKENS: readonly AdminToken[] = [
  { name: 'ops', token: 'ops-token-0123456789abcdef' },
  { name: 'billing', token: 'billing-token-0123456789abcdef' },
];

export interface TestAdmin {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  close(): Promise<void>;
}

export async function startAdmin(
  store: VehicleStore,
  opts: {
    tokens?: readonly AdminToken[];
    logger?: Logger;
    metricsText?: () => Promise<string>;
    overviewEveryMs?: number;
    requestTimeoutMs?: number;
    batches?: AdminBatches | null;
  } = {},
): Promise<TestAdmin> {
  const server = createAdminServer({
    store,
    tokens: opts.tokens ?? TOKENS,
    logger: opts.logger ?? createLogger('silent', 'json'),
    metricsText: opts.metricsText ?? null,
    overviewEveryMs: opts.overviewEveryMs,
    requestTimeoutMs: opts.requestTimeoutMs,
    batches: opts.batches ?? null,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body as JSON (undefined when it is not). */
  readonly json: any;
}

/** Calls the admin API as a token holder: call('POST', '/admin/api/users', { username: 'x' }). */
export function client(url: string, token: string | null) {
  return async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer> => {
    const h: Record<string, string> = { ...headers };
    if (token !== null) h.Authorization = `Bearer ${token}`;
    if (body !== undefined) h['Content-Type'] ??= 'application/json';
    const res = await fetch(url + path, {
      method,
      headers: h,
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  };
}
