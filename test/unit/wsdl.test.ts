import { OPERATIONS } from '../../src/contract/operations';
import { assertContract, contractDifferences, loadWsdl, wsdlFor } from '../../src/contract/wsdl';

const NS = 'http://regcheck.org.uk';

describe('WSDL and catalogue agreement', () => {
  const wsdl = loadWsdl(NS);

  test('the bundled WSDL agrees with the catalogue', async () => {
    expect(await contractDifferences(wsdl, NS)).toEqual([]);
  });

  test('every catalogue operation has a SOAP action, both SOAP bindings and both HTTP locations', () => {
    for (const op of OPERATIONS) {
      expect(wsdl.split(`soapAction="${NS}/${op.name}"`).length - 1).toBe(2);
      expect(wsdl.split(`<http:operation location="/${op.name}" />`).length - 1).toBe(2);
    }
  });

  test('a renamed parameter is named in the refusal', async () => {
    const broken = wsdl.replace('name="State" type="s:string" />', 'name="Region" type="s:string" />');
    await expect(assertContract(broken, NS)).rejects.toThrow(
      /CheckUSA: request parameters are \(RegistrationNumber, Region, username\), catalogue has \(RegistrationNumber, State, username\)/,
    );
  });

  test('an operation missing from a binding, and a wrong soapAction, are named', async () => {
    const noAction = wsdl.replace(`soapAction="${NS}/CheckChina"`, `soapAction="${NS}/CheckChinaX"`);
    expect(await contractDifferences(noAction, NS)).toContainEqual(
      expect.stringMatching(/CheckChina has soapAction '.*CheckChinaX', expected/),
    );
    const extra = wsdl.replace('<wsdl:operation name="CheckIceland">', '<wsdl:operation name="CheckAtlantis">');
    const diffs = await contractDifferences(extra, NS);
    expect(diffs).toContainEqual(expect.stringMatching(/portType RegSoap: missing CheckIceland/));
    expect(diffs).toContainEqual(expect.stringMatching(/not in the catalogue: CheckAtlantis/));
  });

  test('SERVICE_NAMESPACE replaces the namespace everywhere, actions included', async () => {
    const other = loadWsdl('urn:example:reg');
    expect(other).not.toContain(NS);
    expect(other).toContain('soapAction="urn:example:reg/Check"');
    expect(await contractDifferences(other, 'urn:example:reg')).toEqual([]);
  });

  test('ports get the address the caller used', () => {
    const served = wsdlFor(wsdl, 'https://lookup.example.com');
    expect(served.match(/location="https:\/\/lookup\.example\.com\/api\/reg\.asmx"/g)).toHaveLength(4);
    expect(served).not.toContain('http://localhost/api/reg.asmx');
  });
});
