// If node-soap itself fails on a request the guard let through, the caller still gets one of our
// faults (INTERNAL_ERROR), never node-soap's own text or stack, and the server keeps serving.

import { WSDL } from 'soap';
import { call } from '../helpers/call';
import { envelope, soapHeaders } from '../helpers/soap';
import { startServer, type TestServer } from '../helpers/server';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(() => srv.close());

test.each(['soap11', 'soap12'] as const)(
  'a failure inside node-soap becomes an INTERNAL_ERROR fault (%s)',
  async (t) => {
    const spy = jest.spyOn(WSDL.prototype, 'xmlToObject').mockImplementationOnce(() => {
      throw new TypeError(
        'Cannot read properties of undefined (reading description) at /srv/node_modules/soap/lib/wsdl/index.js:301',
      );
    });
    try {
      // A comment in the envelope: node-soap serves it (a plain one is answered without node-soap).
      const version = t === 'soap11' ? '1.1' : '1.2';
      const sent = await fetch(`${srv.url}/api/reg.asmx`, {
        method: 'POST',
        headers: soapHeaders(version, 'Check'),
        body: envelope(version, 'Check', { RegistrationNumber: 'RG11ABC', username: 'demo' }).replace(
          '<username>',
          '<!-- x --><username>',
        ),
      });
      const res = { status: sent.status, headers: sent.headers, body: await sent.text() };
      expect(res.status).toBe(500);
      expect(res.headers.get('content-type')).toBe(
        t === 'soap11' ? 'text/xml; charset=utf-8' : 'application/soap+xml; charset=utf-8',
      );
      expect(res.body).toContain('<ErrorCode xmlns="http://regcheck.org.uk">INTERNAL_ERROR</ErrorCode>');
      expect(res.body).not.toMatch(/node_modules|TypeError|description/);
      expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(res.body));
    } finally {
      spy.mockRestore();
    }
    const after = await call(srv.url, t, 'Check', { RegistrationNumber: 'RG11ABC', username: 'demo' });
    expect(after.status).toBe(200);
  },
);
