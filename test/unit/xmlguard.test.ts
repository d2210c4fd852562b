// The XML guard on its own (issue 17): every refusal the README's "Refused in a SOAP request" and
// "Limits" sections list, each limit at its edge (at it: accepted; one over: refused), and the
// envelope's shape, all on hand-written envelopes. Expected reasons are matched on the words a
// caller reads (what was refused and where), written here from the README, not from the code.

import { scanEnvelope, XmlRejected, type GuardLimits } from '../../src/transport/xmlguard';

const S11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const S12 = 'http://www.w3.org/2003/05/soap-envelope';
const NS = 'http://regcheck.org.uk';
/** The README's defaults (XML_MAX_DEPTH 32, XML_MAX_TEXT 8192, XML_MAX_ELEMENTS 1000, XML_MAX_ATTRIBUTES 32). */
const DEFAULTS: GuardLimits = { maxDepth: 32, maxTextChars: 8192, maxElements: 1000, maxAttributes: 32 };

function env(body: string, header = '', ns = S11): string {
  return `<soap:Envelope xmlns:soap="${ns}">${header}<soap:Body>${body}</soap:Body></soap:Envelope>`;
}
const CHECK = (inner = '<RegistrationNumber>AB12CDE</RegistrationNumber>') => `<Check xmlns="${NS}">${inner}</Check>`;

function refused(xml: string, limits: GuardLimits = DEFAULTS): string {
  try {
    scanEnvelope(xml, limits);
  } catch (e) {
    expect(e).toBeInstanceOf(XmlRejected);
    return (e as Error).message;
  }
  throw new Error(`accepted: ${xml.slice(0, 200)}`);
}

describe('the shape of an accepted envelope', () => {
  test('SOAP 1.1: root, operation, one body element, no mustUnderstand', () => {
    const shape = scanEnvelope(env(CHECK()), DEFAULTS);
    expect(shape).toEqual({
      root: { local: 'Envelope', ns: S11 },
      operation: { local: 'Check', ns: NS },
      bodyElements: 1,
      hasBody: true,
      mustUnderstand: [],
    });
  });

  test('SOAP 1.2 with a default namespace and the XML declaration and BOM before it', () => {
    const xml = `\ufeff<?xml version="1.0" encoding="utf-8" standalone="yes"?>\n<Envelope xmlns="${S12}"><Body><q:CheckUSA xmlns:q="${NS}"><q:State>CA</q:State></q:CheckUSA></Body></Envelope>`;
    const shape = scanEnvelope(xml, DEFAULTS);
    expect(shape.root).toEqual({ local: 'Envelope', ns: S12 });
    expect(shape.operation).toEqual({ local: 'CheckUSA', ns: NS });
    expect(shape.hasBody).toBe(true);
  });

  test("the XML declaration's encoding may be written UTF8 or utf-8, version 1.1, single quotes", () => {
    for (const decl of [
      `<?xml version='1.1' encoding='UTF8'?>`,
      `<?xml version = "1.0"  encoding = "utf-8" ?>`,
      `<?xml version="1.0"?>`,
    ]) {
      expect(scanEnvelope(`${decl}${env(CHECK())}`, DEFAULTS).operation).toEqual({ local: 'Check', ns: NS });
    }
  });

  test('an envelope without a Body, and a Body without an element', () => {
    const none = scanEnvelope(`<soap:Envelope xmlns:soap="${S11}"><soap:Header/></soap:Envelope>`, DEFAULTS);
    expect(none.hasBody).toBe(false);
    expect(none.operation).toBeNull();
    expect(none.bodyElements).toBe(0);
    const empty = scanEnvelope(env(''), DEFAULTS);
    expect(empty.hasBody).toBe(true);
    expect(empty.operation).toBeNull();
    expect(empty.bodyElements).toBe(0);
  });

  test('a self-closing Body holds nothing, and the element after it is not its operation', () => {
    const shape = scanEnvelope(
      `<soap:Envelope xmlns:soap="${S11}"><soap:Body/><soap:Other><Check xmlns="${NS}"/></soap:Other></soap:Envelope>`,
      DEFAULTS,
    );
    expect(shape.hasBody).toBe(true);
    expect(shape.operation).toBeNull();
    expect(shape.bodyElements).toBe(0);
  });

  test('two elements in the Body are counted; the operation is the first', () => {
    const shape = scanEnvelope(env(`<Check xmlns="${NS}"/><CheckUSA xmlns="${NS}"/>`), DEFAULTS);
    expect(shape.bodyElements).toBe(2);
    expect(shape.operation).toEqual({ local: 'Check', ns: NS });
  });

  test('grandchildren of the Body are not counted as its elements', () => {
    const shape = scanEnvelope(env(CHECK('<a>1</a><b>2</b>')), DEFAULTS);
    expect(shape.bodyElements).toBe(1);
  });

  test('a root element named Body is a root like any other (the SOAP layer refuses it)', () => {
    expect(scanEnvelope(`<Body xmlns="${S11}"/>`, DEFAULTS)).toEqual({
      root: { local: 'Body', ns: S11 },
      operation: null,
      bodyElements: 0,
      hasBody: false,
      mustUnderstand: [],
    });
  });

  test('a root element that is not an Envelope is reported as it is', () => {
    const shape = scanEnvelope(`<Check xmlns="${NS}"><RegistrationNumber>A</RegistrationNumber></Check>`, DEFAULTS);
    expect(shape.root).toEqual({ local: 'Check', ns: NS });
    expect(shape.hasBody).toBe(false);
  });

  test('mustUnderstand="1" and "true" (with spaces) on header blocks are reported; "0", "false" and other namespaces are not', () => {
    const header =
      `<soap:Header>` +
      `<a:One xmlns:a="urn:a" soap:mustUnderstand="1"/>` +
      `<a:Two xmlns:a="urn:a" soap:mustUnderstand=" true "/>` +
      `<a:Three xmlns:a="urn:a" soap:mustUnderstand="0"/>` +
      `<a:Four xmlns:a="urn:a" soap:mustUnderstand="false"/>` +
      `<a:Five xmlns:a="urn:a" xmlns:o="urn:other" o:mustUnderstand="1"/>` +
      `<a:Six xmlns:a="urn:a" mustUnderstand="1"/>` +
      `<a:Seven xmlns:a="urn:a" soap:mustUnderstand="1x"/>` +
      `</soap:Header>`;
    const shape = scanEnvelope(env(CHECK(), header), DEFAULTS);
    // Header blocks are not the Body's elements.
    expect(shape.operation).toEqual({ local: 'Check', ns: NS });
    expect(shape.bodyElements).toBe(1);
    expect(shape.mustUnderstand).toEqual([
      { local: 'One', ns: 'urn:a' },
      { local: 'Two', ns: 'urn:a' },
    ]);
  });

  test('mustUnderstand deeper than a header block, or on a header in another namespace, is not reported', () => {
    const deep = `<soap:Header><a:Block xmlns:a="urn:a"><a:Inner soap:mustUnderstand="1"/></a:Block></soap:Header>`;
    expect(scanEnvelope(env(CHECK(), deep), DEFAULTS).mustUnderstand).toEqual([]);
    const other = `<soap:Envelope xmlns:soap="${S11}" xmlns:x="urn:x"><x:Header><a:B xmlns:a="urn:a" soap:mustUnderstand="1"/></x:Header><soap:Body>${CHECK()}</soap:Body></soap:Envelope>`;
    expect(scanEnvelope(other, DEFAULTS).mustUnderstand).toEqual([]);
  });

  test('the xml prefix needs no declaration; entities and character references are accepted in text and attributes', () => {
    const shape = scanEnvelope(
      env(
        CHECK(
          `<RegistrationNumber xml:lang="en" a="&quot;&#65;&#x42;&apos;">A&amp;B &lt;&gt; &#x1F600; &#9;</RegistrationNumber>`,
        ),
      ),
      DEFAULTS,
    );
    expect(shape.operation).toEqual({ local: 'Check', ns: NS });
  });

  test('comments, CDATA text, white space between elements and after the root are accepted', () => {
    const xml = `<!-- before -->\n${env(CHECK(`<!-- c --><RegistrationNumber><![CDATA[AB<12>]]></RegistrationNumber>\n  `))}\n<!-- after -->\n`;
    expect(scanEnvelope(xml, DEFAULTS).operation).toEqual({ local: 'Check', ns: NS });
  });

  test('an element may hold white space around its children, and an empty CDATA beside them', () => {
    expect(
      scanEnvelope(env(CHECK(`\n  <![CDATA[ ]]><RegistrationNumber>A</RegistrationNumber>\n`)), DEFAULTS).bodyElements,
    ).toBe(1);
    expect(
      scanEnvelope(env(CHECK(`<RegistrationNumber>A</RegistrationNumber><![CDATA[  ]]>`)), DEFAULTS).bodyElements,
    ).toBe(1);
  });

  test("white space in end tags and tags, and '>' in attribute values, are accepted", () => {
    const xml = `<soap:Envelope\n xmlns:soap='${S11}'\t><soap:Body ><Check xmlns="${NS}" a = "x>y" ><RegistrationNumber >A</RegistrationNumber\n></Check ></soap:Body></soap:Envelope >`;
    expect(scanEnvelope(xml, DEFAULTS).operation).toEqual({ local: 'Check', ns: NS });
  });

  test('a namespace declared with an &amp; is resolved decoded; a prefix declared by an ancestor resolves', () => {
    const xml = `<soap:Envelope xmlns:soap="${S11}" xmlns:r="urn:a&amp;b"><soap:Body><r:Check/></soap:Body></soap:Envelope>`;
    expect(scanEnvelope(xml, DEFAULTS).operation).toEqual({ local: 'Check', ns: 'urn:a&b' });
  });

  test('an inner default namespace overrides an outer one, and ends with its element', () => {
    const xml = `<Envelope xmlns="${S11}"><Body><x:W xmlns:x="urn:w"><Inner xmlns="urn:inner"/></x:W></Body></Envelope>`;
    expect(scanEnvelope(xml, DEFAULTS).operation).toEqual({ local: 'W', ns: 'urn:w' });
    const after = `<Envelope xmlns="${S11}"><Header><H xmlns="urn:h"/></Header><Body><Check/></Body></Envelope>`;
    expect(scanEnvelope(after, DEFAULTS).operation).toEqual({ local: 'Check', ns: S11 });
  });

  test('an element without a namespace has the empty one', () => {
    expect(
      scanEnvelope(`<soap:Envelope xmlns:soap="${S11}"><soap:Body><Check/></soap:Body></soap:Envelope>`, DEFAULTS)
        .operation,
    ).toEqual({ local: 'Check', ns: '' });
  });

  test('non-ASCII names (XML name characters) are accepted', () => {
    expect(
      scanEnvelope(env(CHECK('<Größe>1</Größe><名前>x</名前><a.b-c_d·e>1</a.b-c_d·e>')), DEFAULTS).bodyElements,
    ).toBe(1);
  });
});

describe('refused, with a reason naming what', () => {
  test('DTDs and entity declarations, by their keyword', () => {
    expect(refused(`<!DOCTYPE x [<!ENTITY a "b">]>${env(CHECK())}`)).toMatch(
      /^<!DOCTYPE>: DTDs, entity declarations and external references are not allowed$/,
    );
    expect(refused(`<soap:Envelope xmlns:soap="${S11}"><!ENTITY a "b"></soap:Envelope>`)).toMatch(/^<!ENTITY>/);
    expect(refused(`<soap:Envelope xmlns:soap="${S11}"><!x></soap:Envelope>`)).toMatch(/^markup declarations: DTDs/);
  });

  test('processing instructions other than the declaration at the very start', () => {
    expect(refused(`${env(CHECK())}<?pi x?>`)).toMatch(/^processing instructions are not allowed/);
    expect(refused(` <?xml version="1.0"?>${env(CHECK())}`)).toMatch(/^processing instructions are not allowed/);
  });

  test('a malformed XML declaration, and one naming another encoding', () => {
    expect(refused(`<?xml version="2.0"?>${env(CHECK())}`)).toBe('malformed XML declaration');
    expect(refused(`<?xml encoding="utf-8"?>${env(CHECK())}`)).toBe('malformed XML declaration');
    expect(refused(`<?xml version="1.0" encoding="UTF-16"?>${env(CHECK())}`)).toBe(
      "the XML declaration names encoding 'UTF-16'; only UTF-8 is accepted",
    );
    expect(refused(`<?xml version="1.0" encoding="utf-88"?>${env(CHECK())}`)).toMatch(/names encoding 'utf-88'/);
    expect(refused(`<?xml version="1.0" encoding="xutf-8"?>${env(CHECK())}`)).toMatch(/names encoding 'xutf-8'/);
  });

  test('undefined entities, named in the reason; character references to characters XML forbids', () => {
    expect(refused(env(CHECK('<RegistrationNumber>&xxe;</RegistrationNumber>')))).toMatch(
      /^undefined entity reference '&xxe;'/,
    );
    expect(refused(env(CHECK('<RegistrationNumber a="&nbsp;">A</RegistrationNumber>')))).toMatch(
      /^undefined entity reference '&nbsp;'/,
    );
    expect(refused(env(CHECK('<RegistrationNumber>a & b</RegistrationNumber>')))).toMatch(
      /^undefined entity reference '&;'/,
    );
    expect(refused(env(CHECK('<RegistrationNumber>&amp;&bad;</RegistrationNumber>')))).toMatch(/'&bad;'/);
    expect(refused(env(CHECK(`<RegistrationNumber>&${'n'.repeat(30)};</RegistrationNumber>`)))).toMatch(
      new RegExp(`^undefined entity reference '&${'n'.repeat(20)};'`),
    );
    for (const ref of ['&#0;', '&#x0;', '&#8;', '&#xB;', '&#xFFFE;', '&#xD800;', '&#x110000;', '&#1114112;']) {
      expect(refused(env(CHECK(`<RegistrationNumber>${ref}</RegistrationNumber>`)))).toBe(
        `character reference ${ref} is not a character XML allows`,
      );
    }
  });

  test('character references to the edges of the allowed ranges are accepted', () => {
    for (const ref of [
      '&#9;',
      '&#xA;',
      '&#xD;',
      '&#x20;',
      '&#xD7FF;',
      '&#xE000;',
      '&#xFFFD;',
      '&#x10000;',
      '&#x10FFFF;',
    ]) {
      expect(scanEnvelope(env(CHECK(`<RegistrationNumber>${ref}</RegistrationNumber>`)), DEFAULTS).bodyElements).toBe(
        1,
      );
    }
  });

  test('raw characters XML forbids', () => {
    for (const c of ['\u0000', '\u0001', '\u0008', '\u000b', '\u000c', '\u000e', '\u001f', '\ufffe', '\uffff']) {
      expect(refused(env(CHECK(`<RegistrationNumber>A${c}</RegistrationNumber>`)))).toMatch(
        /^the body holds a character XML does not allow/,
      );
    }
    expect(
      scanEnvelope(env(CHECK('<RegistrationNumber>A\tB\r\nC\u007f\ud7ff</RegistrationNumber>')), DEFAULTS).bodyElements,
    ).toBe(1);
  });

  test('comments: -- inside, and a body that ends in one', () => {
    expect(refused(env(CHECK('<!-- a -- b -->')))).toBe("'--' inside a comment");
    expect(refused(`${env(CHECK())}<!-- open`)).toBe('the body ends inside a comment');
    expect(refused(`${env(CHECK())}<!-- open -`)).toBe('the body ends inside a comment');
  });

  test('CDATA: outside the root, unterminated, holding an XML document', () => {
    expect(refused(`<![CDATA[x]]>${env(CHECK())}`)).toBe('CDATA outside the root element');
    expect(refused(`<soap:Envelope xmlns:soap="${S11}"><soap:Body><x><![CDATA[abc`)).toBe(
      'the body ends inside a CDATA section',
    );
    expect(refused(env(CHECK('<RegistrationNumber><![CDATA[<?XML version="1.0"?><a/>]]></RegistrationNumber>')))).toBe(
      'a CDATA section in <RegistrationNumber> holds an XML document; embedded XML is not accepted',
    );
  });

  test("']]>' in text", () => {
    expect(refused(env(CHECK('<RegistrationNumber>a]]>b</RegistrationNumber>')))).toBe(
      "']]>' in the text of <RegistrationNumber> (write ]]&gt;)",
    );
  });

  test('text outside the root, two roots, no root at all', () => {
    expect(refused(`x${env(CHECK())}`)).toBe('text outside the root element');
    expect(refused(`${env(CHECK())} x`)).toBe('text outside the root element');
    expect(refused(`${env(CHECK())}${env(CHECK())}`)).toBe('more than one root element');
    expect(refused('')).toBe('the body holds no XML element');
    expect(refused('  \n <!-- only a comment -->')).toBe('the body holds no XML element');
    expect(refused('\ufeff')).toBe('the body holds no XML element');
  });

  test('mixed content, either order, text or CDATA', () => {
    const mixed = '<Check> holds both text and elements (mixed content); a parameter is text only';
    expect(refused(env(`<Check xmlns="${NS}">text<RegistrationNumber>A</RegistrationNumber></Check>`))).toBe(mixed);
    expect(refused(env(`<Check xmlns="${NS}"><RegistrationNumber>A</RegistrationNumber>text</Check>`))).toBe(mixed);
    expect(
      refused(env(`<Check xmlns="${NS}"><RegistrationNumber>A</RegistrationNumber><![CDATA[text]]></Check>`)),
    ).toBe(mixed);
    expect(
      refused(env(`<Check xmlns="${NS}"><![CDATA[text]]><RegistrationNumber>A</RegistrationNumber></Check>`)),
    ).toBe(mixed);
  });

  test('Body and Envelope out of their place', () => {
    expect(refused(env(`<Check xmlns="${NS}"><soap:Body/></Check>`))).toBe(
      "<soap:Body> may appear only once, as the Envelope's own Body",
    );
    expect(refused(`<soap:Envelope xmlns:soap="${S11}"><soap:Body/><soap:Body/></soap:Envelope>`)).toMatch(
      /^<soap:Body> may appear only once/,
    );
    expect(refused(`<soap:Envelope xmlns:soap="${S11}" xmlns:x="urn:x"><x:Body/></soap:Envelope>`)).toMatch(
      /^<x:Body> may appear only once/,
    );
    expect(refused(`<Check xmlns="${NS}"><a><Body/></a></Check>`)).toMatch(/^<Body> may appear only once/);
    expect(refused(env(`<Check xmlns="${NS}"><x:Envelope xmlns:x="urn:x"/></Check>`))).toBe(
      '<x:Envelope> inside the envelope',
    );
  });

  test('JavaScript object member names as element, attribute or prefix names, and as id values', () => {
    expect(refused(env(CHECK('<__proto__>A</__proto__>')))).toBe(
      "the element name '__proto__' is not accepted (it names a built-in object member)",
    );
    expect(refused(env(CHECK('<constructor:x xmlns:constructor="urn:c"/>')))).toMatch(
      /^the element name 'constructor:x' is not accepted/,
    );
    expect(refused(env(CHECK('<RegistrationNumber toString="1">A</RegistrationNumber>')))).toBe(
      "the attribute name 'toString' is not accepted (it names a built-in object member)",
    );
    expect(refused(env(CHECK('<RegistrationNumber id="__proto__">A</RegistrationNumber>')))).toBe(
      "the id '__proto__' is not accepted",
    );
    expect(refused(env(CHECK('<RegistrationNumber id="&#x5F;_proto__">A</RegistrationNumber>')))).toBe(
      "the id '__proto__' is not accepted",
    );
    expect(refused(env(CHECK('<RegistrationNumber id="&#95;&#95;proto__">A</RegistrationNumber>')))).toBe(
      "the id '__proto__' is not accepted",
    );
    expect(refused(env(CHECK('<RegistrationNumber id="hasOwnProperty">A</RegistrationNumber>')))).toBe(
      "the id 'hasOwnProperty' is not accepted",
    );
    // An ordinary id, and one that only decodes to letters, are fine.
    expect(
      scanEnvelope(
        env(
          CHECK(
            '<RegistrationNumber id="r1">A</RegistrationNumber><x id="&lt;&gt;&amp;&quot;&apos;"/>'.replace('<x', '<y'),
          ),
        ),
        DEFAULTS,
      ).bodyElements,
    ).toBe(1);
  });

  test('href references', () => {
    expect(refused(env(CHECK('<RegistrationNumber href="#id1"/>')))).toBe(
      'href references (SOAP encoding) are not accepted; send each value inline',
    );
  });

  test('undeclared prefixes, two colons, and the reason quoting the prefix', () => {
    expect(refused(env(CHECK('<p:RegistrationNumber>A</p:RegistrationNumber>')))).toBe(
      "undeclared namespace prefix 'p' on <p:RegistrationNumber>",
    );
    expect(
      refused(`<soap:Envelope xmlns:soap="${S11}"><soap:Body><a:b:c xmlns:a="urn:a"/></soap:Body></soap:Envelope>`),
    ).toMatch(/^malformed (tag|attributes)/);
    // A prefix declared on a sibling is not in scope.
    expect(refused(env(`<x:A xmlns:x="urn:x"/><x:B/>`))).toBe("undeclared namespace prefix 'x' on <x:B>");
  });

  test('duplicate attributes, unquoted and valueless ones, "<" in a value, attributes run together', () => {
    expect(refused(env(CHECK('<R a="1" a="2"/>')))).toBe('attribute a appears twice in <R>');
    expect(refused(env(CHECK('<R a=1/>')))).toBe('attribute a in <R> is not quoted');
    expect(refused(env(CHECK('<R a/>')))).toBe('attribute a in <R> has no value');
    expect(refused(env(CHECK('<R a="<"/>')))).toBe("'<' inside attribute a of <R>");
    expect(refused(env(CHECK('<R a="1"b="2"/>')))).toBe('malformed attributes in <R>');
    expect(refused(env(CHECK('<R ="1"/>')))).toBe('malformed attribute in <R>');
    expect(refused(env(CHECK('<R a="1" / >')))).toBe('malformed tag <R>');
  });

  test("'<' in a value is found even when a later element has one too", () => {
    expect(refused(env(CHECK(`<R a='x<y'/>`)))).toBe("'<' inside attribute a of <R>");
    // A '<' after the value (the next tag) is not inside it.
    expect(scanEnvelope(env(CHECK(`<R a='xy'/><S/>`)), DEFAULTS).bodyElements).toBe(1);
  });

  test('tags that are not tags, end tags that do not match', () => {
    expect(refused(env(CHECK('<1a/>')))).toBe("malformed start tag ('<' not followed by a name)");
    expect(refused(env(CHECK('< a/>')))).toBe("malformed start tag ('<' not followed by a name)");
    expect(refused(env(CHECK('<a></1a>')))).toBe('malformed end tag');
    expect(refused(env(CHECK('<a></a x>')))).toBe('malformed end tag </a');
    expect(refused(env(CHECK('<a></b>')))).toBe('</b> closes <a>');
    expect(refused(`${env(CHECK())}</x>`)).toBe('</x> has no start tag');
  });

  test('a body that stops anywhere inside the markup', () => {
    const whole = env(CHECK());
    expect(refused('<')).toBe('the body ends inside a tag');
    expect(refused(`<soap:Envelope xmlns:soap="${S11}"></`)).toBe('the body ends inside an end tag');
    expect(refused(`<soap:Envelope xmlns:soap="${S11}"></soap:Envelope `)).toBe(
      'the body ends inside the end tag </soap:Envelope',
    );
    expect(refused(`<soap:Envelope xmlns:soap="${S11}"></soap:Envelope`)).toBe(
      'the body ends inside the end tag </soap:Envelope',
    );
    expect(refused(`<soap:Envelope xmlns:soap="${S11}"`)).toBe('the body ends inside the tag <soap:Envelope>');
    expect(refused(`<soap:Envelope xmlns:soap="${S11}" `)).toBe('the body ends inside the tag <soap:Envelope>');
    expect(refused(`<soap:Envelope xmlns:soap="${S11}" a="x`)).toBe(
      'the body ends inside an attribute of <soap:Envelope>',
    );
    expect(refused(`<soap:Envelope xmlns:soap="${S11}" a='x"`)).toBe(
      'the body ends inside an attribute of <soap:Envelope>',
    );
    expect(refused(whole.slice(0, whole.indexOf('</soap:Body>')))).toBe('the body ends inside <soap:Body>');
    expect(refused(`<soap:Envelope xmlns:soap="${S11}">text`)).toBe('the body ends inside <soap:Envelope>');
  });

  test('long names are cut to 40 characters and an ellipsis in reasons', () => {
    const long = 'N'.repeat(41);
    expect(
      refused(
        env(
          CHECK(`<${long}>A</${long}>x<b/>`.replace(`</${long}>x`, `</${long}>`).replace('<b/>', '') + `<a></${long}>`),
        ),
      ),
    ).toBe(`</${'N'.repeat(40)}…> closes <a>`);
    const forty = 'M'.repeat(40);
    expect(refused(env(CHECK(`<a></${forty}>`)))).toBe(`</${forty}> closes <a>`);
  });
});

describe('the limits, at their edges', () => {
  // A chain of nested elements under the Body: Envelope 1, Body 2, Check 3, then n more.
  const nested = (n: number) => env(`<Check xmlns="${NS}">${'<d>'.repeat(n)}${'</d>'.repeat(n)}</Check>`);

  test('XML_MAX_DEPTH: the Envelope counts as 1; at the limit accepted, one deeper refused', () => {
    const limits = { ...DEFAULTS, maxDepth: 6 };
    expect(scanEnvelope(nested(3), limits).operation).toEqual({ local: 'Check', ns: NS });
    expect(refused(nested(4), limits)).toBe('elements nested deeper than 6');
    expect(scanEnvelope(nested(29), DEFAULTS).bodyElements).toBe(1);
    expect(refused(nested(30))).toBe('elements nested deeper than 32');
  });

  test('XML_MAX_ELEMENTS: elements in the whole envelope, at the limit accepted, one more refused', () => {
    // Envelope, Body, Check and n parameters.
    const wide = (n: number) => env(CHECK('<p/>'.repeat(n)));
    const limits = { ...DEFAULTS, maxElements: 8 };
    expect(scanEnvelope(wide(5), limits).bodyElements).toBe(1);
    expect(refused(wide(6), limits)).toBe('more than 8 elements');
    expect(scanEnvelope(wide(997), DEFAULTS).bodyElements).toBe(1);
    expect(refused(wide(998))).toBe('more than 1000 elements');
  });

  test('XML_MAX_ATTRIBUTES: namespace declarations included', () => {
    const attrs = (n: number) => Array.from({ length: n }, (_, k) => ` a${k}="${k}"`).join('');
    const limits = { ...DEFAULTS, maxAttributes: 3 };
    // Check carries its xmlns, so two more make three.
    expect(scanEnvelope(env(`<Check xmlns="${NS}"${attrs(2)}/>`), limits).bodyElements).toBe(1);
    expect(refused(env(`<Check xmlns="${NS}"${attrs(3)}/>`), limits)).toBe('<Check> has more than 3 attributes');
    expect(scanEnvelope(env(`<Check xmlns="${NS}"${attrs(31)}/>`), DEFAULTS).bodyElements).toBe(1);
    expect(refused(env(`<Check xmlns="${NS}"${attrs(32)}/>`))).toBe('<Check> has more than 32 attributes');
  });

  test('XML_MAX_TEXT: the text of one element, text and CDATA together', () => {
    const limits = { ...DEFAULTS, maxTextChars: 64 };
    const text = (s: string) => env(CHECK(`<RegistrationNumber>${s}</RegistrationNumber>`));
    expect(scanEnvelope(text('a'.repeat(64)), limits).bodyElements).toBe(1);
    expect(refused(text('a'.repeat(65)), limits)).toBe('the text of <RegistrationNumber> is longer than 64 characters');
    expect(scanEnvelope(text(`${'a'.repeat(30)}<![CDATA[${'b'.repeat(34)}]]>`), limits).bodyElements).toBe(1);
    expect(refused(text(`${'a'.repeat(30)}<![CDATA[${'b'.repeat(35)}]]>`), limits)).toBe(
      'the text of <RegistrationNumber> is longer than 64 characters',
    );
    expect(refused(text(`<![CDATA[${'b'.repeat(65)}]]>`), limits)).toBe(
      'the text of <RegistrationNumber> is longer than 64 characters',
    );
    expect(refused(text(`${'a'.repeat(30)}<!-- c -->${'a'.repeat(35)}`), limits)).toBe(
      'the text of <RegistrationNumber> is longer than 64 characters',
    );
    expect(scanEnvelope(text('a'.repeat(8192)), DEFAULTS).bodyElements).toBe(1);
    expect(refused(text('a'.repeat(8193)))).toBe('the text of <RegistrationNumber> is longer than 8192 characters');
  });

  test('XML_MAX_TEXT: one attribute value', () => {
    const limits = { ...DEFAULTS, maxTextChars: 64 };
    expect(scanEnvelope(env(CHECK(`<R a="${'v'.repeat(64)}"/>`)), limits).bodyElements).toBe(1);
    expect(refused(env(CHECK(`<R a="${'v'.repeat(65)}"/>`)), limits)).toBe(
      'attribute a of <R> is longer than 64 characters',
    );
  });

  test('XML_MAX_TEXT: one element or attribute name', () => {
    const limits = { ...DEFAULTS, maxTextChars: 64 };
    const at = 'e'.repeat(64);
    const over = 'e'.repeat(65);
    expect(scanEnvelope(env(CHECK(`<${at} ${at}="1"/>`)), limits).bodyElements).toBe(1);
    expect(refused(env(CHECK(`<${over}/>`)), limits)).toBe('an element name is longer than 64 characters');
    expect(refused(env(CHECK(`<R ${over}="1"/>`)), limits)).toBe('an attribute name is longer than 64 characters');
  });

  test('a text limit counts per element, not across siblings', () => {
    const limits = { ...DEFAULTS, maxTextChars: 64 };
    expect(scanEnvelope(env(CHECK(`<a>${'x'.repeat(60)}</a><b>${'x'.repeat(60)}</b>`)), limits).bodyElements).toBe(1);
  });
});

describe('edges found by the transport-a run', () => {
  test("an '&' in a comment is not an entity reference", () => {
    expect(
      scanEnvelope(env(CHECK('<!-- a & b --><RegistrationNumber>A</RegistrationNumber>')), DEFAULTS).bodyElements,
    ).toBe(1);
  });

  test('a declaration cut short is a malformed declaration', () => {
    expect(refused('<?xml ')).toBe('malformed XML declaration');
  });

  test('the xml prefix is bound to the XML namespace without a declaration', () => {
    expect(scanEnvelope(env('<xml:Check/>'), DEFAULTS).operation).toEqual({
      local: 'Check',
      ns: 'http://www.w3.org/XML/1998/namespace',
    });
  });

  test("']]>' in an attribute value just before a CDATA section is not the section's end", () => {
    expect(scanEnvelope(env(CHECK('<R a="]]>"><![CDATA[x]]></R>')), DEFAULTS).bodyElements).toBe(1);
  });

  test('an object-member name as the value of an attribute other than id is only text', () => {
    expect(scanEnvelope(env(CHECK('<R a="constructor" b="__proto__">A</R>')), DEFAULTS).bodyElements).toBe(1);
  });

  test('mustUnderstand: only the attribute of that name, with the envelope namespace, "1" or "true" exactly', () => {
    const header = (h: string) =>
      scanEnvelope(env(CHECK(), `<soap:Header>${h}</soap:Header>`), DEFAULTS).mustUnderstand;
    expect(header('<a:B xmlns:a="urn:a" soap:role="1" soap:actor="true"/>')).toEqual([]);
    expect(header('<a:B xmlns:a="urn:a" soap:mustUnderstand="01"/>')).toEqual([]);
    expect(header(`<a:B xmlns:a="urn:a" xmlns:s="${S11}" s:mustUnderstand="1"/>`)).toEqual([
      { local: 'B', ns: 'urn:a' },
    ]);
    // Blocks under another element of the envelope than Header are not header blocks.
    expect(
      scanEnvelope(
        `<soap:Envelope xmlns:soap="${S11}"><soap:Other><a:B xmlns:a="urn:a" soap:mustUnderstand="1"/></soap:Other><soap:Body>${CHECK()}</soap:Body></soap:Envelope>`,
        DEFAULTS,
      ).mustUnderstand,
    ).toEqual([]);
  });
});
