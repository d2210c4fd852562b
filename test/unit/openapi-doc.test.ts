// The JSON API's OpenAPI document as the README's "JSON API" section describes the API: one GET path
// per operation, /api/json.aspx/{Operation}/{RegistrationNumber}, with /{State} (CheckUSA,
// CheckAustralia) or /{state} (CheckCanada, as the WSDL spells it) after it; the username by Basic
// authentication or the `username` query parameter; UKMOT's Model as a query parameter; the error
// table's statuses and 401 without a username; the server URL as given.

import { OPERATIONS } from '../../src/contract/operations';
import { JSON_PATH, jsonPathTemplate, OPENAPI_PATH, openApiDocument } from '../../src/contract/openapi';

const CODES = ['MISSING_PARAMETER', 'VEHICLE_NOT_FOUND'];
// Built in each test (not once at load), so that what the document is made of counts as tested.
let doc: any;
beforeEach(() => {
  doc = openApiDocument('https://reg.example.com', CODES);
});

describe('the OpenAPI document', () => {
  test('OpenAPI 3.1, the server URL as given, Basic authentication or none', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([{ url: 'https://reg.example.com' }]);
    expect(doc.security).toEqual([{ basicAuth: [] }, {}]);
    expect(doc.components.securitySchemes.basicAuth).toMatchObject({ type: 'http', scheme: 'basic' });
    expect(typeof doc.info.title).toBe('string');
    expect(doc.info.title).not.toBe('');
    expect(doc.info.version).toMatch(/^\d+\.\d+\.\d+$/);
  });

  test("the paths are the README's", () => {
    expect(JSON_PATH).toBe('/api/json.aspx');
    expect(OPENAPI_PATH).toBe('/api/json.aspx/openapi.json');
    const paths = Object.keys(doc.paths);
    expect(paths).toHaveLength(31);
    expect(paths).toContain('/api/json.aspx/Check/{RegistrationNumber}');
    expect(paths).toContain('/api/json.aspx/CheckUSA/{RegistrationNumber}/{State}');
    expect(paths).toContain('/api/json.aspx/CheckAustralia/{RegistrationNumber}/{State}');
    expect(paths).toContain('/api/json.aspx/CheckCanada/{RegistrationNumber}/{state}');
    expect(paths).toContain('/api/json.aspx/UKMOT/{RegistrationNumber}');
    expect(jsonPathTemplate(OPERATIONS.find((o) => o.name === 'CheckNewZealand')!)).toBe(
      '/api/json.aspx/CheckNewZealand/{RegistrationNumber}',
    );
  });

  test('each path is a GET named after its operation, with the path parameters required', () => {
    const usa = doc.paths['/api/json.aspx/CheckUSA/{RegistrationNumber}/{State}'].get;
    expect(usa.operationId).toBe('CheckUSA');
    expect(usa.summary).toBe('CheckUSA: USA');
    const [reg, state, user, ...rest] = usa.parameters;
    expect(reg).toMatchObject({
      name: 'RegistrationNumber',
      in: 'path',
      required: true,
      schema: { type: 'string', minLength: 1, maxLength: 32 },
    });
    // The state: an abbreviation or a full name, a parameter of at most 256 characters as every other.
    expect(state).toMatchObject({
      name: 'State',
      in: 'path',
      required: true,
      schema: { type: 'string', minLength: 1, maxLength: 256 },
    });
    expect(state.description).toMatch(/abbreviation/);
    expect(reg.description).toMatch(/percent-encoded/);
    expect(user).toEqual({ $ref: '#/components/parameters/username' });
    expect(rest).toEqual([]);
    const canada = doc.paths['/api/json.aspx/CheckCanada/{RegistrationNumber}/{state}'].get;
    expect(canada.parameters[1]).toMatchObject({ name: 'state', in: 'path', required: true });
    const check = doc.paths['/api/json.aspx/Check/{RegistrationNumber}'].get;
    expect(check.parameters).toHaveLength(2);
    expect(check.parameters[0].name).toBe('RegistrationNumber');
  });

  test('UKMOT takes Model as an optional query parameter; no other operation does', () => {
    const mot = doc.paths['/api/json.aspx/UKMOT/{RegistrationNumber}'].get;
    expect(mot.parameters.map((p: any) => p.$ref ?? p.name)).toEqual([
      'RegistrationNumber',
      '#/components/parameters/username',
      '#/components/parameters/Model',
    ]);
    expect(doc.components.parameters.Model).toMatchObject({ name: 'Model', in: 'query', required: false });
    for (const [p, item] of Object.entries<any>(doc.paths)) {
      if (p.includes('/UKMOT/')) continue;
      expect(item.get.parameters.some((x: any) => x.$ref === '#/components/parameters/Model')).toBe(false);
    }
  });

  test('username is an optional query parameter (Basic authentication is the other way)', () => {
    expect(doc.components.parameters.username).toMatchObject({ name: 'username', in: 'query', required: false });
  });

  test('200 is the Vehicle for vehicle operations and the UKMOTData for UKMOT, as JSON, each described as such', () => {
    const ok = (p: string) => doc.paths[p].get.responses['200'].content['application/json'].schema.$ref;
    expect(ok('/api/json.aspx/Check/{RegistrationNumber}')).toBe('#/components/schemas/Vehicle');
    expect(ok('/api/json.aspx/UKMOT/{RegistrationNumber}')).toBe('#/components/schemas/UKMOTData');
    const said = (p: string) => doc.paths[p].get.responses['200'].description;
    expect(said('/api/json.aspx/Check/{RegistrationNumber}')).toMatch(/vehicle/i);
    expect(said('/api/json.aspx/Check/{RegistrationNumber}')).not.toMatch(/MOT/);
    expect(said('/api/json.aspx/UKMOT/{RegistrationNumber}')).toMatch(/MOT/);
  });

  test("errors: the error table's statuses and 401, each an Error object", () => {
    const responses = doc.paths['/api/json.aspx/Check/{RegistrationNumber}'].get.responses;
    expect(Object.keys(responses).sort()).toEqual(['200', '400', '401', '403', '404', '429', '500', '503']);
    for (const s of ['400', '401', '403', '404', '429', '500', '503']) {
      expect(responses[s].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
      expect(responses[s].description).not.toBe('');
    }
    expect(responses['401'].description).toMatch(/MISSING_PARAMETER/);
    expect(responses['403'].description).toMatch(/UNKNOWN_USERNAME/);
    expect(responses['429'].description).toMatch(/OUT_OF_CREDIT/);
    expect(responses['503'].description).toMatch(/SERVICE_UNAVAILABLE/);
  });

  test('the Error object: code (one of the codes given) and message, both required', () => {
    expect(doc.components.schemas.Error).toEqual({
      type: 'object',
      properties: { code: { type: 'string', enum: CODES }, message: { type: 'string' } },
      required: ['code', 'message'],
    });
  });

  test("the UKMOTData and UKTest schemas name the README's fields, lists as arrays of strings", () => {
    const mot = doc.components.schemas.UKMOTData;
    expect(Object.keys(mot.properties)).toEqual([
      'Tests',
      'taxDate',
      'Json',
      'ExtendedInformation',
      'ExtendedInformationJson',
      // Where the answer came from and as of when (docs/calling.md, "The age of an answer").
      'AnswerSource',
      'AnswerAsOf',
    ]);
    expect(mot.properties.Tests).toEqual({ type: 'array', items: { $ref: '#/components/schemas/UKTest' } });
    expect(mot.properties.ExtendedInformation.items).toMatchObject({ type: 'array' });
    const test = doc.components.schemas.UKTest;
    expect(Object.keys(test.properties)).toEqual([
      'TestDate',
      'ExpiryDate',
      'Result',
      'Odometer',
      'TestNumber',
      'FailureReasons',
      'Advisories',
    ]);
    expect(test.properties.Advisories.type).toBe('array');
    expect(test.required).toEqual(['FailureReasons', 'Advisories']);
  });

  test('every description and summary in the document says something (they are what a reader of the API sees)', () => {
    const found: string[] = [];
    const walk = (v: unknown, at: string): void => {
      if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${at}[${i}]`));
      else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          if (k === 'description' || k === 'summary') {
            found.push(at);
            expect({ at, text: typeof x === 'string' && x.trim().length > 3 }).toEqual({ at, text: true });
          }
          walk(x, `${at}.${k}`);
        }
      }
    };
    walk(doc, '$');
    // The info, both parameters of the components, the security scheme, and per path the two path-parameter, eight
    // response and one summary texts at least.
    expect(found.length).toBeGreaterThan(31 * 10);
    expect(found).toContain('$.info');
    expect(found).toContain('$.components.securitySchemes.basicAuth');
    expect(found).toContain('$.components.parameters.username');
    expect(found).toContain('$.components.parameters.Model');
    expect(found).toContain('$.components.schemas.Vehicle');
    expect(found).toContain('$.components.schemas.UKMOTData.properties.Json');
  });

  test('the JSON API description names the transports it mirrors and how the username is given', () => {
    expect(doc.info.description).toMatch(/\/api\/reg\.asmx/);
    expect(doc.info.description).toMatch(/Basic/);
    expect(doc.components.securitySchemes.basicAuth.description).toMatch(/password is ignored/);
  });

  test('the schemas: a vehicle is an open object; taxDate, Json and the lists as the README gives them', () => {
    expect(doc.components.schemas.Vehicle).toMatchObject({ type: 'object', additionalProperties: true });
    const mot = doc.components.schemas.UKMOTData;
    expect(mot.type).toBe('object');
    expect(mot.properties.taxDate).toEqual({ type: 'string' });
    expect(mot.properties.Json).toMatchObject({ type: 'string' });
    expect(mot.properties.ExtendedInformationJson).toEqual({ type: 'string' });
    expect(mot.properties.ExtendedInformation).toEqual({
      type: 'array',
      items: { type: 'array', items: { type: ['string', 'null'] } },
    });
    expect(mot.required).toEqual(['Tests', 'Json', 'ExtendedInformation', 'ExtendedInformationJson']);
    const test = doc.components.schemas.UKTest;
    expect(test.type).toBe('object');
    for (const f of ['TestDate', 'ExpiryDate', 'Result', 'Odometer', 'TestNumber'])
      expect(test.properties[f]).toEqual({ type: 'string' });
    for (const f of ['FailureReasons', 'Advisories'])
      expect(test.properties[f]).toEqual({ type: 'array', items: { type: ['string', 'null'] } });
    expect(doc.components.parameters.username.schema).toEqual({ type: 'string', minLength: 1, maxLength: 256 });
    expect(doc.components.parameters.Model.schema).toEqual({ type: 'string', maxLength: 256 });
  });
});
