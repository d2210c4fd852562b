// The contract module against wsdl/reg.wsdl as written: the start-up agreement check names each kind
// of difference an edited WSDL can have (one break at a time, made by hand below), the namespace and
// address are filled in, and the help pages' reading of the WSDL gives what the file says. Every
// expectation is read off wsdl/reg.wsdl or the README, not the module's own tables.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findOperation, namesIgnoringCase, suggestOperation } from '../../src/contract/operations';
import { readContract } from '../../src/contract/schema';
import {
  assertContract,
  contractDifferences,
  ContractError,
  loadWsdl,
  SOAP_PATH,
  WSDL_FILE,
  wsdlFor,
} from '../../src/contract/wsdl';

const NS = 'http://regcheck.org.uk';
const wsdl = loadWsdl(NS);

/** The WSDL with the n-th (0-based) occurrence of `from` replaced; throws when there is no such occurrence. */
function edit(from: string, to: string, nth = 0): string {
  let at = -1;
  for (let i = 0; i <= nth; i++) {
    at = wsdl.indexOf(from, at + 1);
    if (at === -1) throw new Error(`no occurrence ${nth} of ${from}`);
  }
  return wsdl.slice(0, at) + to + wsdl.slice(at + from.length);
}

async function diffs(text: string, ns = NS): Promise<string[]> {
  return contractDifferences(text, ns);
}

describe('contractDifferences: one break at a time is named, and nothing else', () => {
  test('the file as shipped agrees', async () => {
    expect(await diffs(wsdl)).toEqual([]);
  });

  test('a root other than wsdl:definitions', async () => {
    expect(await diffs('<definitions xmlns="http://schemas.xmlsoap.org/wsdl/"/>')).toEqual([
      'the root element is not wsdl:definitions',
    ]);
  });

  test('another target namespace than the configured one', async () => {
    const d = await diffs(wsdl.replace(`targetNamespace="${NS}"`, 'targetNamespace="urn:elsewhere"'));
    expect(d).toEqual([`targetNamespace is 'urn:elsewhere', expected '${NS}'`]);
  });

  test('a request element the catalogue does not have', async () => {
    const extra =
      '<s:element name="CheckAtlantis"><s:complexType><s:sequence /></s:complexType></s:element>\n      <s:element name="CheckIceland">';
    expect(await diffs(edit('<s:element name="CheckIceland">', extra))).toEqual([
      "request element 'CheckAtlantis' has no operation in the catalogue",
    ]);
  });

  test('a response element the catalogue does not have is not taken for a request', async () => {
    const extra =
      '<s:element name="CheckAtlantisResponse"><s:complexType><s:sequence /></s:complexType></s:element>\n      <s:element name="CheckIceland">';
    expect(await diffs(edit('<s:element name="CheckIceland">', extra))).toEqual([]);
  });

  test('a missing request element', async () => {
    const d = await diffs(edit('<s:element name="CheckIceland">', '<s:element name="CheckIcelandX">'));
    expect(d).toContain('CheckIceland: no request element');
    expect(d).toContain("request element 'CheckIcelandX' has no operation in the catalogue");
    expect(d).toHaveLength(2);
  });

  test('request parameters in another order', async () => {
    const block =
      '<s:element minOccurs="0" maxOccurs="1" name="RegistrationNumber" type="s:string" />\n            <s:element minOccurs="0" maxOccurs="1" name="username" type="s:string" />';
    const at = wsdl.indexOf(block, wsdl.indexOf('<s:element name="CheckIceland">'));
    const swapped =
      wsdl.slice(0, at) +
      block.split('\n            ').reverse().join('\n            ') +
      wsdl.slice(at + block.length);
    expect(await diffs(swapped)).toEqual([
      'CheckIceland: request parameters are (username, RegistrationNumber), catalogue has (RegistrationNumber, username)',
    ]);
  });

  test('a response of the wrong type, a wrongly named result, or two results', async () => {
    const wrongType = await diffs(
      edit('name="CheckIcelandResult" type="tns:Vehicle"', 'name="CheckIcelandResult" type="tns:UKMOTData"'),
    );
    expect(wrongType).toEqual(['CheckIceland: response element must hold one CheckIcelandResult of type Vehicle']);
    const wrongName = await diffs(
      edit('name="CheckIcelandResult" type="tns:Vehicle"', 'name="CheckIcelandResults" type="tns:Vehicle"'),
    );
    expect(wrongName).toEqual(['CheckIceland: response element must hold one CheckIcelandResult of type Vehicle']);
    const line = '<s:element minOccurs="0" maxOccurs="1" name="CheckIcelandResult" type="tns:Vehicle" />';
    const two = await diffs(edit(line, `${line}\n            ${line}`));
    expect(two).toEqual(['CheckIceland: response element must hold one CheckIcelandResult of type Vehicle']);
    const motWrong = await diffs(
      edit('name="UKMOTResult" type="tns:UKMOTData"', 'name="UKMOTResult" type="tns:Vehicle"'),
    );
    expect(motWrong).toEqual(['UKMOT: response element must hold one UKMOTResult of type UKMOTData']);
  });

  test("an HTTP GET or POST input message's parts, and its output's element", async () => {
    const getIn =
      '<wsdl:message name="CheckIcelandHttpGetIn">\n    <wsdl:part name="RegistrationNumber" type="s:string" />\n    <wsdl:part name="username" type="s:string" />';
    expect(
      await diffs(
        edit(
          getIn,
          '<wsdl:message name="CheckIcelandHttpGetIn">\n    <wsdl:part name="RegistrationNumber" type="s:string" />',
        ),
      ),
    ).toEqual(['CheckIceland: message CheckIcelandHttpGetIn parts are (RegistrationNumber)']);
    const postIn = '<wsdl:message name="CheckIcelandHttpPostIn">';
    expect(await diffs(edit(postIn, '<wsdl:message name="CheckIcelandHttpPostInX">'))).toEqual([
      'CheckIceland: message CheckIcelandHttpPostIn parts are ()',
    ]);
    const getOut = '<wsdl:message name="CheckIcelandHttpGetOut">\n    <wsdl:part name="Body" element="tns:Vehicle" />';
    expect(
      await diffs(
        edit(
          getOut,
          '<wsdl:message name="CheckIcelandHttpGetOut">\n    <wsdl:part name="Body" element="tns:UKMOTData" />',
        ),
      ),
    ).toEqual(['CheckIceland: message CheckIcelandHttpGetOut must carry element Vehicle']);
    const postOut = '<wsdl:message name="CheckIcelandHttpPostOut">';
    expect(await diffs(edit(postOut, '<wsdl:message name="CheckIcelandHttpPostOutX">'))).toEqual([
      'CheckIceland: message CheckIcelandHttpPostOut must carry element Vehicle',
    ]);
  });

  test('a portType missing an operation, or holding one the catalogue lacks', async () => {
    // The third <wsdl:operation name="CheckIceland"> is RegHttpPost's portType (after RegSoap and RegHttpGet).
    const d = await diffs(edit('<wsdl:operation name="CheckIceland">', '<wsdl:operation name="CheckAtlantis">', 2));
    expect(d).toEqual([
      'portType RegHttpPost: missing CheckIceland',
      'portType RegHttpPost: not in the catalogue: CheckAtlantis',
    ]);
  });

  test('a binding missing an operation, or holding one the catalogue lacks', async () => {
    // Occurrences 3..6 are the bindings RegSoap, RegSoap12, RegHttpGet, RegHttpPost.
    const d = await diffs(edit('<wsdl:operation name="CheckIceland">', '<wsdl:operation name="CheckAtlantis">', 4));
    expect(d).toContain('binding RegSoap12: missing CheckIceland');
    expect(d).toContain('binding RegSoap12: operation CheckAtlantis is not in the catalogue');
    // Its soapAction (still .../CheckIceland) is not the one CheckAtlantis would have.
    expect(d).toContain(
      `binding RegSoap12: CheckAtlantis has soapAction '${NS}/CheckIceland', expected '${NS}/CheckAtlantis'`,
    );
    expect(d).toHaveLength(3);
  });

  test('a wrong soapAction in either SOAP binding names the binding', async () => {
    expect(await diffs(edit(`soapAction="${NS}/CheckIceland"`, `soapAction="${NS}/CheckIcelandX"`, 0))).toEqual([
      `binding RegSoap: CheckIceland has soapAction '${NS}/CheckIcelandX', expected '${NS}/CheckIceland'`,
    ]);
    expect(await diffs(edit(`soapAction="${NS}/CheckIceland"`, `soapAction="${NS}/CheckIcelandX"`, 1))).toEqual([
      `binding RegSoap12: CheckIceland has soapAction '${NS}/CheckIcelandX', expected '${NS}/CheckIceland'`,
    ]);
  });

  test('a wrong HTTP location in either HTTP binding names the binding', async () => {
    expect(
      await diffs(
        edit('<http:operation location="/CheckIceland" />', '<http:operation location="/CheckIcelandX" />', 0),
      ),
    ).toEqual(["binding RegHttpGet: CheckIceland has location '/CheckIcelandX', expected '/CheckIceland'"]);
    expect(
      await diffs(
        edit('<http:operation location="/CheckIceland" />', '<http:operation location="/CheckIcelandX" />', 1),
      ),
    ).toEqual(["binding RegHttpPost: CheckIceland has location '/CheckIcelandX', expected '/CheckIceland'"]);
  });

  test('bindings of the wrong kinds: one SOAP 1.1, one SOAP 1.2 and two HTTP are expected', async () => {
    const kinds = 'expected exactly one SOAP 1.1 binding, one SOAP 1.2 binding and two HTTP bindings';
    // RegHttpPost without its http:binding element: one HTTP binding short.
    const noPostKind = await diffs(edit('<http:binding verb="POST" />', ''));
    expect(noPostKind).toContain(kinds);
    // RegSoap12 declared as SOAP 1.1: two SOAP 1.1 bindings, no SOAP 1.2 one.
    const twoSoap11 = await diffs(
      edit(
        '<soap12:binding transport="http://schemas.xmlsoap.org/soap/http" />',
        '<soap:binding transport="http://schemas.xmlsoap.org/soap/http" />',
      ),
    );
    expect(twoSoap11).toContain(kinds);
    // RegSoap declared as SOAP 1.2: two SOAP 1.2 bindings, no SOAP 1.1 one.
    const twoSoap12 = await diffs(
      edit(
        '<soap:binding transport="http://schemas.xmlsoap.org/soap/http" />',
        '<soap12:binding transport="http://schemas.xmlsoap.org/soap/http" />',
      ),
    );
    expect(twoSoap12).toContain(kinds);
    // RegHttpPost declared as SOAP 1.2 as well.
    const threeKinds = await diffs(
      edit('<http:binding verb="POST" />', '<soap12:binding transport="http://schemas.xmlsoap.org/soap/http" />'),
    );
    expect(threeKinds).toContain(kinds);
  });

  test('lists of two or more are named in full, comma-separated', async () => {
    const getIn =
      '<wsdl:message name="CheckIcelandHttpGetIn">\n    <wsdl:part name="RegistrationNumber" type="s:string" />\n    <wsdl:part name="username" type="s:string" />';
    expect(
      await diffs(
        edit(
          getIn,
          '<wsdl:message name="CheckIcelandHttpGetIn">\n    <wsdl:part name="username" type="s:string" />\n    <wsdl:part name="RegistrationNumber" type="s:string" />',
        ),
      ),
    ).toEqual(['CheckIceland: message CheckIcelandHttpGetIn parts are (username, RegistrationNumber)']);
    // The RegSoap portType (occurrence 0) without CheckIceland and CheckNigeria, holding CheckAtlantis and CheckMu
    // instead.
    let w = wsdl;
    for (const [from, to] of [
      ['CheckIceland', 'CheckAtlantis'],
      ['CheckNigeria', 'CheckMu'],
    ]) {
      const at = w.indexOf(`<wsdl:operation name="${from}">`);
      w = w.slice(0, at) + `<wsdl:operation name="${to}">` + w.slice(at + `<wsdl:operation name="${from}">`.length);
    }
    const d = await diffs(w);
    expect(d).toContain('portType RegSoap: missing CheckIceland, CheckNigeria');
    expect(d).toContain('portType RegSoap: not in the catalogue: CheckAtlantis, CheckMu');
    // The RegSoap binding (occurrences 3) likewise.
    let b = wsdl;
    for (const from of ['CheckIceland', 'CheckNigeria']) {
      let at = -1;
      for (let i = 0; i < 4; i++) at = b.indexOf(`<wsdl:operation name="${from}">`, at + 1);
      b = b.slice(0, at) + `<wsdl:operation name="${from}X">` + b.slice(at + `<wsdl:operation name="${from}">`.length);
    }
    expect(await diffs(b)).toContain('binding RegSoap: missing CheckIceland, CheckNigeria');
  });

  test('elements and operations without a name are named as empty', async () => {
    const unnamed = await diffs(
      edit(
        '<s:element name="CheckIceland">',
        '<s:element><s:complexType><s:sequence /></s:complexType></s:element>\n      <s:element name="CheckIceland">',
      ),
    );
    expect(unnamed).toEqual(["request element '' has no operation in the catalogue"]);
    const param = await diffs(
      edit(
        '<s:element minOccurs="0" maxOccurs="1" name="username" type="s:string" />',
        '<s:element minOccurs="0" maxOccurs="1" type="s:string" />',
        0,
      ),
    );
    expect(param).toEqual([
      'Check: request parameters are (RegistrationNumber, ), catalogue has (RegistrationNumber, username)',
    ]);
    const pt = await diffs(
      edit('<wsdl:portType name="RegSoap">', '<wsdl:portType name="RegSoap">\n    <wsdl:operation />'),
    );
    expect(pt).toEqual(['portType RegSoap: not in the catalogue: ']);
    const bd = await diffs(
      edit(
        '<wsdl:binding name="RegHttpGet" type="tns:RegHttpGet">',
        '<wsdl:binding name="RegHttpGet" type="tns:RegHttpGet">\n    <wsdl:operation><http:operation location="/" /></wsdl:operation>',
      ),
    );
    expect(bd).toEqual(['binding RegHttpGet: operation  is not in the catalogue']);
  });

  test('an HTTP binding operation without its http:operation is named, not a crash', async () => {
    expect(await diffs(edit('<http:operation location="/CheckIceland" />', '', 0))).toEqual([
      "binding RegHttpGet: CheckIceland has location 'undefined', expected '/CheckIceland'",
    ]);
  });

  test('one binding kind short is enough to be named: no SOAP 1.1 binding, or no SOAP 1.2 binding', async () => {
    const kinds = 'expected exactly one SOAP 1.1 binding, one SOAP 1.2 binding and two HTTP bindings';
    expect(await diffs(edit('<soap:binding transport="http://schemas.xmlsoap.org/soap/http" />', ''))).toContain(kinds);
    expect(await diffs(edit('<soap12:binding transport="http://schemas.xmlsoap.org/soap/http" />', ''))).toContain(
      kinds,
    );
  });

  test("a namespace other than the WSDL's: the target namespace and every soapAction are named", async () => {
    const d = await diffs(wsdl, 'urn:other');
    expect(d[0]).toBe(`targetNamespace is '${NS}', expected 'urn:other'`);
    // 31 operations (the README's list) in two SOAP bindings.
    expect(d.filter((x) => /has soapAction/.test(x))).toHaveLength(62);
    expect(d).toContain(`binding RegSoap: Check has soapAction '${NS}/Check', expected 'urn:other/Check'`);
  });
});

describe('assertContract', () => {
  test('accepts the file as shipped', async () => {
    await expect(assertContract(wsdl, NS)).resolves.toBeUndefined();
  });

  test('refuses a broken one with a ContractError listing every difference, one per line', async () => {
    const broken = edit('<s:element name="CheckIceland">', '<s:element name="CheckIcelandX">');
    const err = await assertContract(broken, NS).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContractError);
    expect((err as Error).message).toBe(
      "The WSDL and the operation catalogue disagree:\n  - request element 'CheckIcelandX' has no operation in the catalogue\n  - CheckIceland: no request element",
    );
  });
});

describe('loadWsdl and wsdlFor', () => {
  test('the file is wsdl/reg.wsdl, and the default namespace leaves it as written', () => {
    expect(WSDL_FILE).toBe(path.resolve(__dirname, '..', '..', 'wsdl', 'reg.wsdl'));
    expect(loadWsdl(NS)).toBe(fs.readFileSync(path.join(__dirname, '..', '..', 'wsdl', 'reg.wsdl'), 'utf8'));
  });

  test('another namespace replaces every occurrence', () => {
    const text = fs.readFileSync(WSDL_FILE, 'utf8');
    const count = text.split(NS).length - 1;
    const other = loadWsdl('urn:x');
    expect(other.split('urn:x').length - 1).toBe(count);
    expect(other).not.toContain(NS);
  });

  test('a file without the placeholder port address is refused, naming the file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsdl-'));
    const file = path.join(dir, 'reg.wsdl');
    try {
      fs.writeFileSync(
        file,
        fs
          .readFileSync(WSDL_FILE, 'utf8')
          .split('http://localhost/api/reg.asmx')
          .join('http://example.com/api/reg.asmx'),
      );
      expect(() => loadWsdl(NS, file)).toThrow(ContractError);
      expect(() => loadWsdl(NS, file)).toThrow(`${file}: no port address 'http://localhost/api/reg.asmx' to fill in`);
      fs.writeFileSync(file, '<x location="http://localhost/api/reg.asmx"/>');
      expect(loadWsdl(NS, file)).toBe('<x location="http://localhost/api/reg.asmx"/>');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test("every port address becomes the caller's base URL + /api/reg.asmx, escaped for an attribute", () => {
    expect(SOAP_PATH).toBe('/api/reg.asmx');
    const served = wsdlFor(wsdl, 'https://reg.example.com/a&b"c');
    expect(served.match(/location="https:\/\/reg\.example\.com\/a&amp;b&quot;c\/api\/reg\.asmx"/g)).toHaveLength(4);
  });
});

describe('readContract: what the help pages read from wsdl/reg.wsdl', () => {
  let model: Awaited<ReturnType<typeof readContract>>;
  // Read in each test (not once before them all), so that the reading counts as tested.
  beforeEach(async () => {
    model = await readContract(wsdl);
  });

  test('the service name and its documentation', () => {
    expect(model.serviceName).toBe('Reg');
    expect(model.serviceDocumentation).toBe('Vehicle registration lookup (reglookup)');
  });

  test("each operation's documentation from the SOAP portType", () => {
    expect(model.documentation.get('Check')).toBe('UK vehicle');
    expect(model.documentation.get('CheckIceland')).toBe('Iceland');
    expect(model.documentation.get('UKMOT')).toBe('UK MOT test history');
    expect(model.documentation.size).toBe(31);
  });

  test('the SOAP 1.1 and SOAP 1.2 bindings by name', () => {
    expect(model.bindings).toEqual({ soap11: 'RegSoap', soap12: 'RegSoap12' });
  });

  test('request elements: their parameters in order, as XML Schema strings', () => {
    const p = (name: string) => ({ name, type: 'string', own: false, repeated: false });
    expect(model.elements.get('CheckUSA')).toEqual([p('RegistrationNumber'), p('State'), p('username')]);
    expect(model.elements.get('CheckCanada')).toEqual([p('RegistrationNumber'), p('state'), p('username')]);
    expect(model.elements.get('UKMOT')).toEqual([p('RegistrationNumber'), p('Model'), p('username')]);
    expect(model.elements.get('CheckIcelandResponse')).toEqual([
      { name: 'CheckIcelandResult', type: 'Vehicle', own: true, repeated: false },
    ]);
    // Vehicle and UKMOTData are global elements by type (the HTTP answers' roots), without a sequence of their own.
    expect(model.elements.has('Vehicle')).toBe(false);
    expect(model.elements.has('UKMOTData')).toBe(false);
  });

  test('complex types: sequences with own and built-in types, repeated elements, and simple content', () => {
    expect(model.types.get('UKMOTData')).toEqual({
      kind: 'sequence',
      elements: [
        { name: 'Tests', type: 'ArrayOfUKTest', own: true, repeated: false },
        { name: 'taxDate', type: 'string', own: false, repeated: false },
        { name: 'Json', type: 'string', own: false, repeated: false },
        { name: 'ExtendedInformation', type: 'ArrayOfArrayOfString', own: true, repeated: false },
        { name: 'ExtendedInformationJson', type: 'string', own: false, repeated: false },
      ],
    });
    expect(model.types.get('ArrayOfString')).toEqual({
      kind: 'sequence',
      elements: [{ name: 'string', type: 'string', own: false, repeated: true }],
    });
    expect(model.types.get('IntegerValue')).toEqual({ kind: 'simple', base: 'integer' });
    expect(model.types.get('TextValue')).toEqual({ kind: 'simple', base: 'string' });
  });

  test('a WSDL without a service or bindings still reads, with the defaults', async () => {
    const bare = await readContract(
      '<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/"><wsdl:portType name="P"><wsdl:operation name="Op"><wsdl:documentation>  Some text  </wsdl:documentation></wsdl:operation><wsdl:operation name="NoDoc"/></wsdl:portType></wsdl:definitions>',
    );
    expect(bare.serviceName).toBe('Service');
    expect(bare.serviceDocumentation).toBe('');
    expect(bare.bindings).toEqual({ soap11: '', soap12: '' });
    expect([...bare.documentation]).toEqual([['Op', 'Some text']]);
    expect(bare.types.size).toBe(0);
    expect(bare.elements.size).toBe(0);
  });

  test('documentation text is trimmed, with or without attributes on the element', async () => {
    const withAttr = await readContract(
      '<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/"><wsdl:service name="S"><wsdl:documentation xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/">\n  Spaced out \n</wsdl:documentation></wsdl:service></wsdl:definitions>',
    );
    expect(withAttr.serviceName).toBe('S');
    expect(withAttr.serviceDocumentation).toBe('Spaced out');
  });

  test("a type name without a prefix is taken whole, and is not the schema's own", async () => {
    const m = await readContract(
      '<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:s="http://www.w3.org/2001/XMLSchema"><wsdl:types><s:schema><s:complexType name="T"><s:sequence><s:element name="a" type="plain" maxOccurs="1"/><s:element name="b"/></s:sequence></s:complexType></s:schema></wsdl:types></wsdl:definitions>',
    );
    expect(m.types.get('T')).toEqual({
      kind: 'sequence',
      elements: [
        { name: 'a', type: 'plain', own: false, repeated: false },
        { name: 'b', type: '', own: false, repeated: false },
      ],
    });
  });
});

describe('operation names', () => {
  test('found only in their own spelling; a suggestion ignores case', () => {
    expect(findOperation('CheckUSA')?.name).toBe('CheckUSA');
    expect(findOperation('checkusa')).toBeUndefined();
    expect(suggestOperation('checkusa')?.name).toBe('CheckUSA');
    expect(suggestOperation('CHECKUSA')?.name).toBe('CheckUSA');
    expect(suggestOperation('CheckAtlantis')).toBeUndefined();
  });

  test('parameter names ignoring case map to their own spelling', () => {
    const m = namesIgnoringCase(['RegistrationNumber', 'State', 'username']);
    expect(m.get('registrationnumber')).toBe('RegistrationNumber');
    expect(m.get('RegistrationNumber')).toBe('RegistrationNumber');
    expect(m.get('state')).toBe('State');
    expect(m.get('State')).toBe('State');
    expect(m.get('username')).toBe('username');
    expect(m.get('REGISTRATIONNUMBER')).toBeUndefined();
    expect(m.size).toBe(5);
  });
});
