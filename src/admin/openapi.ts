// The admin API's OpenAPI 3.1 document, written from the route table (routes.ts) that the router
// uses: each route's path, parameters, body schema and answers. Served at /admin/openapi.json.

import { VERSION } from '../ops/version';
import { ROUTES, type Param, type Route } from './routes';
import type { Schema } from './schema';

export const OPENAPI_PATH = '/admin/openapi.json';

const ERROR: Schema = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: {
      type: 'string',
      description: 'what went wrong, for a program: UNAUTHORIZED, INVALID_INPUT, NOT_FOUND, ...',
    },
    message: { type: 'string', description: 'for a person' },
  },
};

const STATUS_TEXT: Record<number, string> = {
  400: 'the input is not valid (the message says which field and why)',
  401: 'no valid admin token',
  429: 'too many failed attempts from this address, or from all, are waiting for their answer (Retry-After)',
  404: 'no account of that name',
  409: 'the username exists',
  422: 'the Idempotency-Key was used for another request',
  503: 'not available now (the message says why)',
};

function parameters(route: Route): unknown[] {
  const out: unknown[] = [];
  if (route.path.includes('{name}'))
    out.push({ name: 'name', in: 'path', required: true, description: 'the username', schema: { type: 'string' } });
  const add = (where: 'query' | 'header', params: Readonly<Record<string, Param>> | undefined) => {
    for (const [name, p] of Object.entries(params ?? {}))
      out.push({ name, in: where, required: p.required === true, description: p.description, schema: p.schema });
  };
  add('query', route.query);
  add('header', route.headers);
  return out;
}

function operation(route: Route): Record<string, unknown> {
  const json = (schema: Schema) => ({ 'application/json': { schema } });
  const ok: Record<string, unknown> = { description: route.ok.description };
  if (route.ok.schema)
    ok.content = { ...json(route.ok.schema), ...(route.ok.csv ? { 'text/csv': { schema: { type: 'string' } } } : {}) };
  const responses: Record<string, unknown> = { [String(route.ok.status)]: ok };
  for (const status of [401, 429, ...route.errors])
    responses[String(status)] = {
      description: STATUS_TEXT[status] ?? 'an error',
      content: json({ $ref: '#/components/schemas/Error' }),
    };
  const op: Record<string, unknown> = {
    operationId: route.operationId,
    summary: route.summary,
    parameters: parameters(route),
    responses,
  };
  if (route.body) op.requestBody = { required: true, content: json(route.body) };
  return op;
}

export function openApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route);
  return {
    openapi: '3.1.0',
    info: {
      title: 'reglookup admin API',
      version: VERSION,
      description:
        'Managing callers, credits and usage, on the admin listener (ADMIN_PORT). Every call needs Authorization: Bearer <token> (ADMIN_TOKENS).',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths,
    components: { schemas: { Error: ERROR }, securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
  };
}
