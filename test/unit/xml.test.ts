// How a result tree is written as XML, by hand-written examples of the README's "What comes back":
// SOAP compact, an absent value as xsi:nil="true"; the HTTP forms as ASMX writes them (declaration,
// line break, two-space indentation, one element per line), an absent value as an empty element
// with type="null"; text escaping only & < and >, so a '"' in vehicleJson stays a '"'.

import type { XNode } from '../../src/service/records';
import {
  escapeAttr,
  escapeText,
  httpResultInner,
  httpResultXml,
  soapResponseXml,
  soapResultInner,
  XSD_NS,
  XSI_NS,
} from '../../src/transport/xml';

const NS = 'http://regcheck.org.uk';

/**
 * A small vehicle answer: JSON text with every character that needs thought, a composite with an absent value, an empty
 * list.
 */
const TREE: XNode[] = [
  { name: 'vehicleJson', text: '{"Description":"A & B <c> \'d\'"}' },
  {
    name: 'vehicleData',
    children: [
      { name: 'Description', text: 'FORD > FIAT' },
      {
        name: 'CarMake',
        children: [
          { name: 'CurrentValue', absent: true },
          { name: 'CurrentTextValue', text: 'FORD' },
        ],
      },
      { name: 'Tests', children: [] },
      { name: 'Empty', text: '' },
      { name: 'NoText' },
    ],
  },
];

describe('escaping', () => {
  test('text: only & < and > are escaped, quotes and apostrophes stay as they are', () => {
    expect(escapeText('A & B <c> "d" \'e\'')).toBe('A &amp; B &lt;c&gt; "d" \'e\'');
    expect(escapeText('&&<<>>')).toBe('&amp;&amp;&lt;&lt;&gt;&gt;');
    expect(escapeText('>')).toBe('&gt;');
    expect(escapeText('<')).toBe('&lt;');
    expect(escapeText('&')).toBe('&amp;');
    expect(escapeText('plain "text"')).toBe('plain "text"');
    expect(escapeText('')).toBe('');
  });

  test('an attribute: & < > and " are escaped, every one of them', () => {
    expect(escapeAttr('a&b<c>d"e"f\'g')).toBe("a&amp;b&lt;c&gt;d&quot;e&quot;f'g");
    expect(escapeAttr('&&<<>>""')).toBe('&amp;&amp;&lt;&lt;&gt;&gt;&quot;&quot;');
    expect(escapeAttr('http://regcheck.org.uk')).toBe('http://regcheck.org.uk');
  });
});

describe('SOAP: compact', () => {
  test('one element after another, no white space; absent is xsi:nil, no children an empty element', () => {
    expect(soapResultInner(TREE)).toBe(
      '<vehicleJson>{"Description":"A &amp; B &lt;c&gt; \'d\'"}</vehicleJson>' +
        '<vehicleData>' +
        '<Description>FORD &gt; FIAT</Description>' +
        '<CarMake><CurrentValue xsi:nil="true" /><CurrentTextValue>FORD</CurrentTextValue></CarMake>' +
        '<Tests />' +
        '<Empty></Empty>' +
        '<NoText></NoText>' +
        '</vehicleData>',
    );
    expect(soapResultInner([])).toBe('');
  });

  test('the response element around it declares the namespace and xsi', () => {
    expect(soapResponseXml('Check', NS, '<x />')).toBe(
      '<CheckResponse xmlns="http://regcheck.org.uk" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><CheckResult><x /></CheckResult></CheckResponse>',
    );
    expect(soapResponseXml('UKMOT', 'urn:a"b&c', '')).toBe(
      '<UKMOTResponse xmlns="urn:a&quot;b&amp;c" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><UKMOTResult></UKMOTResult></UKMOTResponse>',
    );
  });
});

describe('HTTP forms: as ASMX writes them', () => {
  test('CRLF and two spaces a level before every element; absent is type="null"', () => {
    expect(httpResultInner(TREE)).toBe(
      '\r\n  <vehicleJson>{"Description":"A &amp; B &lt;c&gt; \'d\'"}</vehicleJson>' +
        '\r\n  <vehicleData>' +
        '\r\n    <Description>FORD &gt; FIAT</Description>' +
        '\r\n    <CarMake>' +
        '\r\n      <CurrentValue type="null" />' +
        '\r\n      <CurrentTextValue>FORD</CurrentTextValue>' +
        '\r\n    </CarMake>' +
        '\r\n    <Tests />' +
        '\r\n    <Empty></Empty>' +
        '\r\n    <NoText></NoText>' +
        '\r\n  </vehicleData>',
    );
    expect(httpResultInner([])).toBe('');
  });

  test('nesting deeper than any answer has keeps two spaces a level', () => {
    let tree: XNode = { name: 'L10', text: 'deep' };
    for (let d = 9; d >= 1; d--) tree = { name: `L${d}`, children: [tree] };
    const lines = httpResultInner([tree]).split('\r\n').slice(1);
    expect(lines).toHaveLength(19);
    for (let d = 1; d <= 9; d++) {
      expect(lines[d - 1]).toBe(`${'  '.repeat(d)}<L${d}>`);
      expect(lines[19 - d]).toBe(`${'  '.repeat(d)}</L${d}>`);
    }
    expect(lines[9]).toBe(`${'  '.repeat(10)}<L10>deep</L10>`);
  });

  test('the document: declaration, line break, the result element as root with both schema namespaces, and a line break before its end', () => {
    expect(httpResultXml('Vehicle', NS, '\r\n  <a>1</a>')).toBe(
      '<?xml version="1.0" encoding="utf-8"?>\r\n' +
        '<Vehicle xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns="http://regcheck.org.uk">' +
        '\r\n  <a>1</a>' +
        '\r\n</Vehicle>',
    );
    expect(httpResultXml('UKMOTData', 'urn:<x>', '')).toBe(
      `<?xml version="1.0" encoding="utf-8"?>\r\n<UKMOTData xmlns:xsi="${XSI_NS}" xmlns:xsd="${XSD_NS}" xmlns="urn:&lt;x&gt;">\r\n</UKMOTData>`,
    );
  });
});
