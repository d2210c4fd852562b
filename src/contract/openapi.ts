// The JSON API's OpenAPI 3.1 document, generated from the operation catalogue (no hand-kept copy):
// one path per operation, /api/json.aspx/{Operation}/{RegistrationNumber}, with /{state} or
// /{State} after it for the three subdivision operations under the operation's own parameter name.

import { OPERATIONS, type Operation } from './operations';

export const JSON_PATH = '/api/json.aspx';
export const OPENAPI_PATH = `${JSON_PATH}/openapi.json`;

type Doc = Record<string, unknown>;

/** The path template of an operation in the JSON API. */
/** The `username` query parameter, as the JSON API and the batch endpoints both take it. */
const USERNAME_PARAM = {
  name: 'username',
  in: 'query',
  required: false,
  description: 'The username, when not given by Basic authentication.',
  schema: { type: 'string', minLength: 1, maxLength: 256 },
};

export function jsonPathTemplate(op: Operation): string {
  return `${JSON_PATH}/${op.name}/{RegistrationNumber}${op.state ? `/{${op.state.param}}` : ''}`;
}

const errorResponse = (description: string): Doc => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

function operationItem(op: Operation): Doc {
  const parameters: Doc[] = [
    {
      name: 'RegistrationNumber',
      in: 'path',
      required: true,
      description: 'The registration, percent-encoded; case, spaces, hyphens and dots are ignored.',
      schema: { type: 'string', minLength: 1, maxLength: 32 },
    },
  ];
  if (op.state) {
    parameters.push({
      name: op.state.param,
      in: 'path',
      required: true,
      description: 'The state, province or territory: postal abbreviation or full name.',
      schema: { type: 'string', minLength: 1, maxLength: 256 },
    });
  }
  parameters.push({ $ref: '#/components/parameters/username' });
  if (op.params.includes('Model')) parameters.push({ $ref: '#/components/parameters/Model' });
  return {
    get: {
      operationId: op.name,
      summary: `${op.name}: ${op.country}`,
      parameters,
      responses: {
        '200': {
          description:
            op.result === 'Vehicle'
              ? 'The vehicle: the vehicleJson object itself.'
              : 'The MOT history: the UKMOTData fields.',
          headers: AGE_HEADERS,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${op.result}` } } },
        },
        '400': errorResponse('MISSING_PARAMETER, INVALID_PARAMETER or MALFORMED_REQUEST.'),
        '401': errorResponse('No username was given (MISSING_PARAMETER); answered with WWW-Authenticate.'),
        '403': errorResponse('UNKNOWN_USERNAME.'),
        '404': errorResponse('VEHICLE_NOT_FOUND, or UNKNOWN_OPERATION.'),
        '429': errorResponse('OUT_OF_CREDIT or RATE_LIMITED, with Retry-After.'),
        '500': errorResponse('INTERNAL_ERROR.'),
        '503': errorResponse('SERVICE_UNAVAILABLE, with Retry-After.'),
      },
    },
  };
}

const nullableString = { type: ['string', 'null'] };

/** Where an answer came from and as of when, as the 200 body holds it (docs/calling.md, "The age of an answer"). */
const PROVENANCE = {
  AnswerSource: {
    type: 'string',
    description: 'Where the answer came from: import, cache, sandbox, or the upstream that answered now (dvla, ...).',
  },
  AnswerAsOf: {
    type: ['string', 'null'],
    format: 'date-time',
    description: 'When the answer is as of (UTC, to the second); null when not known.',
  },
};

/** The 200 answer's headers of its age (RFC 9110, RFC 9111). */
const AGE_HEADERS = {
  'Last-Modified': {
    description: 'When the answer is as of (AnswerAsOf); absent when not known.',
    schema: { type: 'string' },
  },
  Age: {
    description: 'Seconds since a cached upstream answer was fetched; only on answers from the cache.',
    schema: { type: 'integer', minimum: 0 },
  },
};

/** The document; `serverUrl` is the base URL callers reach the service at. */
export function openApiDocument(serverUrl: string, errorCodes: readonly string[]): Doc {
  const paths: Doc = {};
  for (const op of OPERATIONS) paths[jsonPathTemplate(op)] = operationItem(op);
  return {
    openapi: '3.1.0',
    info: {
      title: 'reglookup JSON API',
      version: '1.0.0',
      description:
        'Vehicle registration lookups as JSON: the same operations, normalisation, accounts and errors as the SOAP and HTTP forms at /api/reg.asmx. ' +
        'The username comes from HTTP Basic authentication (the password is ignored) or the username query parameter. Query parameter names match ignoring case.',
    },
    servers: [{ url: serverUrl }],
    security: [{ basicAuth: [] }, {}],
    paths,
    components: {
      securitySchemes: {
        basicAuth: {
          type: 'http',
          scheme: 'basic',
          description: 'The username as the user-id; the password is ignored.',
        },
      },
      parameters: {
        username: USERNAME_PARAM,
        Model: {
          name: 'Model',
          in: 'query',
          required: false,
          description: 'Only a history whose make or model matches (ignoring case and spaces).',
          schema: { type: 'string', maxLength: 256 },
        },
      },
      schemas: {
        Vehicle: {
          type: 'object',
          description: 'The vehicle as stored, then AnswerSource and AnswerAsOf: vehicleJson over SOAP, byte for byte.',
          properties: PROVENANCE,
          additionalProperties: true,
        },
        UKTest: {
          type: 'object',
          properties: {
            TestDate: { type: 'string' },
            ExpiryDate: { type: 'string' },
            Result: { type: 'string' },
            Odometer: { type: 'string' },
            TestNumber: { type: 'string' },
            FailureReasons: { type: 'array', items: nullableString },
            Advisories: { type: 'array', items: nullableString },
          },
          required: ['FailureReasons', 'Advisories'],
        },
        UKMOTData: {
          type: 'object',
          properties: {
            Tests: { type: 'array', items: { $ref: '#/components/schemas/UKTest' } },
            taxDate: { type: 'string' },
            Json: { type: 'string', description: 'The tests as JSON text.' },
            ExtendedInformation: { type: 'array', items: { type: 'array', items: nullableString } },
            ExtendedInformationJson: { type: 'string' },
            ...PROVENANCE,
          },
          required: ['Tests', 'Json', 'ExtendedInformation', 'ExtendedInformationJson'],
        },
        Error: {
          type: 'object',
          properties: { code: { type: 'string', enum: [...errorCodes] }, message: { type: 'string' } },
          required: ['code', 'message'],
        },
      },
    },
  };
}

/** Where the batch endpoints' own document is served. */
export const BATCH_OPENAPI_PATH = '/api/batch/openapi.json';

const batchProgress: Doc = {
  type: 'object',
  properties: {
    id: { type: 'string', description: 'The job id (24 URL-safe characters).' },
    status: { type: 'string', enum: ['running', 'done', 'stopped'] },
    rows: { type: 'integer' },
    done: { type: 'integer', description: 'Rows answered so far.' },
    found: { type: 'integer', description: 'Rows answered with a vehicle (each charged one credit).' },
    notFound: { type: 'integer', description: 'Rows answered VEHICLE_NOT_FOUND.' },
    refused: { type: 'integer', description: 'Rows answered with another error code.' },
    note: { type: ['string', 'null'], description: 'Paused until midnight UTC, or stopped (OUT_OF_CREDIT), and why.' },
    createdAt: { type: 'string', format: 'date-time' },
    finishedAt: { type: ['string', 'null'], format: 'date-time' },
    expiresAt: { type: ['string', 'null'], format: 'date-time', description: 'When the results are deleted.' },
    results: { type: 'string', description: 'The path to GET for progress and results.' },
  },
  required: ['id', 'status', 'rows', 'done', 'found', 'notFound', 'refused'],
};

const batchRow: Doc = {
  type: 'object',
  description:
    "One input row, in input order: row (1, 2, ...), operation, registration, state, then either the answer's fields flattened (nested objects as dotted names: CarMake.CurrentTextValue; lists as JSON text) or code and message.",
  properties: {
    row: { type: 'integer' },
    operation: { type: 'string' },
    registration: { type: 'string' },
    state: { type: 'string' },
    code: { type: 'string' },
    message: { type: 'string' },
  },
  required: ['row', 'operation', 'registration', 'state'],
  additionalProperties: true,
};

const batchBody: Doc = {
  oneOf: [
    { type: 'array', items: { $ref: '#/components/schemas/BatchInput' } },
    {
      type: 'object',
      properties: { rows: { type: 'array', items: { $ref: '#/components/schemas/BatchInput' } } },
      required: ['rows'],
    },
  ],
};

const batchResults: Doc = {
  allOf: [
    { $ref: '#/components/schemas/BatchProgress' },
    { type: 'object', properties: { results: { type: 'array', items: { $ref: '#/components/schemas/BatchRow' } } } },
  ],
};

/** The batch endpoints' path items. */
function batchPaths(): Doc {
  const error = (d: string) => errorResponse(d);
  const username = { $ref: '#/components/parameters/username' };
  return {
    '/api/batch': {
      post: {
        operationId: 'submitBatch',
        summary: 'Submit a job: CSV with a header row (operation,registration,state) or JSON',
        parameters: [
          username,
          {
            name: 'operation',
            in: 'query',
            required: false,
            description: 'The operation of rows that name none (a CSV without an operation column).',
            schema: { type: 'string' },
          },
        ],
        requestBody: {
          required: true,
          content: {
            'text/csv': { schema: { type: 'string' } },
            'application/json': {
              schema: batchBody,
            },
          },
        },
        responses: {
          '202': {
            description: 'Accepted: the job runs; Location names it.',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/BatchProgress' } } },
          },
          '400': error('MISSING_PARAMETER (no username) or MALFORMED_REQUEST (bad CSV header, bad JSON, no rows).'),
          '413': error('PAYLOAD_TOO_LARGE: more than BATCH_MAX_ROWS rows.'),
          '415': error('UNSUPPORTED_MEDIA_TYPE: not text/csv or application/json.'),
        },
      },
    },
    '/api/batch/{id}': {
      get: {
        operationId: 'readBatch',
        summary: 'A job: its progress while it runs; its results once it has ended',
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
          username,
          { name: 'format', in: 'query', required: false, schema: { type: 'string', enum: ['csv', 'json'] } },
        ],
        responses: {
          '200': {
            description: 'Ended (done or stopped): the results, one row per input row (format=, else Accept).',
            content: {
              'application/json': {
                schema: batchResults,
              },
              'text/csv': { schema: { type: 'string' } },
            },
          },
          '202': {
            description: 'Running: the progress, with Retry-After.',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/BatchProgress' } } },
          },
          '404': error('UNKNOWN_OPERATION: no job with that id for this username (or it has expired).'),
        },
      },
    },
  };
}

/** The batch endpoints (POST /api/batch, GET /api/batch/{id}); `serverUrl` as for openApiDocument. */
export function batchOpenApiDocument(serverUrl: string, errorCodes: readonly string[]): Doc {
  return {
    openapi: '3.1.0',
    info: {
      title: 'reglookup batch jobs',
      version: '1.0.0',
      description:
        'Many lookups as one job: each row is looked up as one JSON API lookup would be (same accounts, credits, limits); limits pace the job rather than fail its rows.',
    },
    servers: [{ url: serverUrl }],
    security: [{ basicAuth: [] }, {}],
    paths: batchPaths(),
    components: {
      securitySchemes: { basicAuth: { type: 'http', scheme: 'basic', description: 'The username as the user-id.' } },
      parameters: {
        username: USERNAME_PARAM,
      },
      schemas: {
        BatchInput: {
          type: 'object',
          properties: { operation: { type: 'string' }, registration: { type: 'string' }, state: { type: 'string' } },
          required: ['registration'],
        },
        BatchProgress: batchProgress,
        BatchRow: batchRow,
        Error: {
          type: 'object',
          properties: { code: { type: 'string', enum: [...errorCodes] }, message: { type: 'string' } },
          required: ['code', 'message'],
        },
      },
    },
  };
}
