// fast-check generators for hostile requests: a valid request for some operation over some
// transport, then a few mutations of its text, its bytes, its parameters or its headers.
// Shared by the jest property test and by `npm run fuzz`.

import zlib from 'node:zlib';
import fc from 'fast-check';
import { OPERATIONS } from '../../src/contract/operations';
import { demoParams } from '../helpers/sample';
import { NS, SOAP11, SOAP12 } from '../helpers/soap';

export type Transport = 'soap11' | 'soap12' | 'get' | 'post';

export interface FuzzRequest {
  readonly transport: Transport;
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** Gives a request fast-check's short description, so that a counterexample prints readably. */
function described(r: FuzzRequest): FuzzRequest {
  return Object.assign(r, { [fc.toStringMethod]: () => describeRequest(r) });
}

// ------------------------------------------------------------------ building blocks

const opArb = fc.constantFrom(...OPERATIONS);

/** Pieces of markup and text that reach corners of a parser; none spells a leak pattern by itself. */
const XML_SNIPPETS = [
  '<',
  '>',
  '&',
  '&amp;',
  '&lt;',
  '&#0;',
  '&#x1F600;',
  '&#xD800;',
  '&#65;',
  '&bogus;',
  '&#;',
  ']]>',
  '<![CDATA[',
  ']]>',
  '<![CDATA[x]]>',
  '<![CDATA[<?xml version="1.0"?><a/>]]>',
  '<!--',
  '-->',
  '<!-- c -->',
  '<!-- a -- b -->',
  '<!DOCTYPE a>',
  '<!DOCTYPE a [<!ENTITY e "x">]>',
  '<!ENTITY e SYSTEM "file:///etc/hostname">',
  '<?pi x?>',
  '<?xml version="1.0"?>',
  '<a>',
  '</a>',
  '<a/>',
  '<a:b/>',
  '<a:b:c/>',
  '<:a/>',
  '"',
  "'",
  '=',
  ' xmlns="urn:x"',
  ' xmlns:p="urn:p"',
  ' xmlns=""',
  ' a="1"',
  ' a="1" a="2"',
  ' p:a="1"',
  ' id="__proto__"',
  ' id="x"',
  ' href="#x"',
  ' xsi:nil="true"',
  ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"',
  ' xsi:type="xsd:int"',
  ' soap:mustUnderstand="1"',
  '<constructor/>',
  '<__proto__/>',
  '<toString>x</toString>',
  '<Body/>',
  '<soap:Body/>',
  '<soap:Header/>',
  '<soap:Header><h soap:mustUnderstand="1"/></soap:Header>',
  '<Body><x/></Body>',
  '<Body xmlns="urn:x"><a>1</a></Body>',
  '<Envelope><Body/></Envelope>',
  '<Fault/>',
  '<Check/>',
  '<UKMOT/>',
  '<RegistrationNumber>X</RegistrationNumber>',
  '<username>u</username>',
  '<state>CA</state>',
  '<State>CA</State>',
  '<Model>FOCUS</Model>',
  'soap:',
  ':',
  '\u0000',
  '\u0001',
  '\t',
  '\r\n',
  '\u0085',
  '\u2028',
  '\ufeff',
  '\ufffe',
  '\uD800',
  '\uDC00',
  'é',
  'Ж',
  '中',
  '😀',
  "' OR 1=1 --",
  '%',
  '%00',
  '\\',
  '/',
  '..',
];

const snippetArb = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...XML_SNIPPETS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('<a>', '</a>', '&amp;', 'x', '<b/>')
      .chain((s) => fc.integer({ min: 2, max: 60 }).map((n) => s.repeat(n))),
  },
);

type TextMutation =
  | { kind: 'insert'; at: number; what: string }
  | { kind: 'afterTag'; at: number; what: string }
  | { kind: 'delete'; at: number; len: number }
  | { kind: 'duplicate'; at: number; len: number }
  | { kind: 'replace'; at: number; len: number; what: string }
  | { kind: 'case'; at: number; len: number; upper: boolean }
  | { kind: 'truncate'; at: number };

const textMutationArb: fc.Arbitrary<TextMutation> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), what: snippetArb }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('afterTag' as const), at: fc.nat(), what: snippetArb }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), len: fc.integer({ min: 1, max: 40 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('duplicate' as const),
      at: fc.nat(),
      len: fc.integer({ min: 1, max: 80 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('replace' as const),
      at: fc.nat(),
      len: fc.integer({ min: 1, max: 20 }),
      what: snippetArb,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('case' as const),
      at: fc.nat(),
      len: fc.integer({ min: 1, max: 12 }),
      upper: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }) },
);

function applyText(s: string, m: TextMutation): string {
  const at = s.length === 0 ? 0 : m.at % (s.length + 1);
  switch (m.kind) {
    case 'insert':
      return s.slice(0, at) + m.what + s.slice(at);
    case 'afterTag': {
      // Right after the n-th '>': where elements, comments and text begin, so structure changes rather than breaks.
      const ends: number[] = [];
      for (let k = s.indexOf('>'); k !== -1; k = s.indexOf('>', k + 1)) ends.push(k + 1);
      const pos = ends.length === 0 ? at : ends[m.at % ends.length];
      return s.slice(0, pos) + m.what + s.slice(pos);
    }
    case 'delete':
      return s.slice(0, at) + s.slice(at + m.len);
    case 'duplicate':
      return s.slice(0, at + m.len) + s.slice(at, at + m.len) + s.slice(at + m.len);
    case 'replace':
      return s.slice(0, at) + m.what + s.slice(at + m.len);
    case 'case': {
      const part = s.slice(at, at + m.len);
      return s.slice(0, at) + (m.upper ? part.toUpperCase() : part.toLowerCase()) + s.slice(at + m.len);
    }
    case 'truncate':
      return s.slice(0, at);
  }
}

type ByteMutation = { kind: 'set' | 'insert'; at: number; value: number };
const byteMutationArb: fc.Arbitrary<ByteMutation> = fc.record({
  kind: fc.constantFrom('set' as const, 'insert' as const),
  at: fc.nat(),
  value: fc.oneof(
    fc.constantFrom(0x00, 0x80, 0xbf, 0xc0, 0xc3, 0xed, 0xef, 0xf4, 0xf8, 0xfe, 0xff),
    fc.integer({ min: 0, max: 255 }),
  ),
});

function applyBytes(buf: Buffer, muts: readonly ByteMutation[]): Buffer {
  let b = buf;
  for (const m of muts) {
    const at = b.length === 0 ? 0 : m.at % b.length;
    if (m.kind === 'set' && b.length > 0) {
      b = Buffer.from(b);
      b[at] = m.value;
    } else b = Buffer.concat([b.subarray(0, at), Buffer.from([m.value]), b.subarray(at)]);
  }
  return b;
}

/** Header values: printable ASCII only, as any HTTP client must send them. */
const headerJunkArb = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 40,
});

// ------------------------------------------------------------------ parameters (every transport)

type Pair = readonly [string, string];

type PairMutation =
  | { kind: 'drop'; at: number }
  | { kind: 'repeat'; at: number }
  | { kind: 'rename'; at: number; name: string }
  | { kind: 'recase'; at: number }
  | { kind: 'value'; at: number; value: string }
  | { kind: 'add'; name: string; value: string };

const nameArb = fc.oneof(
  fc.constantFrom(
    'RegistrationNumber',
    'registrationnumber',
    'REGISTRATIONNUMBER',
    'username',
    'UserName',
    'state',
    'State',
    'Model',
    'model',
    'op',
    '__proto__',
    'constructor',
    'toString',
    '',
    ' ',
    'a[b]',
    'a.b',
  ),
  fc.string({ unit: 'binary', maxLength: 10 }),
);

const valueArb = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      'RG11 ABC',
      "' OR 1=1 --",
      '"; DROP TABLE records; --',
      'RG11%',
      '<script>x</script>',
      'CA',
      'ca',
      'California',
      'XX',
      'ON',
      'NSW',
      'FOCUS',
      '\u0000',
      '\t',
      '\u0085',
      '\u2028',
      'АА1234ВС',
      'A'.repeat(32),
      'A'.repeat(33),
      'x'.repeat(300),
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 20_000 }).map((n) => 'z'.repeat(n)) },
);

const pairMutationArb: fc.Arbitrary<PairMutation> = fc.oneof(
  fc.record({ kind: fc.constant('drop' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('repeat' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('rename' as const), at: fc.nat(), name: nameArb }),
  fc.record({ kind: fc.constant('recase' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('value' as const), at: fc.nat(), value: valueArb }),
  fc.record({ kind: fc.constant('add' as const), name: nameArb, value: valueArb }),
);

function applyPair(pairs: readonly Pair[], m: PairMutation): Pair[] {
  const out = [...pairs];
  if (m.kind === 'add') return [...out, [m.name, m.value]];
  if (out.length === 0) return out;
  const at = m.at % out.length;
  const [n, v] = out[at];
  switch (m.kind) {
    case 'drop':
      out.splice(at, 1);
      break;
    case 'repeat':
      out.splice(at, 0, [n, v]);
      break;
    case 'rename':
      out[at] = [m.name, v];
      break;
    case 'recase':
      out[at] = [n === n.toLowerCase() ? n.toUpperCase() : n.toLowerCase(), v];
      break;
    case 'value':
      out[at] = [n, m.value];
      break;
  }
  return out;
}

// ------------------------------------------------------------------ SOAP

const xmlText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

interface EnvelopeStyle {
  prefix: string;
  decl: string;
  header: string;
  opPrefix: boolean;
  pretty: boolean;
}

const envelopeStyleArb: fc.Arbitrary<EnvelopeStyle> = fc.record({
  prefix: fc.constantFrom('soap', 's', 'env', ''),
  decl: fc.constantFrom(
    '<?xml version="1.0" encoding="utf-8"?>',
    '<?xml version="1.0"?>',
    '',
    '\ufeff<?xml version="1.0" encoding="UTF-8"?>',
  ),
  header: fc.constantFrom('', 'empty', 'block'),
  opPrefix: fc.boolean(),
  pretty: fc.boolean(),
});

function soapBase(
  version: '1.1' | '1.2',
  opName: string,
  params: ReadonlyArray<readonly [string, string]>,
  s: EnvelopeStyle,
): string {
  const envNs = version === '1.1' ? SOAP11 : SOAP12;
  const p = s.prefix ? `${s.prefix}:` : '';
  const decl = s.prefix ? ` xmlns:${s.prefix}="${envNs}"` : ` xmlns="${envNs}"`;
  const nl = s.pretty ? '\n  ' : '';
  const header =
    s.header === 'empty'
      ? `<${p}Header/>`
      : s.header === 'block'
        ? `<${p}Header><Trace xmlns="urn:example">t-1</Trace></${p}Header>`
        : '';
  const op = s.opPrefix ? `tns:${opName}` : opName;
  const opDecl = s.opPrefix ? ` xmlns:tns="${NS}"` : ` xmlns="${NS}"`;
  const child = (k: string) => (s.opPrefix ? `tns:${k}` : k);
  const children = params.map(([k, v]) => `${nl}<${child(k)}>${xmlText(v)}</${child(k)}>`).join('');
  return `${s.decl}<${p}Envelope${decl}>${nl}${header}<${p}Body><${op}${opDecl}>${children}${nl}</${op}></${p}Body></${p}Envelope>`;
}

const SOAP_CT = { '1.1': 'text/xml; charset=utf-8', '1.2': 'application/soap+xml; charset=utf-8' } as const;

function soapHeadersArb(version: '1.1' | '1.2', opName: string): fc.Arbitrary<Record<string, string>> {
  const proper = version === '1.1' ? `"${NS}/${opName}"` : undefined;
  const ct = fc.oneof(
    { weight: 8, arbitrary: fc.constant(SOAP_CT[version] + (version === '1.2' ? `; action="${NS}/${opName}"` : '')) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        SOAP_CT[version === '1.1' ? '1.2' : '1.1'],
        'text/xml',
        'application/soap+xml',
        'TEXT/XML; CHARSET=UTF-8',
        'text/xml; charset=utf-16',
        'text/xml; charset=iso-8859-1',
        'application/soap+xml; charset=utf-8; action="urn:other"',
        `application/soap+xml; action="${NS}/Check"`,
        'application/xml',
        'application/json',
        'application/x-www-form-urlencoded',
        'multipart/related; type="application/xop+xml"',
        '',
      ),
    },
    { weight: 1, arbitrary: headerJunkArb },
  );
  const action = fc.oneof(
    { weight: 8, arbitrary: fc.constant(proper) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        undefined,
        '""',
        '',
        `${NS}/${opName}`,
        `"${NS}/Check"`,
        `"${NS}/UKMOT"`,
        `"${NS}/Nope"`,
        '"urn:x"',
        `"${NS}/${opName.toLowerCase()}"`,
      ),
    },
    { weight: 1, arbitrary: headerJunkArb },
  );
  const encoding = fc.oneof(
    { weight: 12, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-junk') },
  );
  return fc.record({ ct, action, encoding }).map(({ ct, action, encoding }) => {
    const h: Record<string, string> = {};
    if (ct !== '') h['Content-Type'] = ct;
    if (action !== undefined) h.SOAPAction = action;
    if (encoding !== undefined) h['Content-Encoding'] = encoding;
    return h;
  });
}

export const soapRequestArb: fc.Arbitrary<FuzzRequest> = fc
  .tuple(fc.constantFrom('1.1' as const, '1.2' as const), opArb)
  .chain(([version, op]) =>
    fc.record({
      version: fc.constant(version),
      // Half the cases keep the XML well-formed and change only what the parameters say.
      text: fc
        .tuple(
          envelopeStyleArb,
          fc.array(pairMutationArb, { maxLength: 3 }),
          fc.oneof(fc.constant([] as TextMutation[]), fc.array(textMutationArb, { minLength: 1, maxLength: 4 })),
        )
        .map(([style, pairMuts, textMuts]) => {
          const pairs = pairMuts.reduce(applyPair, Object.entries(demoParams(op.name, op.params)) as Pair[]);
          return textMuts.reduce(applyText, soapBase(version, op.name, pairs, style));
        }),
      bytes: fc.oneof(
        { weight: 6, arbitrary: fc.constant([] as ByteMutation[]) },
        { weight: 1, arbitrary: fc.array(byteMutationArb, { minLength: 1, maxLength: 3 }) },
      ),
      headers: soapHeadersArb(version, op.name),
    }),
  )
  .map(({ version, text, bytes, headers }) => {
    let body = applyBytes(Buffer.from(text, 'utf8'), bytes);
    if (headers['Content-Encoding'] === 'gzip') body = zlib.gzipSync(body);
    else if (headers['Content-Encoding'] === 'deflate') body = zlib.deflateSync(body);
    return described({
      transport: version === '1.1' ? 'soap11' : 'soap12',
      method: 'POST',
      path: '/api/reg.asmx',
      headers,
      body,
    });
  });

/** Only the envelope text, mutated: for checking the XML guard against node-soap's parser in-process. */
export const envelopeTextArb: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom('1.1' as const, '1.2' as const),
    opArb,
    envelopeStyleArb,
    fc.array(pairMutationArb, { maxLength: 3 }),
    fc.array(textMutationArb, { maxLength: 5 }),
  )
  .map(([version, op, style, pairMuts, textMuts]) => {
    const pairs = pairMuts.reduce(applyPair, Object.entries(demoParams(op.name, op.params)) as Pair[]);
    return textMuts.reduce(applyText, soapBase(version, op.name, pairs, style));
  });

// ------------------------------------------------------------------ HTTP GET and POST

/** Percent-encodes every UTF-16 unit that is not plain ASCII, as UTF-8 (a lone surrogate becomes EF BF BD). */
function pct(s: string, plusForSpace: boolean): string {
  const enc = Buffer.from(s, 'utf8');
  let out = '';
  for (const b of enc) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else if (plusForSpace && b === 0x20) out += '+';
    else out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Corruptions of an encoded query string; the result stays printable ASCII, as a URL must. */
const QUERY_SNIPPETS = [
  '%',
  '%Z',
  '%ZZ',
  '%FF',
  '%C3',
  '%C3%28',
  '%E9',
  '%C0%AF',
  '%ED%A0%80',
  '%00',
  '%0A',
  '&',
  '&&',
  '=',
  '==',
  '+',
  '%2B',
  '%26',
  '%3D',
  '#',
  '?',
  ';',
  '%25',
  '%u0041',
];
const queryMutationArb: fc.Arbitrary<TextMutation> = fc.oneof(
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), what: fc.constantFrom(...QUERY_SNIPPETS) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), len: fc.integer({ min: 1, max: 10 }) }),
  fc.record({
    kind: fc.constant('case' as const),
    at: fc.nat(),
    len: fc.integer({ min: 1, max: 10 }),
    upper: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
);

const opPathArb = fc.oneof(
  { weight: 10, arbitrary: opArb.map((o) => o.name) },
  { weight: 2, arbitrary: opArb.map((o) => o.name.toLowerCase()) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      'Nope',
      'Check%FF',
      'Check%00',
      '%C3%28',
      'Check/',
      'Check/extra',
      '..',
      '%2e%2e',
      'Check%2F..%2F',
      '__proto__',
      'constructor',
      'CheckUSA%20',
      'Check;x',
      'Check.json',
    ),
  },
);

export const httpRequestArb: fc.Arbitrary<FuzzRequest> = fc
  .tuple(fc.constantFrom('get' as const, 'post' as const), opArb)
  .chain(([transport, op]) =>
    fc.record({
      transport: fc.constant(transport),
      opPath: fc.oneof({ weight: 6, arbitrary: fc.constant(op.name) }, { weight: 1, arbitrary: opPathArb }),
      pairs: fc
        .array(pairMutationArb, { maxLength: 4 })
        .map((muts) => muts.reduce(applyPair, Object.entries(demoParams(op.name, op.params)) as Pair[])),
      plus: fc.boolean(),
      queryMuts: fc.oneof(
        { weight: 3, arbitrary: fc.constant([] as TextMutation[]) },
        { weight: 1, arbitrary: fc.array(queryMutationArb, { minLength: 1, maxLength: 3 }) },
      ),
      method: fc.oneof(
        { weight: 12, arbitrary: fc.constant(transport === 'get' ? 'GET' : 'POST') },
        { weight: 1, arbitrary: fc.constantFrom('HEAD', 'PUT', 'DELETE', 'OPTIONS', 'PATCH') },
      ),
      contentType: fc.oneof(
        { weight: 8, arbitrary: fc.constant('application/x-www-form-urlencoded') },
        {
          weight: 2,
          arbitrary: fc.constantFrom(
            'application/x-www-form-urlencoded; charset=utf-8',
            'application/x-www-form-urlencoded; charset=latin1',
            'APPLICATION/X-WWW-FORM-URLENCODED',
            'text/plain',
            'application/json',
            'multipart/form-data; boundary=x',
            'text/xml',
            '',
          ),
        },
        { weight: 1, arbitrary: headerJunkArb },
      ),
      bytes: fc.oneof(
        { weight: 8, arbitrary: fc.constant([] as ByteMutation[]) },
        { weight: 1, arbitrary: fc.array(byteMutationArb, { minLength: 1, maxLength: 3 }) },
      ),
    }),
  )
  .map(({ transport, opPath, pairs, plus, queryMuts, method, contentType, bytes }) => {
    const encoded = queryMuts.reduce(applyText, pairs.map(([k, v]) => `${pct(k, plus)}=${pct(v, plus)}`).join('&'));
    const path = `/api/reg.asmx/${opPath}`;
    if (transport === 'get')
      return described({
        transport,
        method,
        path: encoded ? `${path}?${encoded}` : path,
        headers: {},
        body: Buffer.alloc(0),
      });
    const headers: Record<string, string> = contentType ? { 'Content-Type': contentType } : {};
    return described({ transport, method, path, headers, body: applyBytes(Buffer.from(encoded, 'latin1'), bytes) });
  });

export const anyRequestArb: fc.Arbitrary<FuzzRequest> = fc.oneof(soapRequestArb, httpRequestArb);

/** A readable one-line description of a request, for failure reports. */
export function describeRequest(r: FuzzRequest): string {
  const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}… (${s.length} characters)` : s);
  return `${r.method} ${cut(r.path, 400)} ${JSON.stringify(r.headers)} body=${cut(JSON.stringify(r.body.toString('latin1')), 800)}`;
}
