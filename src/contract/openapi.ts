// The JSON API's OpenAPI 3.1 document, generated from the operation catalogue (no hand-kept copy):
// one path per operation, /api/json.aspx/{Operation}/{RegistrationNumber}, with /{state} or
// /{State} after it for the three subdivision operations under the operation's own parameter name.

import { OPERATIONS, type Operation } from './operations';

export const JSON_PATH = '/api/json.aspx';
export const OPENAPI_PATH = `${JSON_PATH}/openapi.json`;

type Doc = Record<string, unknown>;

/** The path template of an operation in the JSON API. */
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
        username: {
          name: 'username',
          in: 'query',
          required: false,
          description: 'The username, when not given by Basic authentication.',
          schema: { type: 'string', minLength: 1, maxLength: 256 },
        },
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
