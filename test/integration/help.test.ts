// The help pages as an integrator uses them: the service page lists what the WSDL declares; an
// operation page's sample messages, filled with a README demo plate, are answered, and the answer
// has the shape the sample shows; the test form posts to the operation; ?disco points at the WSDL
// and the SOAP addresses; an unknown operation is a 404 page; the headers are the README's.

import { createHash } from 'node:crypto';
import { startServer, type TestServer } from '../helpers/server';
import {
  demoValues,
  fillEnvelope,
  fillQuery,
  isSubsequence,
  sampleOf,
  shapeOf,
  unescapeHtml,
  wsdlOperations,
  WSDL_TEXT,
  type HttpMessage,
  type Shape,
} from '../helpers/helppages';
import { readmeSection } from '../helpers/readme';
import { fetchAnswer } from '../helpers/call';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => {
  await srv.close();
});

const get = (path: string) => fetchAnswer(srv.url, path);

const XSI = 'http://www.w3.org/2001/XMLSchema-instance';

describe('the service page', () => {
  test('lists every operation the WSDL declares, each linking to its page with its parameters and result', async () => {
    const { status, headers, body: text } = await get('/api/reg.asmx');
    expect(status).toBe(200);
    expect(headers.get('content-type')).toBe('text/html; charset=utf-8');
    const ops = wsdlOperations();
    expect(ops.length).toBe(31);
    for (const op of ops) {
      const line = new RegExp(`<li><a href="\\?op=${op}">${op}</a>: ([^\\n]*)</li>`).exec(text);
      expect(line).not.toBeNull();
      expect(line![1]).toContain('<code>RegistrationNumber</code>');
      expect(line![1]).toMatch(op === 'UKMOT' ? /Returns <code>UKMOTData<\/code>/ : /Returns <code>Vehicle<\/code>/);
    }
    expect(text).toContain('<code>http://regcheck.org.uk</code>');
  });

  test("links to the WSDL, the DISCO document and the JSON API's OpenAPI document at the address the caller used", async () => {
    const { body: text } = await get('/api/reg.asmx');
    expect(text).toContain(`href="${srv.url}/api/reg.asmx?WSDL"`);
    expect(text).toContain(`href="${srv.url}/api/reg.asmx?disco"`);
    expect(text).toContain(`href="${srv.url}/api/json.aspx/openapi.json"`);
  });

  test("?WSDL is still the WSDL file byte for byte, with this server's address in the ports", async () => {
    const { headers, body: text } = await get('/api/reg.asmx?WSDL');
    expect(headers.get('content-type')).toBe('text/xml; charset=utf-8');
    expect(text).toBe(WSDL_TEXT.split('http://localhost/api/reg.asmx').join(`${srv.url}/api/reg.asmx`));
  });
});

describe('an operation page', () => {
  test.each(['CheckUSA', 'UKMOT'])(
    '%s: says what it does, with a labelled field per WSDL parameter in a form that POSTs to the operation',
    async (op) => {
      const { status, body: text } = await get(`/api/reg.asmx?op=${op}`);
      expect(status).toBe(200);
      expect(text).toContain(`<h2>${op}</h2>`);
      const doc = new RegExp(`<wsdl:operation name="${op}">\\s*<wsdl:documentation[^>]*>([^<]+)<`).exec(WSDL_TEXT)![1];
      expect(text).toContain(
        op === 'UKMOT'
          ? 'MOT tests of a UK registration'
          : `${doc}: looks up a vehicle by its registration and <code>State</code>`,
      );
      const form = /<form method="post" action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(text);
      expect(form![1]).toBe(`/api/reg.asmx/${op}`);
      const element = new RegExp(`<s:element name="${op}">[\\s\\S]*?</s:element>`).exec(WSDL_TEXT)![0];
      const params = [...element.matchAll(/name="([^"]+)" type/g)].map((m) => m[1]);
      const inputs = [...form![2].matchAll(/<input id="([^"]+)" name="([^"]+)"/g)].map((m) => ({
        id: m[1],
        name: m[2],
      }));
      expect(inputs.map((i) => i.name)).toEqual(params);
      for (const i of inputs) expect(form![2]).toContain(`<label for="${i.id}">`);
    },
  );

  test('the test form, sent as a browser sends it, answers with the vehicle', async () => {
    const { body: text } = await get('/api/reg.asmx?op=CheckUSA');
    const names = [...text.matchAll(/<input id="[^"]+" name="([^"]+)"/g)].map((m) => m[1]);
    const values = demoValues('CheckUSA');
    const body = new URLSearchParams(names.map((n): [string, string] => [n, values[n] ?? ''])).toString();
    const res = await fetch(`${srv.url}/api/reg.asmx/CheckUSA`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body,
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/<Vehicle [^>]*>[\s\S]*<vehicleJson>[\s\S]*<\/Vehicle>$/);
  });

  test('headings go h1, h2, h3 without a skip; the page sets lang, loads nothing from elsewhere and runs no script', async () => {
    for (const path of ['/api/reg.asmx', '/api/reg.asmx?op=Check', '/api/reg.asmx?op=Nope']) {
      const { body: text } = await get(path);
      expect(text).toMatch(/^<!DOCTYPE html>\n<html lang="en">/);
      const levels = [...text.matchAll(/<h([1-6])[\s>]/g)].map((m) => Number(m[1]));
      expect(levels[0]).toBe(1);
      levels.forEach((l, i) => i > 0 && expect(l).toBeLessThanOrEqual(levels[i - 1] + 1));
      expect(text).not.toMatch(/<script|<link|<img|<iframe|\ssrc=|\sstyle=|\son[a-z]+=/i);
    }
  });
});

describe('sample messages', () => {
  /** Sends a sample request, its placeholders filled with the README's demo plate for the operation. */
  async function sendSample(op: string, sample: HttpMessage): Promise<Response> {
    const values = demoValues(op);
    const [method, target] = sample.startLine.split(' ');
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(sample.headers)) if (k !== 'Host' && k !== 'Content-Length') headers[k] = v;
    expect(sample.headers.Host).toBe(new URL(srv.url).host);
    if (method === 'GET') {
      const [p, q] = target.split('?');
      return fetch(`${srv.url}${p}?${fillQuery(q, values)}`, { headers });
    }
    const body =
      sample.headers['Content-Type'] === 'application/x-www-form-urlencoded'
        ? fillQuery(sample.body, values)
        : fillEnvelope(sample.body, values);
    return fetch(srv.url + target, { method, headers, body });
  }

  /**
   * Every element the service sent is where the sample shows one, in the sample's order; texts where the sample says
   * integer are integers.
   */
  function expectShapeFollows(real: Shape, sample: Shape): void {
    for (const p of real.paths) expect(sample.paths).toContain(p);
    for (const [p, instances] of real.children) {
      const shown = sample.children.get(p)![0];
      for (const seq of instances) expect(isSubsequence(seq, shown)).toBe(true);
    }
    for (const [p, texts] of real.texts) {
      if (sample.texts.get(p)?.[0] === 'integer') for (const t of texts) expect(t).toMatch(/^-?\d+$/);
    }
  }

  const pages = new Map<string, string>();
  async function page(op: string): Promise<string> {
    if (!pages.has(op)) pages.set(op, (await get(`/api/reg.asmx?op=${op}`)).body);
    return pages.get(op)!;
  }

  const transports = ['soap11', 'soap12', 'get', 'post'] as const;

  test.each(transports.flatMap((t) => ['Check', 'CheckUSA', 'UKMOT'].map((op) => [op, t] as const)))(
    '%s over %s: the filled-in sample request is answered, and the answer has exactly the elements of the sample answer, in its order',
    async (op, t) => {
      const text = await page(op);
      const res = await sendSample(op, sampleOf(text, `${t}-request`));
      const answer = sampleOf(text, `${t}-response`);
      expect(`HTTP/1.1 ${res.status} OK`).toBe(answer.startLine);
      expect(res.headers.get('content-type')).toBe(answer.headers['Content-Type']);
      const real = await shapeOf(await res.text());
      const shown = await shapeOf(answer.body);
      // These demo records hold every field, so every element the sample shows is sent too.
      expect([...real.paths].sort()).toEqual([...shown.paths].sort());
      expectShapeFollows(real, shown);
    },
  );

  test.each(wsdlOperations())(
    '%s: every sample request is answered with the demo plate, in the shape its sample answer shows',
    async (op) => {
      const text = await page(op);
      for (const t of transports) {
        const res = await sendSample(op, sampleOf(text, `${t}-request`));
        expect(res.status).toBe(200);
        expectShapeFollows(await shapeOf(await res.text()), await shapeOf(sampleOf(text, `${t}-response`).body));
      }
    },
  );

  test('the samples name the SOAPAction and content types the WSDL and SOAP versions require', async () => {
    const text = await page('CheckUSA');
    expect(sampleOf(text, 'soap11-request').headers.SOAPAction).toBe('"http://regcheck.org.uk/CheckUSA"');
    expect(WSDL_TEXT).toContain('soapAction="http://regcheck.org.uk/CheckUSA"');
    expect(sampleOf(text, 'soap11-request').headers['Content-Type']).toBe('text/xml; charset=utf-8');
    expect(sampleOf(text, 'soap12-request').headers['Content-Type']).toBe('application/soap+xml; charset=utf-8');
    expect(sampleOf(text, 'soap12-request').body).toContain(
      '<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope">',
    );
    expect(sampleOf(text, 'get-request').startLine).toBe(
      'GET /api/reg.asmx/CheckUSA?RegistrationNumber=string&State=string&username=string HTTP/1.1',
    );
    expect(sampleOf(text, 'post-request').body).toBe('RegistrationNumber=string&State=string&username=string');
  });

  test('a sample answer shows the integer fields as integer and the lists twice, as ASMX does', async () => {
    const check = sampleOf(await page('Check'), 'get-response').body;
    expect(check).toContain('<RegistrationYear>integer</RegistrationYear>');
    expect(check).toContain('<CurrentValue>integer</CurrentValue>');
    const mot = sampleOf(await page('UKMOT'), 'soap11-response').body;
    expect(mot.match(/<UKTest>/g)).toHaveLength(2);
    expect(mot).toContain(`xmlns:xsi="${XSI}"`);
  });
});

describe('?disco', () => {
  test("is a DISCO document pointing at the WSDL and at both SOAP bindings' address", async () => {
    const { status, headers, body: text } = await get('/api/reg.asmx?disco');
    expect(status).toBe(200);
    expect(headers.get('content-type')).toBe('text/xml; charset=utf-8');
    const doc = await shapeOf(text);
    expect(doc.paths).toContain(
      '/{http://schemas.xmlsoap.org/disco/}discovery/{http://schemas.xmlsoap.org/disco/scl/}contractRef',
    );
    const address = `${srv.url}/api/reg.asmx`;
    expect(text).toContain(
      `<contractRef ref="${address}?wsdl" docRef="${address}" xmlns="http://schemas.xmlsoap.org/disco/scl/" />`,
    );
    const soaps = [
      ...text.matchAll(
        /<soap address="([^"]+)" xmlns:(q\d)="([^"]+)" binding="(q\d):([^"]+)" xmlns="http:\/\/schemas.xmlsoap.org\/disco\/soap\/" \/>/g,
      ),
    ];
    expect(soaps.map((m) => [m[1], m[3], m[2] === m[4], m[5]])).toEqual([
      [address, 'http://regcheck.org.uk', true, 'RegSoap'],
      [address, 'http://regcheck.org.uk', true, 'RegSoap12'],
    ]);
    expect(WSDL_TEXT).toContain('<wsdl:binding name="RegSoap" type="tns:RegSoap">');
    expect(WSDL_TEXT).toContain('<wsdl:binding name="RegSoap12" type="tns:RegSoap">');
    const wsdl = await fetch(unescapeHtml(/contractRef ref="([^"]+)"/.exec(text)![1]));
    expect(await wsdl.text()).toContain('<wsdl:definitions');
  });
});

describe('an unknown operation', () => {
  test('is a 404 page that offers the operation a case-insensitive match finds', async () => {
    const wrongCase = await get('/api/reg.asmx?op=checkusa');
    expect(wrongCase.status).toBe(404);
    expect(wrongCase.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(wrongCase.body).toContain('<a href="?op=CheckUSA">CheckUSA</a>');
    const none = await get('/api/reg.asmx?op=NoSuchThing');
    expect(none.status).toBe(404);
    expect(none.body).toContain('Unknown operation');
    expect(none.body).not.toContain('?op=Check');
  });
});

describe('headers', () => {
  test("every page carries the Content-Security-Policy the README states, whose style hash is the page's own style sheet, and nosniff", async () => {
    const stated = /`Content-Security-Policy: ([^`]+)`/.exec(readmeSection('Help pages'));
    expect(stated).not.toBeNull();
    for (const path of ['/api/reg.asmx', '/api/reg.asmx?op=UKMOT', '/api/reg.asmx?op=Nope']) {
      const { headers, body: text } = await get(path);
      expect(headers.get('content-security-policy')).toBe(stated![1]);
      expect(headers.get('x-content-type-options')).toBe('nosniff');
      const styles = [...text.matchAll(/<style>([\s\S]*?)<\/style>/g)];
      expect(styles).toHaveLength(1);
      expect(stated![1]).toContain(`style-src 'sha256-${createHash('sha256').update(styles[0][1]).digest('base64')}'`);
    }
    expect((await get('/api/reg.asmx?disco')).headers.get('x-content-type-options')).toBe('nosniff');
  });

  test('behind PUBLIC_URL the links, the samples and DISCO name the public address', async () => {
    const pub = await startServer({ PUBLIC_URL: 'https://reg.example.com' });
    try {
      const svc = await (await fetch(`${pub.url}/api/reg.asmx`)).text();
      expect(svc).toContain('href="https://reg.example.com/api/reg.asmx?WSDL"');
      expect(svc).toContain('href="https://reg.example.com/api/json.aspx/openapi.json"');
      const op = await (await fetch(`${pub.url}/api/reg.asmx?op=Check`)).text();
      expect(sampleOf(op, 'soap11-request').headers.Host).toBe('reg.example.com');
      const disco = await (await fetch(`${pub.url}/api/reg.asmx?disco`)).text();
      expect(disco).toContain('ref="https://reg.example.com/api/reg.asmx?wsdl"');
    } finally {
      await pub.close();
    }
  });
});
