// A plain SOAP request is answered without node-soap (issue 29: SOAP's CPU a request); node-soap
// still serves every other envelope. The direct answer must be the one node-soap gives: node-soap
// itself is the oracle here, reached by the same envelope with a comment in it.

import { simpleParams } from '../../src/transport/soap';
import { startServer, type TestServer } from '../helpers/server';
import { envelope, NS } from '../helpers/soap';
import { postSoap } from '../helpers/call';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(() => srv.close());

/** What the direct path must answer exactly as node-soap does: the status, the headers that matter, the bytes. */
async function post(version: '1.1' | '1.2', body: string) {
  const a = await postSoap(srv.url, version, body);
  return {
    status: a.status,
    type: a.headers.get('content-type'),
    length: a.headers.get('content-length'),
    retry: a.headers.get('retry-after'),
    body: a.body,
  };
}

const cases: [string, Record<string, string>][] = [
  ['a vehicle found', { RegistrationNumber: 'RG11 ABC', username: 'demo' }],
  ['no vehicle (a Client fault)', { RegistrationNumber: 'ZZ99 ZZZ', username: 'demo' }],
  ['no username (a fault)', { RegistrationNumber: 'RG11 ABC' }],
  ['an unknown parameter beside the others', { RegistrationNumber: 'RG11 ABC', username: 'demo', Colour: 'red' }],
];

describe.each(['1.1', '1.2'] as const)('SOAP %s: the direct answer is byte for byte node-soap answer', (version) => {
  test.each(cases)('%s', async (_name, params) => {
    const plain = envelope(version, 'Check', params);
    expect(simpleParams(plain, 'Check')).toEqual(params); // this one takes the direct path
    const viaNodeSoap = plain.replace('</Check>', '<!-- node-soap --></Check>');
    expect(simpleParams(viaNodeSoap, 'Check')).toBeNull();
    const direct = await post(version, plain);
    const oracle = await post(version, viaNodeSoap);
    expect(direct).toEqual(oracle);
    expect(direct.body.startsWith('<?xml version="1.0" encoding="utf-8"?><soap:Envelope')).toBe(true);
  });
});

describe('simpleParams: which envelopes go the direct way', () => {
  const env = (inner: string, op = 'Check') =>
    `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><${op} xmlns="${NS}">${inner}</${op}></soap:Body></soap:Envelope>`;

  test('plain children, whitespace and line breaks between them; values trimmed as node-soap trims them', () => {
    expect(
      simpleParams(
        env('\n  <RegistrationNumber> AB12 CDE </RegistrationNumber>\n  <username>bench</username>\n'),
        'Check',
      ),
    ).toEqual({ RegistrationNumber: 'AB12 CDE', username: 'bench' });
    expect(simpleParams(env(''), 'Check')).toEqual({});
    const prefixed =
      '<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope">\n <s:Body>\n  <r:Check xmlns:r="http://regcheck.org.uk"><RegistrationNumber>X1</RegistrationNumber></r:Check>\n </s:Body>\n</s:Envelope>\n';
    expect(simpleParams(prefixed, 'Check')).toEqual({ RegistrationNumber: 'X1' });
  });

  test.each([
    ['an entity in a value', '<RegistrationNumber>A&amp;B</RegistrationNumber>'],
    ['a comment', '<!-- c --><RegistrationNumber>AB</RegistrationNumber>'],
    ['CDATA', '<RegistrationNumber><![CDATA[AB]]></RegistrationNumber>'],
    ['an attribute on a child', '<RegistrationNumber xsi:nil="false">AB</RegistrationNumber>'],
    ['a prefixed child', '<r:RegistrationNumber>AB</r:RegistrationNumber>'],
    ['a parameter given twice', '<username>a</username><username>b</username>'],
    ['an empty element', '<username></username>'],
    ['a self-closed element', '<username/>'],
    ['a nested element', '<username><x>a</x></username>'],
    ['a carriage return in a value', '<username>a\rb</username>'],
    ['text outside the children', 'stray<username>a</username>'],
  ])('%s: node-soap serves it', (_name, inner) => {
    expect(simpleParams(env(inner), 'Check')).toBeNull();
  });

  test('a Header, or an operation other than the one screened, goes to node-soap', () => {
    const withHeader = env('<username>a</username>').replace(
      '<soap:Body>',
      '<soap:Header><x xmlns="urn:x">1</x></soap:Header><soap:Body>',
    );
    expect(simpleParams(withHeader, 'Check')).toBeNull();
    expect(simpleParams(env('<username>a</username>', 'CheckUSA'), 'Check')).toBeNull();
  });
});
