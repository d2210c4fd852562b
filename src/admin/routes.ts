// The admin API as one table: each route's method, path, parameters, body schema and answer, and
// its handler. The router (server.ts) matches and checks requests by this table, and the OpenAPI
// document (openapi.ts) is written from it, so the document says what the routes do.

import { messageOf } from '../core/errors';
import type { IncomingHttpHeaders } from 'node:http';
import { AccountAdmin, allowProblem, fromDayFor, noSuch, rateProblem, SETTING_BOUNDS } from '../accounts/manage';
import { today } from '../accounts/clock';
import type { Account, AccountChanges, AccountSummary } from '../store/accounts';
import type { VehicleStore } from '../store/store';
import { AdminError, invalid } from './errors';
import type { OverviewHistory } from './overview';
import { usageCsv, usageJson, usageRange } from './billing';
import type { Schema } from './schema';
import { cacheFilterOf } from '../service/cachefilter';
import type { CacheFilter } from '../store/cache';
import { batchRoutes, type AdminBatches } from './batch';

export interface AdminContext {
  readonly store: VehicleStore;
  /** The service's metrics, read every minute for the overview (null: METRICS=off). */
  readonly overview: OverviewHistory | null;
  /** Seconds a rotated-out username stays valid (USERNAME_ROTATION_GRACE_S). */
  readonly rotationGraceS: number;
  /** The service's batch jobs, where the service runs in this process (null: WORKERS > 1). */
  readonly batches?: AdminBatches | null;
}

export interface Request {
  readonly ctx: AdminContext;
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string | number | undefined>>;
  readonly body: unknown;
  readonly headers: IncomingHttpHeaders;
  /** The admin token's name: who the audit log records. */
  readonly actor: string;
}

export interface Reply {
  readonly status: number;
  readonly body?: unknown;
  /** A body that is not JSON (CSV), with its type. */
  readonly text?: string;
  readonly contentType?: string;
}

export interface Param {
  readonly description: string;
  readonly schema: Schema;
  readonly required?: boolean;
}

export interface Route {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** With `{name}` for a path parameter. */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly query?: Readonly<Record<string, Param>>;
  readonly headers?: Readonly<Record<string, Param>>;
  readonly body?: Schema;
  /** The largest body it takes, in bytes, where that is not the listener's 64 KiB (a batch job's CSV). */
  readonly maxBody?: (ctx: AdminContext) => number;
  readonly ok: {
    readonly status: number;
    readonly description: string;
    readonly schema?: Schema;
    readonly csv?: boolean;
  };
  /** Statuses besides 401 (every route) it may answer with an error. */
  readonly errors: readonly number[];
  readonly handle: (req: Request) => Promise<Reply>;
}

const nullableInt = (min: number, max: number, description: string): Schema => ({
  type: ['integer', 'null'],
  minimum: min,
  maximum: max,
  description,
});

/** The settings an operator writes (PATCH, and POST besides the name). */
const SETTINGS: Record<string, Schema> = {
  credits: nullableInt(0, SETTING_BOUNDS.credits.max, 'lookups left; null: unlimited'),
  dailyLimit: nullableInt(
    SETTING_BOUNDS.dailyLimit.min,
    SETTING_BOUNDS.dailyLimit.max,
    'successful lookups per UTC day; null: none',
  ),
  rate: {
    type: ['number', 'null'],
    minimum: 0,
    maximum: SETTING_BOUNDS.rate.max,
    description: "lookups per second; 0: no rate limit; null: the service's RATE_LIMIT",
  },
  allow: {
    type: 'array',
    items: { type: 'string', maxLength: 64 },
    maxItems: SETTING_BOUNDS.allowEntries,
    description: 'addresses or CIDRs it may be used from; empty: anywhere',
  },
};

const USER: Schema = {
  type: 'object',
  required: ['name', 'prefix', 'enabled', 'credits', 'dailyLimit', 'rate', 'allow'],
  properties: {
    name: { type: 'string', description: 'what people call the account; the API paths name it' },
    prefix: { type: 'string', description: 'the first characters of its username (at most 6), for recognition' },
    weak: {
      type: ['string', 'null'],
      description: 'short or invisible: its username was found guessable when the store was migrated; rotate it',
    },
    enabled: { type: 'boolean' },
    ...SETTINGS,
    usedToday: { type: 'integer', description: 'successful lookups today (UTC); in lists' },
  },
};

const USAGE_ROW: Schema = {
  type: 'object',
  required: ['day', 'operation', 'found', 'notFound'],
  properties: {
    name: { type: 'string', description: "the account's name (in every caller's usage)" },
    day: { type: 'string', format: 'date' },
    operation: { type: 'string' },
    found: { type: 'integer' },
    notFound: { type: 'integer' },
  },
};

const AUDIT_ENTRY: Schema = {
  type: 'object',
  required: ['id', 'at', 'actor', 'action', 'target'],
  properties: {
    id: { type: 'integer' },
    at: { type: 'string', format: 'date-time' },
    actor: { type: 'string', description: "the admin token's name, or cli:<user>" },
    action: {
      type: 'string',
      enum: ['add', 'update', 'credit', 'disable', 'enable', 'remove', 'rotate', 'import', 'cache-purge'],
    },
    target: {
      type: 'string',
      description: "the account's name (cache-purge: the operation and registration purged, or (all))",
    },
    before: { description: 'the settings before (null: none)' },
    after: { description: 'the settings after (null: removed)' },
  },
};

const LIMIT: Param = {
  description: 'at most this many (default 50)',
  schema: { type: 'integer', minimum: 1, maximum: 1000 },
};
const CURSOR: Param = { description: "the previous page's `next`", schema: { type: 'string', maxLength: 400 } };
const NAME_ERRORS = [404];

function userJson(a: Account | AccountSummary): Record<string, unknown> {
  const out: Record<string, unknown> = {
    name: a.name,
    prefix: a.prefix,
    weak: a.weak,
    enabled: a.enabled,
    credits: a.credits,
    dailyLimit: a.dailyLimit,
    rate: a.rate,
    allow: [...a.allow],
  };
  if ('usedToday' in a) out.usedToday = a.usedToday;
  return out;
}

/** An opaque cursor: where the next page starts, base64url of JSON. */
function cursorOf(value: string | number): string {
  return Buffer.from(JSON.stringify({ v: value })).toString('base64url');
}

function cursorValue<T extends string | number>(
  raw: string | number | undefined,
  kind: 'string' | 'number',
): T | undefined {
  if (raw === undefined) return undefined;
  try {
    const v = (JSON.parse(Buffer.from(String(raw), 'base64url').toString('utf8')) as { v?: unknown }).v;
    if (typeof v === kind) return v as T;
  } catch {
    // Answered below.
  }
  throw invalid("cursor is not one this API gave; pass a page's `next` as it came, or leave it out for the first page");
}

function admin(req: Request): AccountAdmin {
  return new AccountAdmin(req.ctx.store, req.actor);
}

/** The settings of a body that passed its schema, with the checks a schema cannot say. */
function changesOf(body: Record<string, unknown>): AccountChanges {
  const out: { -readonly [K in keyof AccountChanges]: AccountChanges[K] } = {};
  if (body.credits !== undefined) out.credits = body.credits as number | null;
  if (body.dailyLimit !== undefined) out.dailyLimit = body.dailyLimit as number | null;
  if (body.rate !== undefined) {
    const problem = body.rate === null ? null : rateProblem(body.rate as number);
    if (problem) throw invalid(`rate ${problem}`);
    out.rate = body.rate as number | null;
  }
  if (body.allow !== undefined) {
    const problem = allowProblem(body.allow as string[]);
    if (problem) throw invalid(`allow: ${problem}`);
    out.allow = body.allow as string[];
  }
  if (body.enabled !== undefined) out.enabled = body.enabled as boolean;
  return out;
}

async function account(req: Request): Promise<Account> {
  const a = await req.ctx.store.accounts.getAccountByName(req.params.name);
  if (!a) throw noSuch(req.params.name);
  return a;
}

const IDEMPOTENCY_KEY_RE = /^[\x21-\x7e]{8,200}$/;

/** The upstream cache's filter from a request (query or body), or INVALID_INPUT naming the field. */
function cacheFilter(operation: unknown, registration: unknown): CacheFilter {
  try {
    return cacheFilterOf(operation as string | undefined, registration as string | undefined, (field) => field);
  } catch (e) {
    throw invalid((e as Error).message);
  }
}

const CACHE_FILTER: Record<string, Param> = {
  operation: {
    description: 'only this operation (Check, UKMOT, ...)',
    schema: { type: 'string', minLength: 1, maxLength: 64 },
  },
  registration: {
    description: 'only this registration (spaces and case do not matter)',
    schema: { type: 'string', minLength: 1, maxLength: 64 },
  },
};

const CACHE_FILTER_BODY: Record<string, Schema> = {
  operation: CACHE_FILTER.operation.schema,
  registration: CACHE_FILTER.registration.schema,
};

const CACHE_ROW: Schema = {
  type: 'object',
  required: ['operation', 'provider', 'found', 'notFound', 'oldest', 'newest'],
  properties: {
    operation: { type: 'string' },
    provider: { type: 'string' },
    found: { type: 'integer', description: 'entries holding an answer' },
    notFound: { type: 'integer', description: 'entries holding a not-found' },
    oldest: { type: 'string', format: 'date-time', description: 'fetch time of the oldest entry' },
    newest: { type: 'string', format: 'date-time', description: 'fetch time of the newest entry' },
  },
};

/** The upstream cache (answers fetched from upstream providers, docs/upstream.md): its statistics, and purging it. */
function cacheRoutes(): Route[] {
  return [
    {
      method: 'GET',
      path: '/admin/api/cache',
      operationId: 'cacheStats',
      summary: 'What the upstream cache holds, by operation and provider (imported records are not in it)',
      query: CACHE_FILTER,
      ok: {
        status: 200,
        description: 'the statistics',
        schema: { type: 'object', required: ['entries'], properties: { entries: { type: 'array', items: CACHE_ROW } } },
      },
      errors: [400],
      handle: async (req) => {
        const rows = await req.ctx.store.cacheStats(cacheFilter(req.query.operation, req.query.registration));
        const iso = (ms: number) => new Date(ms).toISOString();
        return {
          status: 200,
          body: { entries: rows.map((r) => ({ ...r, oldest: iso(r.oldest), newest: iso(r.newest) })) },
        };
      },
    },
    {
      method: 'POST',
      path: '/admin/api/cache/purge',
      operationId: 'cachePurge',
      summary:
        'Removes cached upstream answers (all, or those of one operation or registration); the next lookup fetches again. Audited',
      body: { type: 'object', additionalProperties: false, properties: CACHE_FILTER_BODY },
      ok: {
        status: 200,
        description: 'how many were removed',
        schema: { type: 'object', required: ['purged'], properties: { purged: { type: 'integer' } } },
      },
      errors: [400],
      handle: async (req) => {
        const body = req.body as { operation?: string; registration?: string };
        const filter = cacheFilter(body.operation, body.registration);
        const purged = await req.ctx.store.cachePurge(filter);
        const target = [filter.operation, filter.registration].filter((x) => x !== undefined).join(' ') || '(all)';
        await req.ctx.store.admin.addAudit({
          at: new Date().toISOString(),
          actor: req.actor,
          action: 'cache-purge',
          target,
          before: null,
          after: { purged },
        });
        return { status: 200, body: { purged } };
      },
    },
  ];
}

export const ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/admin/api/users',
    operationId: 'listUsers',
    summary: 'Callers, a page at a time, by username',
    query: {
      search: { description: 'only usernames containing this (any case)', schema: { type: 'string', maxLength: 200 } },
      limit: LIMIT,
      cursor: CURSOR,
    },
    ok: {
      status: 200,
      description: 'a page',
      schema: {
        type: 'object',
        required: ['users', 'next'],
        properties: { users: { type: 'array', items: USER }, next: { type: ['string', 'null'] } },
      },
    },
    errors: [400],
    handle: async (req) => {
      const limit = (req.query.limit as number | undefined) ?? 50;
      const page = await req.ctx.store.admin.listPage(today(), {
        search: String(req.query.search ?? ''),
        after: cursorValue<string>(req.query.cursor, 'string') ?? '',
        limit,
      });
      const last = page.accounts[page.accounts.length - 1];
      return {
        status: 200,
        body: { users: page.accounts.map(userJson), next: page.more && last ? cursorOf(last.name) : null },
      };
    },
  },
  {
    method: 'POST',
    path: '/admin/api/users',
    operationId: 'addUser',
    summary:
      'Adds an account: its name, and its username given or generated (128 random bits; answered this once, as username)',
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['name'],
      properties: {
        name: { type: 'string', maxLength: 64 },
        username: { type: 'string', maxLength: 256, description: "the caller's username; the store keeps its hash" },
        generate: { type: 'boolean', description: 'make an unguessable username' },
        ...SETTINGS,
        enabled: { type: 'boolean' },
      },
    },
    ok: {
      status: 201,
      description: 'added; with "generate", the username, which is never shown again',
      schema: { ...USER, properties: { ...USER.properties, username: { type: 'string' } } },
    },
    errors: [400, 409],
    handle: async (req) => {
      const body = req.body as Record<string, unknown>;
      if (body.generate === true && body.username !== undefined)
        throw invalid('give a username or "generate": true, not both');
      if (body.generate !== true && body.username === undefined)
        throw invalid('give a username, or "generate": true to make one');
      const r = await admin(req).add({
        name: body.name as string,
        username: body.generate === true ? undefined : (body.username as string),
        settings: changesOf(body),
      });
      return {
        status: 201,
        body: { ...userJson(r.account), ...(body.generate === true ? { username: r.username } : {}) },
      };
    },
  },
  ...userRoutes(),
  rotateRoute(),
  ...switchRoutes(),
  ...cacheRoutes(),
  ...reportRoutes(),
  ...auditRoutes(),
  ...batchRoutes(),
  {
    method: 'GET',
    path: '/admin/api/overview',
    operationId: 'overview',
    summary:
      "Lookups by outcome since start, latency p50/p99, the last hour's lookups, refusals and p99 a minute, and the upstreams' breakers and calls, from the service's metrics",
    ok: {
      status: 200,
      description: 'the reading',
      schema: {
        type: 'object',
        properties: {
          at: { type: 'integer', description: 'ms since the epoch' },
          requests: { type: 'object', additionalProperties: { type: 'integer' } },
          latency: {
            type: 'object',
            properties: { p50: { type: ['number', 'null'] }, p99: { type: ['number', 'null'] } },
          },
          minutes: {
            type: 'array',
            description: 'the last hour, oldest first: one entry a minute (the last may be shorter)',
            items: {
              type: 'object',
              properties: {
                at: { type: 'integer', description: 'its end, ms since the epoch' },
                ms: { type: 'integer', description: 'its length' },
                lookups: { type: 'integer' },
                refusals: { type: 'integer', description: 'OUT_OF_CREDIT, DAILY_LIMIT_REACHED, RATE_LIMITED' },
                p99: { type: ['number', 'null'], description: 'seconds' },
              },
            },
          },
          upstreams: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                provider: { type: 'string' },
                breaker: { type: 'string', enum: ['closed', 'open', 'half_open', 'isolated'] },
                calls: {
                  type: 'object',
                  additionalProperties: { type: 'integer' },
                  description: 'by outcome, over the minutes',
                },
              },
            },
          },
        },
      },
    },
    errors: [503],
    handle: async (req) => {
      if (!req.ctx.overview)
        throw new AdminError(
          503,
          'METRICS_OFF',
          'the service counts nothing with METRICS=off; turn METRICS on for the overview',
        );
      // With WORKERS > 1 the text is gathered from every worker, which may not all answer (one starting, one stuck).
      const body = await req.ctx.overview.overview().catch((e: unknown) => {
        throw new AdminError(
          503,
          'METRICS_UNAVAILABLE',
          `the metrics could not be collected now (${messageOf(e).slice(0, 100)}); retry in a few seconds`,
        );
      });
      return { status: 200, body };
    },
  },
  {
    method: 'GET',
    path: '/admin/api/import',
    operationId: 'importStatus',
    summary: 'What the store holds: empty, the bundled sample only, or imported data',
    ok: {
      status: 200,
      description: 'the status',
      schema: { type: 'object', properties: { state: { type: 'string', enum: ['empty', 'sample', 'imported'] } } },
    },
    errors: [],
    handle: async (req) => {
      const s = req.ctx.store;
      const state = (await s.isEmpty()) ? 'empty' : (await s.holdsOnlySample()) ? 'sample' : 'imported';
      return { status: 200, body: { state } };
    },
  },
];

/** A new username for a caller, answered once (users rotate). */
function rotateRoute(): Route {
  return {
    method: 'POST',
    path: '/admin/api/users/{name}/rotate',
    operationId: 'rotateUser',
    summary:
      'Gives the caller a new username, answered this once; the old one stays valid for USERNAME_ROTATION_GRACE_S seconds',
    ok: {
      status: 200,
      description: 'rotated',
      schema: {
        type: 'object',
        required: ['name', 'username', 'oldUntil'],
        properties: {
          name: { type: 'string' },
          username: { type: 'string', description: 'the new username, never shown again' },
          prefix: { type: 'string' },
          oldUntil: { type: 'string', format: 'date-time', description: 'when the old username stops working' },
        },
      },
    },
    errors: NAME_ERRORS,
    handle: async (req) => {
      const r = await admin(req).rotate(req.params.name, req.ctx.rotationGraceS);
      return {
        status: 200,
        body: {
          name: r.account.name,
          username: r.username,
          prefix: r.account.prefix,
          oldUntil: new Date(r.until).toISOString(),
        },
      };
    },
  };
}

function userRoutes(): Route[] {
  return [
    {
      method: 'GET',
      path: '/admin/api/users/{name}',
      operationId: 'getUser',
      summary: "A caller's settings and credits",
      ok: { status: 200, description: 'the caller', schema: USER },
      errors: NAME_ERRORS,
      handle: async (req) => ({ status: 200, body: userJson(await account(req)) }),
    },
    {
      method: 'PATCH',
      path: '/admin/api/users/{name}',
      operationId: 'changeUser',
      summary:
        "Changes the fields given of a caller's settings (credits here replace the balance; top-ups go to /credits)",
      body: { type: 'object', additionalProperties: false, properties: SETTINGS },
      ok: { status: 200, description: 'as now stored', schema: USER },
      errors: [400, 404],
      handle: async (req) => {
        const changes = changesOf(req.body as Record<string, unknown>);
        if (Object.keys(changes).length === 0)
          throw invalid('nothing to change: give credits, dailyLimit, rate or allow');
        return { status: 200, body: userJson(await admin(req).update(req.params.name, changes)) };
      },
    },
    {
      method: 'DELETE',
      path: '/admin/api/users/{name}',
      operationId: 'removeUser',
      summary: 'Removes a caller and its usage records',
      ok: { status: 204, description: 'removed' },
      errors: NAME_ERRORS,
      handle: async (req) => {
        await admin(req).remove(req.params.name);
        return { status: 204 };
      },
    },
    {
      method: 'POST',
      path: '/admin/api/users/{name}/credits',
      operationId: 'addCredits',
      summary: 'Adds credits (a negative amount takes them, never below 0), once per Idempotency-Key',
      headers: {
        'Idempotency-Key': {
          description: 'a new unique value (a UUID) per top-up; a retry sends the same one and is applied once',
          schema: { type: 'string', minLength: 8, maxLength: 200 },
          required: true,
        },
      },
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['amount'],
        properties: { amount: { type: 'integer', minimum: -SETTING_BOUNDS.amount, maximum: SETTING_BOUNDS.amount } },
      },
      ok: {
        status: 200,
        description: 'the balance after the top-up; replayed: this key was applied before and nothing changed now',
        schema: {
          type: 'object',
          required: ['name', 'balance', 'replayed'],
          properties: { name: { type: 'string' }, balance: { type: 'integer' }, replayed: { type: 'boolean' } },
        },
      },
      errors: [400, 404, 422],
      handle: async (req) => {
        const key = req.headers['idempotency-key'];
        if (typeof key !== 'string' || !IDEMPOTENCY_KEY_RE.test(key))
          throw invalid(
            'an Idempotency-Key header is required: 8 to 200 printable characters (a UUID), new for each top-up and the same for its retries',
          );
        const amount = (req.body as { amount: number }).amount;
        const done = await admin(req).credit(req.params.name, amount, key);
        return { status: 200, body: { name: req.params.name, balance: done.balance, replayed: done.replayed } };
      },
    },
  ];
}

function reportRoutes(): Route[] {
  return [
    {
      method: 'GET',
      path: '/admin/api/users/{name}/usage',
      operationId: 'userUsage',
      summary: "A caller's lookups a UTC day by operation, found and not found, newest day first",
      query: {
        days: {
          description: 'days, today included (default 30)',
          schema: { type: 'integer', minimum: 1, maximum: 36500 },
        },
      },
      ok: {
        status: 200,
        description: 'the days',
        schema: {
          type: 'object',
          required: ['name', 'from', 'usage'],
          properties: {
            name: { type: 'string' },
            from: { type: 'string', format: 'date' },
            usage: { type: 'array', items: USAGE_ROW },
          },
        },
      },
      errors: [400, 404],
      handle: async (req) => {
        const a = await account(req);
        const from = fromDayFor((req.query.days as number | undefined) ?? 30);
        const rows = await req.ctx.store.accounts.usage(a.username, from);
        return {
          status: 200,
          body: {
            name: a.name,
            from,
            usage: rows.map((r) => ({ day: r.day, operation: r.operation, found: r.found, notFound: r.notFound })),
          },
        };
      },
    },
    {
      method: 'GET',
      path: '/admin/api/usage',
      operationId: 'usageAll',
      summary: 'Every caller’s lookups a day by operation over a date range, as JSON or CSV, for invoicing',
      query: {
        from: { description: 'first UTC day, YYYY-MM-DD', schema: { type: 'string', format: 'date' }, required: true },
        to: {
          description: 'last UTC day, YYYY-MM-DD (included)',
          schema: { type: 'string', format: 'date' },
          required: true,
        },
        format: { description: 'json (default) or csv', schema: { type: 'string', enum: ['json', 'csv'] } },
      },
      ok: {
        status: 200,
        description: 'the rows, by name, day and operation',
        schema: {
          type: 'object',
          properties: { from: { type: 'string' }, to: { type: 'string' }, usage: { type: 'array', items: USAGE_ROW } },
        },
        csv: true,
      },
      errors: [400],
      handle: async (req) => {
        const { from, to, rows } = await usageRange(req.ctx.store, req.query.from as string, req.query.to as string);
        if (req.query.format === 'csv')
          return { status: 200, text: usageCsv(rows), contentType: 'text/csv; charset=utf-8' };
        return { status: 200, body: { from, to, usage: usageJson(rows) } };
      },
    },
  ];
}

/** Disabling and enabling a caller. */
function switchRoutes(): Route[] {
  return [
    ...(['disable', 'enable'] as const).map((what): Route => ({
      method: 'POST',
      path: `/admin/api/users/{name}/${what}`,
      operationId: `${what}User`,
      summary:
        what === 'disable'
          ? 'Refuses every lookup by the caller, keeping its settings and usage'
          : 'Lets a disabled caller make lookups again',
      ok: { status: 200, description: 'as now stored', schema: USER },
      errors: NAME_ERRORS,
      handle: async (req) => {
        await admin(req).setEnabled(req.params.name, what === 'enable');
        return { status: 200, body: userJson(await account(req)) };
      },
    })),
  ];
}

/** The audit log, a page at a time. */
function auditRoutes(): Route[] {
  return [
    {
      method: 'GET',
      path: '/admin/api/audit',
      operationId: 'audit',
      summary: 'The audit log, newest first: who (token name), when, what, before and after',
      query: { limit: LIMIT, cursor: CURSOR },
      ok: {
        status: 200,
        description: 'a page',
        schema: {
          type: 'object',
          required: ['entries', 'next'],
          properties: { entries: { type: 'array', items: AUDIT_ENTRY }, next: { type: ['string', 'null'] } },
        },
      },
      errors: [400],
      handle: async (req) => {
        const limit = (req.query.limit as number | undefined) ?? 50;
        const entries = await req.ctx.store.admin.audit(
          cursorValue<number>(req.query.cursor, 'number') ?? 0,
          limit + 1,
        );
        const page = entries.slice(0, limit);
        return {
          status: 200,
          body: { entries: page, next: entries.length > limit ? cursorOf(page[page.length - 1].id) : null },
        };
      },
    },
  ];
}
