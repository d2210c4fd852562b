// A bounded, well-formedness-checking pass over a SOAP request before any real parser sees it.
// It refuses DTDs, entity declarations, processing instructions and undefined entities (nothing is
// ever expanded), enforces depth, text, element and attribute limits in one linear scan, and
// reports the envelope's shape (namespace, Body's operation element, mustUnderstand headers).
//
// It must be at least as strict as what node-soap runs next (sax in strict mode, then its own
// object builder): whatever passes here but fails there comes back as node-soap's own fault or a
// bare error line instead of ours. So it also refuses what that builder mishandles: names of
// JavaScript object members (an id="__proto__" would pollute Object.prototype for every later
// request), SOAP-encoding href references, CDATA holding an XML document (which node-soap parses
// again, unscreened), mixed content, and elements named Body or Envelope out of their place.

import type { Limits } from '../config';

export type GuardLimits = Omit<Limits, 'maxBodyBytes'>;

export class XmlRejected extends Error {}

interface Qualified {
  readonly local: string;
  readonly ns: string;
}

interface EnvelopeShape {
  readonly root: Qualified;
  /** The first element inside Body, if any. */
  readonly operation: Qualified | null;
  readonly bodyElements: number;
  readonly hasBody: boolean;
  /** Header blocks marked mustUnderstand="1"/"true". */
  readonly mustUnderstand: readonly Qualified[];
}

const NOT_XML_CHAR = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/;
// XML 1.0 (fifth edition) name characters, BMP only (as sax reads them); a QName is an NCName with
// at most one prefix.
const NC_START =
  'A-Za-z_\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u02FF\\u0370-\\u037D\\u037F-\\u1FFF\\u200C-\\u200D\\u2070-\\u218F\\u2C00-\\u2FEF\\u3001-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFFD';
const NC_BODY = `${NC_START}.\\-0-9\\u00B7\\u0300-\\u036F\\u203F-\\u2040`;
// The combining marks (U+0300-036F) are name characters in their own right, as XML lists them.
// eslint-disable-next-line no-misleading-character-class
const NAME = new RegExp(`[${NC_START}][${NC_BODY}]*(?::[${NC_START}][${NC_BODY}]*)?`, 'y');
/** Own members of Object.prototype: as element, attribute or id names they reach node-soap's plain-object maps. */
const RESERVED = new Set(Object.getOwnPropertyNames(Object.prototype));
const WS = /[ \t\r\n]*/y;
const ENTITY = /&(?:(amp|lt|gt|quot|apos)|#([0-9]{1,7})|#x([0-9a-fA-F]{1,6}));/y;
const XML_DECL =
  /^<\?xml[ \t\r\n]+version[ \t\r\n]*=[ \t\r\n]*(["'])1\.[0-9]\1(?:[ \t\r\n]+encoding[ \t\r\n]*=[ \t\r\n]*(["'])([A-Za-z][A-Za-z0-9._-]*)\2)?(?:[ \t\r\n]+standalone[ \t\r\n]*=[ \t\r\n]*(["'])(?:yes|no)\4)?[ \t\r\n]*\?>/;

interface Frame {
  readonly qname: string;
  readonly ns: Map<string, string> | null;
  local: string;
  uri: string;
  text: number;
  /** Text that is not white space (as node-soap trims it), and child elements: never both. */
  hasText: boolean;
  hasChild: boolean;
}

const MIXED = (qname: string) =>
  `<${shown(qname)}> holds both text and elements (mixed content); a parameter is text only`;

function validChar(cp: number): boolean {
  return (
    cp === 0x9 ||
    cp === 0xa ||
    cp === 0xd ||
    (cp >= 0x20 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd) ||
    (cp >= 0x10000 && cp <= 0x10ffff)
  );
}

/**
 * Checks every '&' in a run of character data or an attribute value (searching only that run, so the scan stays
 * linear).
 */
function checkEntities(xml: string, from: number, to: number): void {
  const s = xml.slice(from, to);
  let amp = s.indexOf('&');
  while (amp !== -1) {
    ENTITY.lastIndex = amp;
    const m = ENTITY.exec(s);
    if (!m) {
      const name = /^&([^;\s<&]{0,20})/.exec(s.slice(amp, amp + 24))?.[1] ?? '';
      throw new XmlRejected(
        `undefined entity reference '&${shown(name)};' (only &amp; &lt; &gt; &quot; &apos; and character references are allowed; no DTD entities)`,
      );
    }
    if (!m[1]) {
      const cp = m[2] !== undefined ? parseInt(m[2], 10) : parseInt(m[3], 16);
      if (!validChar(cp)) throw new XmlRejected(`character reference ${shown(m[0])} is not a character XML allows`);
    }
    amp = s.indexOf('&', amp + m[0].length);
  }
}

/** An attribute value as the parser will see it (entities were checked by checkEntities). */
function decodeValue(v: string): string {
  if (!v.includes('&')) return v;
  return v.replace(
    /&(?:(amp|lt|gt|quot|apos)|#([0-9]{1,7})|#x([0-9a-fA-F]{1,6}));/g,
    (_m, named: string | undefined, dec: string | undefined, hex: string | undefined) => {
      if (named) return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[named] as string;
      return String.fromCodePoint(dec !== undefined ? parseInt(dec, 10) : parseInt(hex as string, 16));
    },
  );
}

function checkName(qname: string, what: string, limits: GuardLimits): void {
  if (qname.length > limits.maxTextChars)
    throw new XmlRejected(`an ${what} name is longer than ${limits.maxTextChars} characters`);
  for (const part of qname.split(':')) {
    if (RESERVED.has(part))
      throw new XmlRejected(`the ${what} name '${shown(qname)}' is not accepted (it names a built-in object member)`);
  }
}

/** A name as quoted in a reason: names may be as long as the text limit. */
function shown(name: string): string {
  return name.length > 40 ? `${name.slice(0, 40)}…` : name;
}

/** Text that is not white space in `top`: never beside child elements (mixed content). */
function hasText(top: Frame): void {
  if (top.hasChild) throw new XmlRejected(MIXED(top.qname));
  top.hasText = true;
}

/** The XML declaration, if the body starts with one: where the content begins. */
function skipProlog(xml: string): number {
  const i = xml.charCodeAt(0) === 0xfeff ? 1 : 0;
  if (!/^<\?xml[ \t\r\n]/.test(xml.slice(i, i + 6))) return i;
  const decl = XML_DECL.exec(xml.slice(i, i + 200));
  if (!decl) throw new XmlRejected('malformed XML declaration');
  if (decl[3] && !/^utf-?8$/i.test(decl[3]))
    throw new XmlRejected(`the XML declaration names encoding '${decl[3]}'; only UTF-8 is accepted`);
  return i + decl[0].length;
}

/**
 * One pass over one body: the open elements, the counts the limits bound, and the envelope's shape
 * as it is found. Each kind of markup has its method; run() steps from one to the next.
 */
class Scanner {
  private readonly len: number;
  private readonly stack: Frame[] = [];
  private elements = 0;
  private rootSeen = false;
  private root: Qualified | null = null;
  private operation: Qualified | null = null;
  private bodyElements = 0;
  private hasBody = false;
  private readonly mustUnderstand: Qualified[] = [];
  // What startTag() read last (kept here rather than returned, so that a tag costs no object of its own).
  private tagName = '';
  private tagNs: Map<string, string> | null = null;
  private tagAttrs: Array<[string, string]> = [];
  private selfClosing = false;
  // What attribute() read last: its name and value as written.
  private attrName = '';
  private attrValue = '';

  constructor(
    private readonly xml: string,
    private readonly limits: GuardLimits,
  ) {
    this.len = xml.length;
  }

  run(): EnvelopeShape {
    const { xml, len } = this;
    let i = skipProlog(xml);
    while (i < len) {
      const lt = xml.indexOf('<', i);
      const end = lt === -1 ? len : lt;
      if (end > i) this.text(i, end);
      if (lt === -1) break;
      const next = xml.charCodeAt(lt + 1);
      if (next === 0x21 /* ! */) i = this.declaration(lt);
      else if (next === 0x3f /* ? */)
        throw new XmlRejected('processing instructions are not allowed (only the XML declaration, at the very start)');
      else if (next === 0x2f /* / */) i = this.endTag(lt);
      else i = this.element(lt);
    }
    const { stack, root } = this;
    if (stack.length > 0) throw new XmlRejected(`the body ends inside <${shown(stack[stack.length - 1].qname)}>`);
    if (!root) throw new XmlRejected('the body holds no XML element');
    return {
      root,
      operation: this.operation,
      bodyElements: this.bodyElements,
      hasBody: this.hasBody,
      mustUnderstand: this.mustUnderstand,
    };
  }

  private resolve(prefix: string): string | undefined {
    if (prefix === 'xml') return 'http://www.w3.org/XML/1998/namespace';
    const stack = this.stack;
    for (let k = stack.length - 1; k >= 0; k--) {
      const v = stack[k].ns?.get(prefix);
      if (v !== undefined) return v;
    }
    return prefix === '' ? '' : undefined;
  }

  /** `chars` more characters of text (or CDATA) in `top`: its length limit. */
  private countText(top: Frame, chars: number): void {
    top.text += chars;
    if (top.text > this.limits.maxTextChars)
      throw new XmlRejected(`the text of <${shown(top.qname)}> is longer than ${this.limits.maxTextChars} characters`);
  }

  /** Character data between two tags. */
  private text(from: number, to: number): void {
    const { xml, stack } = this;
    if (stack.length === 0) {
      if (!/^[ \t\r\n]*$/.test(xml.slice(from, to))) throw new XmlRejected('text outside the root element');
      return;
    }
    const top = stack[stack.length - 1];
    this.countText(top, to - from);
    const run = xml.slice(from, to);
    checkEntities(xml, from, to);
    if (run.includes(']]>')) throw new XmlRejected(`']]>' in the text of <${shown(top.qname)}> (write ]]&gt;)`);
    if (run.trim() !== '') hasText(top);
  }

  /**
   * '<!': a comment or a CDATA section (anything else is a DTD or declaration, refused). Returns where scanning goes
   * on.
   */
  private declaration(i: number): number {
    const xml = this.xml;
    if (xml.startsWith('<!--', i)) {
      // XML allows no '--' inside a comment, so the first '--' must be the end.
      const dashes = xml.indexOf('--', i + 4);
      if (dashes === -1) throw new XmlRejected('the body ends inside a comment');
      if (xml.charCodeAt(dashes + 2) !== 0x3e) throw new XmlRejected("'--' inside a comment");
      return dashes + 3;
    }
    if (xml.startsWith('<![CDATA[', i)) {
      if (this.stack.length === 0) throw new XmlRejected('CDATA outside the root element');
      const close = xml.indexOf(']]>', i + 9);
      if (close === -1) throw new XmlRejected('the body ends inside a CDATA section');
      const top = this.stack[this.stack.length - 1];
      this.countText(top, close - (i + 9));
      const data = xml.slice(i + 9, close);
      if (/<\?xml/i.test(data))
        throw new XmlRejected(
          `a CDATA section in <${shown(top.qname)}> holds an XML document; embedded XML is not accepted`,
        );
      if (data.trim() !== '') hasText(top);
      return close + 3;
    }
    const what = /^<!([A-Z]+)/.exec(xml.slice(i, i + 12))?.[1] ?? '';
    throw new XmlRejected(
      `${what ? `<!${what}>` : 'markup declarations'}: DTDs, entity declarations and external references are not allowed`,
    );
  }

  /** '</name>': closes the innermost element, which must be the one it names. */
  private endTag(i: number): number {
    const { xml, len } = this;
    NAME.lastIndex = i + 2;
    const m = NAME.exec(xml);
    if (!m) throw new XmlRejected(i + 2 >= len ? 'the body ends inside an end tag' : 'malformed end tag');
    WS.lastIndex = NAME.lastIndex;
    WS.exec(xml);
    if (WS.lastIndex >= len) throw new XmlRejected(`the body ends inside the end tag </${shown(m[0])}`);
    if (xml.charCodeAt(WS.lastIndex) !== 0x3e) throw new XmlRejected(`malformed end tag </${shown(m[0])}`);
    const top = this.stack.pop();
    if (!top || top.qname !== m[0])
      throw new XmlRejected(
        top ? `</${shown(m[0])}> closes <${shown(top.qname)}>` : `</${shown(m[0])}> has no start tag`,
      );
    return WS.lastIndex + 1;
  }

  /** A start tag: read, opened (its namespace resolved, the limits counted), placed in the envelope's shape. */
  private element(i: number): number {
    const end = this.startTag(i);
    const qname = this.tagName;
    const attrs = this.tagAttrs;
    const colon = qname.indexOf(':');
    const prefix = colon === -1 ? '' : qname.slice(0, colon);
    const stack = this.stack;
    const container = stack[stack.length - 1];
    if (container) {
      if (container.hasText) throw new XmlRejected(MIXED(container.qname));
      container.hasChild = true;
    }
    const frame: Frame = {
      qname,
      ns: this.tagNs,
      local: colon === -1 ? qname : qname.slice(colon + 1),
      uri: '',
      text: 0,
      hasText: false,
      hasChild: false,
    };
    stack.push(frame);
    if (stack.length > this.limits.maxDepth)
      throw new XmlRejected(`elements nested deeper than ${this.limits.maxDepth}`);
    const uri = this.resolve(prefix);
    if (uri === undefined) throw new XmlRejected(`undeclared namespace prefix '${shown(prefix)}' on <${shown(qname)}>`);
    frame.uri = uri;
    this.place(frame, attrs);
    if (this.selfClosing) stack.pop();
    return end;
  }

  /** Where an element sits in the envelope: the root, the Body, the operation, a mustUnderstand header block. */
  private place(frame: Frame, attrs: ReadonlyArray<readonly [string, string]>): void {
    const depth = this.stack.length;
    const { qname, uri } = frame;
    const root = this.root;
    // node-soap takes the first child of any element named Body, wherever it is, for the operation.
    if (frame.local === 'Envelope' && depth !== 1) throw new XmlRejected(`<${shown(qname)}> inside the envelope`);
    if (frame.local === 'Body' && depth > 1 && !(depth === 2 && root && uri === root.ns && !this.hasBody)) {
      throw new XmlRejected(`<${shown(qname)}> may appear only once, as the Envelope's own Body`);
    }
    if (depth === 1) {
      this.rootSeen = true;
      this.root = { local: frame.local, ns: uri };
    } else if (depth === 2 && root && uri === root.ns && frame.local === 'Body') {
      this.hasBody = true;
    } else if (depth === 3 && root) {
      const parent = this.stack[1];
      if (parent.uri === root.ns && parent.local === 'Body') {
        if (this.bodyElements++ === 0) this.operation = { local: frame.local, ns: uri };
      } else if (parent.uri === root.ns && parent.local === 'Header') {
        for (const [an, av] of attrs) {
          const c = an.indexOf(':');
          if (
            c !== -1 &&
            an.slice(c + 1) === 'mustUnderstand' &&
            this.resolve(an.slice(0, c)) === root.ns &&
            /^\s*(1|true)\s*$/.test(av)
          ) {
            this.mustUnderstand.push({ local: frame.local, ns: uri });
          }
        }
      }
    }
  }

  /**
   * Reads a start tag from its '<': the name, each attribute checked (values as written), the
   * namespaces it declares, into tagName, tagAttrs, tagNs and selfClosing. Returns where it ends.
   */
  private startTag(i: number): number {
    const { xml, len, limits } = this;
    NAME.lastIndex = i + 1;
    const nm = NAME.exec(xml);
    if (!nm)
      throw new XmlRejected(
        i + 1 >= len ? 'the body ends inside a tag' : "malformed start tag ('<' not followed by a name)",
      );
    if (this.stack.length === 0 && this.rootSeen) throw new XmlRejected('more than one root element');
    if (++this.elements > limits.maxElements) throw new XmlRejected(`more than ${limits.maxElements} elements`);
    const qname = nm[0];
    checkName(qname, 'element', limits);
    let p = NAME.lastIndex;
    let ns: Map<string, string> | null = null;
    const attrs: Array<[string, string]> = [];
    const attrNames = new Set<string>();
    this.tagName = qname;
    this.tagAttrs = attrs;
    for (;;) {
      WS.lastIndex = p;
      WS.exec(xml);
      const spaced = WS.lastIndex > p;
      p = WS.lastIndex;
      if (p >= len) throw new XmlRejected(`the body ends inside the tag <${shown(qname)}>`);
      const c = xml.charCodeAt(p);
      if (c === 0x3e || c === 0x2f) {
        if (c === 0x2f && xml.charCodeAt(p + 1) !== 0x3e) throw new XmlRejected(`malformed tag <${shown(qname)}>`);
        this.tagNs = ns;
        this.selfClosing = c === 0x2f;
        return c === 0x2f ? p + 2 : p + 1;
      }
      if (!spaced) throw new XmlRejected(`malformed attributes in <${shown(qname)}>`);
      const vEnd = this.attribute(p, qname);
      const name = this.attrName;
      const value = this.attrValue;
      if (attrs.length >= limits.maxAttributes)
        throw new XmlRejected(`<${shown(qname)}> has more than ${limits.maxAttributes} attributes`);
      if (attrNames.has(name)) throw new XmlRejected(`attribute ${shown(name)} appears twice in <${shown(qname)}>`);
      attrNames.add(name);
      checkName(name, 'attribute', limits);
      // SOAP-encoding multi-references: document/literal never uses them, and node-soap resolves
      // them by merging objects, keyed by the caller's id.
      if (name === 'href')
        throw new XmlRejected(`href references (SOAP encoding) are not accepted; send each value inline`);
      if (name === 'id' && RESERVED.has(decodeValue(value)))
        throw new XmlRejected(`the id '${decodeValue(value).slice(0, 40)}' is not accepted`);
      attrs.push([name, value]);
      if (name === 'xmlns' || name.startsWith('xmlns:')) {
        ns ??= new Map();
        ns.set(name === 'xmlns' ? '' : name.slice(6), value.replace(/&amp;/g, '&'));
      }
      p = vEnd + 1;
    }
  }

  /**
   * One `name="value"` from its name, into attrName and attrValue (as written). Returns where the value's closing quote
   * is.
   */
  private attribute(p: number, qname: string): number {
    const { xml, limits } = this;
    NAME.lastIndex = p;
    const an = NAME.exec(xml);
    if (!an) throw new XmlRejected(`malformed attribute in <${shown(qname)}>`);
    WS.lastIndex = NAME.lastIndex;
    WS.exec(xml);
    if (xml.charCodeAt(WS.lastIndex) !== 0x3d)
      throw new XmlRejected(`attribute ${shown(an[0])} in <${shown(qname)}> has no value`);
    WS.lastIndex++;
    WS.exec(xml);
    const q = xml.charCodeAt(WS.lastIndex);
    if (q !== 0x22 && q !== 0x27) throw new XmlRejected(`attribute ${shown(an[0])} in <${shown(qname)}> is not quoted`);
    const vStart = WS.lastIndex + 1;
    const vEnd = xml.indexOf(q === 0x22 ? '"' : "'", vStart);
    if (vEnd === -1) throw new XmlRejected(`the body ends inside an attribute of <${shown(qname)}>`);
    if (vEnd - vStart > limits.maxTextChars)
      throw new XmlRejected(
        `attribute ${shown(an[0])} of <${shown(qname)}> is longer than ${limits.maxTextChars} characters`,
      );
    const lt2 = xml.indexOf('<', vStart);
    if (lt2 !== -1 && lt2 < vEnd) throw new XmlRejected(`'<' inside attribute ${shown(an[0])} of <${shown(qname)}>`);
    checkEntities(xml, vStart, vEnd);
    this.attrName = an[0];
    this.attrValue = xml.slice(vStart, vEnd);
    return vEnd;
  }
}

/** Scans a decoded request body; throws XmlRejected with a one-line reason. */
export function scanEnvelope(xml: string, limits: GuardLimits): EnvelopeShape {
  if (NOT_XML_CHAR.test(xml))
    throw new XmlRejected('the body holds a character XML does not allow (such as NUL or another control character)');
  return new Scanner(xml, limits).run();
}
