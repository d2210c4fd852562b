// Envelopes that are well-formed XML but trip node-soap's object builder, which runs after the guard:
// before the guard refused them, one of these polluted Object.prototype for every later request,
// and the others came back as node-soap's own fault or a bare engine error line.

import { NS, SOAP11, SOAP12, soapHeaders } from '../helpers/soap';
import { startServer, type TestServer } from '../helpers/server';
import { leakIn, soapFaultProblem } from './answers';
import { send } from './wire';

type Version = '1.1' | '1.2';
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});

function env(version: Version, inner: string, header = ''): string {
  return (
    `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${version === '1.1' ? SOAP11 : SOAP12}">` +
    `${header ? `<soap:Header>${header}</soap:Header>` : ''}<soap:Body><Check xmlns="${NS}">${inner}</Check></soap:Body></soap:Envelope>`
  );
}

const PARAMS = '<RegistrationNumber>RG11 ABC</RegistrationNumber><username>demo</username>';

async function post(version: Version, body: string) {
  const a = await send(server.port, { headers: soapHeaders(version, 'Check'), body });
  return { ...a, problem: await soapFaultProblem({ status: a.status, headers: a.headers, text: a.text }, version) };
}

async function expectHonestLookupWorks(version: Version): Promise<void> {
  const a = await post(version, env(version, PARAMS));
  expect(a.status).toBe(200);
  expect(a.text).toContain('<CheckResult>');
}

describe.each<Version>(['1.1', '1.2'])('SOAP %s', (version) => {
  test('id="__proto__" is refused, and the next caller is still served', async () => {
    for (const id of ['__proto__', '__pro&#116;o__', 'constructor', 'hasOwnProperty']) {
      const a = await post(
        version,
        env(version, `<RegistrationNumber id="${id}"><x>polluted</x></RegistrationNumber><username>demo</username>`),
      );
      expect(a.problem).toBeNull();
      expect(a.text).toContain('MALFORMED_REQUEST');
      await expectHonestLookupWorks(version);
    }
    expect(({} as Record<string, unknown>).obj).toBeUndefined();
  });

  test.each(Object.getOwnPropertyNames(Object.prototype))(
    'an element named %s is a MALFORMED_REQUEST fault, in the operation or a header',
    async (name) => {
      for (const body of [
        env(version, `<${name}>1</${name}>${PARAMS}`),
        env(version, PARAMS, `<${name} xmlns="urn:x">1</${name}>`),
        env(version, PARAMS.replace('<username>', `<username ${name}="1">`)),
      ]) {
        const a = await post(version, body);
        expect(a.problem).toBeNull();
        expect(a.text).toContain('MALFORMED_REQUEST');
        expect(leakIn(a.text)).toBeNull();
      }
    },
  );

  test('href references are refused rather than resolved', async () => {
    const a = await post(version, env(version, '<RegistrationNumber href="#toString"/><username>demo</username>'));
    expect(a.problem).toBeNull();
    expect(a.text).toMatch(/href references \(SOAP encoding\) are not accepted/);
  });

  test('a CDATA section holding an XML document is refused, not parsed a second time', async () => {
    for (const inner of [
      '<?xml version="1.0"?><a></b>',
      '<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>',
      '<?xml version="1.0"?><a>RG11 ABC</a>',
    ]) {
      const a = await post(
        version,
        env(version, `<RegistrationNumber><![CDATA[${inner}]]></RegistrationNumber><username>demo</username>`),
      );
      expect(a.problem).toBeNull();
      expect(a.text).toMatch(/holds an XML document/);
      expect(leakIn(a.text)).toBeNull();
    }
  });

  test('CDATA with ordinary text is still read as the value', async () => {
    const a = await post(
      version,
      env(version, '<RegistrationNumber><![CDATA[RG11 ABC]]></RegistrationNumber><username>demo</username>'),
    );
    expect(a.status).toBe(200);
  });

  test('mixed content (text and elements in one parameter) is refused, not half-read', async () => {
    for (const inner of [
      '<RegistrationNumber>A<Model>FOCUS</Model>A-00-AA</RegistrationNumber><username>demo</username>',
      '<RegistrationNumber><b/>RG11 ABC</RegistrationNumber><username>demo</username>',
    ]) {
      const a = await post(version, env(version, inner));
      expect(a.problem).toBeNull();
      expect(a.text).toMatch(/holds both text and elements/);
    }
  });

  test('an element named Body or Envelope out of its place is refused', async () => {
    for (const body of [
      env(version, PARAMS, '<Body><x>1</x></Body>'),
      env(version, PARAMS, '<Envelope/>'),
      env(version, PARAMS).replace('<soap:Body>', '<soap:Body/><soap:Body>'),
    ]) {
      const a = await post(version, body);
      expect(a.problem).toBeNull();
      expect(a.text).toMatch(/may appear only once, as the Envelope's own Body|inside the envelope/);
      expect(leakIn(a.text)).toBeNull();
    }
  });

  test("XML that sax rejects is our fault, not node-soap's", async () => {
    for (const inner of [
      `<!-- a -- b -->${PARAMS}`,
      `<!-- a --->${PARAMS}`,
      `<a\u00d7b/>${PARAMS}`,
      `<a:b:c xmlns:a="urn:a"/>${PARAMS}`,
      PARAMS.replace('RG11 ABC', 'RG11 ]]> ABC'),
    ]) {
      const a = await post(version, env(version, inner));
      expect(a.problem).toBeNull();
      expect(a.text).toContain('MALFORMED_REQUEST');
      expect(leakIn(a.text)).toBeNull();
    }
  });
});
