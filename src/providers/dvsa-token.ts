// An OAuth 2.0 client-credentials token for the DVSA MOT History API, cached until shortly before
// it expires and fetched once however many calls wait for it: every caller that finds no fresh
// token awaits the same request. A token the API refused (401) is dropped, once, by whoever holds
// it: the calls that held the same stale token share the one refresh. The token request is bounded
// by the deadline of the lookup that makes it, and every call waiting for it stops waiting at its own
// deadline: a token endpoint that hangs costs a lookup its time budget, no more. The client secret
// goes only into the token request's body; no message here holds it, nor the token.

import { UpstreamFailure, type UpstreamHttp } from './provider';
import { failureForStatus, jsonBody } from './upstream-status';

interface TokenConfig {
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly scope: string;
}

/** A token is refreshed this long before it expires (or at 90 % of its life, if that is sooner). */
const REFRESH_BEFORE_MS = 60_000;
/** The longest a token request may take, however long the call that started it may wait. */
const TOKEN_TIMEOUT_MS = 10_000;

interface Token {
  readonly value: string;
  /** When to stop using it (ms, the clock of `now`). */
  readonly renewAt: number;
}

/** What bounds one call's wait for a token: its lookup's signal and deadline. */
interface TokenWait {
  readonly signal?: AbortSignal;
  readonly deadline?: number;
}

export class TokenSource {
  private token: Token | null = null;
  private pending: Promise<Token> | null = null;
  /** Token requests made (for tests and metrics). */
  requests = 0;

  constructor(
    private readonly config: TokenConfig,
    private readonly now: () => number = Date.now,
    /** Called before each token request (the DVSA quota counts it); may throw to refuse it. */
    private readonly beforeRequest: (wait: TokenWait) => Promise<void> = async () => undefined,
  ) {}

  /** A token that is fresh now: the cached one, or the one being fetched. */
  async get(http: UpstreamHttp, wait: TokenWait = {}): Promise<string> {
    const t = this.token;
    if (t && this.now() < t.renewAt) return t.value;
    if (!this.pending) {
      this.pending = this.request(http, wait).then(
        (token) => {
          this.token = token;
          this.pending = null;
          return token;
        },
        (e: unknown) => {
          this.pending = null;
          throw e;
        },
      );
    }
    return (await untilAborted(this.pending, wait.signal)).value;
  }

  /** The API refused `stale`: forget it, unless a newer one has taken its place already. */
  invalidate(stale: string): void {
    if (this.token?.value === stale) this.token = null;
  }

  private async request(http: UpstreamHttp, wait: TokenWait): Promise<Token> {
    await this.beforeRequest(wait);
    this.requests++;
    const { tokenUrl, clientId, clientSecret, scope } = this.config;
    const body = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
      scope,
    }).toString();
    const started = this.now();
    const res = await http(
      {
        method: 'POST',
        url: tokenUrl,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body,
      },
      wait.signal
        ? AbortSignal.any([wait.signal, AbortSignal.timeout(TOKEN_TIMEOUT_MS)])
        : AbortSignal.timeout(TOKEN_TIMEOUT_MS),
    ).catch((e: unknown) => {
      if (e instanceof UpstreamFailure)
        throw new UpstreamFailure('dvsa', e.kind, `the DVSA token endpoint: ${e.message}`, e.retryAfterS);
      throw new UpstreamFailure('dvsa', 'transient', 'the DVSA token endpoint could not be reached');
    });
    const what = 'the DVSA token endpoint';
    if (res.status === 400 || res.status === 401) {
      throw new UpstreamFailure(
        'dvsa',
        'permanent',
        `${what} refused our client credentials (${res.status}); check DVSA_CLIENT_ID, DVSA_CLIENT_SECRET and DVSA_SCOPE`,
      );
    }
    if (res.status !== 200) throw failureForStatus('dvsa', res.status, res.headers, what);
    const json = jsonBody('dvsa', what, res.body) as { access_token?: unknown; expires_in?: unknown } | null;
    const value = json?.access_token;
    const expiresIn = Number(json?.expires_in ?? 3600);
    if (
      typeof value !== 'string' ||
      value === '' ||
      !/^[\x21-\x7e]+$/.test(value) ||
      !Number.isFinite(expiresIn) ||
      expiresIn <= 0
    ) {
      throw new UpstreamFailure('dvsa', 'permanent', `${what} answered without a usable access_token and expires_in`);
    }
    const lifeMs = expiresIn * 1000;
    return { value, renewAt: started + lifeMs - Math.min(REFRESH_BEFORE_MS, lifeMs / 10) };
  }
}

/** `p`, or a transient failure as soon as `signal` aborts (the work behind `p` goes on for whoever else waits). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  const failure = () => new UpstreamFailure('dvsa', 'transient', 'the DVSA token endpoint did not answer in time');
  if (signal.aborted) return Promise.reject(failure());
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(failure());
    signal.addEventListener('abort', abort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', abort);
        resolve(v);
      },
      (e: Error) => {
        signal.removeEventListener('abort', abort);
        reject(e);
      },
    );
  });
}
