// The sample data refers to nothing that does not exist (issue 11): no URL in it names a host, and
// every ImageUrl is /image.aspx/@{base64 of "Make Model"}, which the service answers with a picture
// naming them. The base64 in the path is hostile input: bounded, validated, escaped.

import fs from 'node:fs';
import { SAMPLE_FILE } from '../../src/app';
import { SAMPLE } from '../helpers/sample';
import { startServer, type TestServer } from '../helpers/server';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const text = (v: unknown): string =>
  typeof v === 'object' && v !== null ? String((v as { CurrentTextValue?: unknown }).CurrentTextValue) : String(v);

test('no URL in the sample data names a host', () => {
  expect(fs.readFileSync(SAMPLE_FILE, 'utf8')).not.toMatch(/[a-z]+:\/\//i);
});

test('every ImageUrl of the sample data is served: an SVG naming the make and model', async () => {
  const withImage = SAMPLE.filter((r) => r.vehicle?.ImageUrl !== undefined);
  expect(withImage.length).toBeGreaterThan(100);
  const seen = new Map<string, string>();
  for (const r of withImage) {
    const url = r.vehicle?.ImageUrl as string;
    const makeModel = `${text(r.vehicle?.CarMake)} ${text(r.vehicle?.CarModel)}`;
    expect(url).toBe(`/image.aspx/@${Buffer.from(makeModel, 'utf8').toString('base64')}`);
    if (seen.has(url)) continue;
    const res = await fetch(server.url + url);
    const body = await res.text();
    seen.set(url, body);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(body).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(body).toContain(`>${text(r.vehicle?.CarMake)}<`);
  }
});

describe('hostile image names', () => {
  const image = async (name: string) => {
    const res = await fetch(`${server.url}/image.aspx/${name}`);
    return {
      status: res.status,
      code: res.headers.get('x-error-code'),
      body: await res.text(),
      type: res.headers.get('content-type'),
    };
  };

  test('markup in the text is escaped, never live', async () => {
    const a = await image(`@${Buffer.from('<script>alert(1)</script> "x" & y').toString('base64')}`);
    expect(a.status).toBe(200);
    expect(a.body).not.toContain('<script');
    expect(a.body).toContain('&lt;script&gt;');
  });

  test.each([
    ['no @', Buffer.from('FORD FOCUS').toString('base64')],
    ['not base64', '@!!!!'],
    ['not canonical base64', '@Rk9SRCBGT0NVUx=='],
    ['not padded', '@Rk9SRCBGT0NVUw'],
    ['empty', '@'],
    ['too long', `@${Buffer.from('A'.repeat(400)).toString('base64')}`],
    ['not UTF-8', `@${Buffer.from([0xfe, 0x41, 0x42]).toString('base64')}`],
    ['a control character', `@${Buffer.from('FORD\u0000FOCUS').toString('base64')}`],
    ['bad percent-encoding', '@%FF%FE'],
  ])('%s is refused with one plain error line', async (_what, name) => {
    const a = await image(name);
    expect(a.status).toBe(400);
    expect(a.type).toBe('text/plain; charset=utf-8');
    expect(a.body).toMatch(new RegExp(`^${a.code}: [^\\n]+\\n$`));
  });

  test("base64 holding '/' (as plain or percent-encoded) is read whole", async () => {
    // '??>' encodes as Pz8/Pg==: a '/' inside the name.
    const name = Buffer.from('A??> B').toString('base64');
    expect(name).toContain('/');
    for (const n of [name, encodeURIComponent(name)]) {
      const a = await image(`@${n}`);
      expect(a.status).toBe(200);
      expect(a.body).toContain('A??&gt;');
    }
  });

  test('a very long path is refused before any decoding', async () => {
    const a = await image(`@${'QUFB'.repeat(4000)}`);
    expect(a.status).toBe(400);
  });
});
