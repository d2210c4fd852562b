// readBody on a hand-driven request stream (issue 17), against the README's Security section:
// MAX_BODY_BYTES after decompression, a declared Content-Length over it refused before reading,
// and "a body refused as too large is still read, and dropped, for up to 256 KiB more or one
// second, so that a client that is still sending sees the 413; past that the connection is closed".

import type http from 'node:http';
import { PassThrough } from 'node:stream';
import zlib from 'node:zlib';
import { LookupError } from '../../src/service/errors';
import { bodyIfArrived, endIfArrived, readBody } from '../../src/transport/body';

const LIMIT = 1024;
const KIB = 1024;

type FakeReq = PassThrough & { headers: Record<string, string>; complete: boolean };
function request(headers: Record<string, string> = {}): FakeReq {
  const s = new PassThrough() as FakeReq;
  s.headers = headers;
  s.complete = false;
  return s;
}
const asReq = (r: FakeReq) => r as unknown as http.IncomingMessage;

/** When the promise settled, in ms after start, and with what. */
async function settle(p: Promise<Buffer>): Promise<{ ms: number; value?: Buffer; error?: LookupError }> {
  const t0 = Date.now();
  try {
    const value = await p;
    return { ms: Date.now() - t0, value };
  } catch (e) {
    return { ms: Date.now() - t0, error: e as LookupError };
  }
}
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('readBody', () => {
  test('a body in pieces within the limit, exactly at it', async () => {
    const r = request();
    const p = readBody(asReq(r), LIMIT);
    r.write(Buffer.alloc(1000, 0x61));
    r.end(Buffer.alloc(24, 0x62));
    const b = await p;
    expect(b.length).toBe(1024);
    expect(b.subarray(999, 1001).toString()).toBe('ab');
  });

  test('an empty body is an empty buffer', async () => {
    const r = request();
    const p = readBody(asReq(r), LIMIT);
    r.end();
    expect((await p).length).toBe(0);
  });

  test('a declared length over the limit is refused at once; one far over it is not drained', async () => {
    const r = request({ 'content-length': String(LIMIT + 300 * KIB) });
    const s = await settle(readBody(asReq(r), LIMIT));
    expect(s.error?.code).toBe('PAYLOAD_TOO_LARGE');
    expect(s.error?.message).toBe('Request body is larger than 1024 bytes');
    expect(s.ms).toBeLessThan(200);
    expect(r.listenerCount('data')).toBe(0);
  });

  test('a declared length somewhat over the limit: what follows is read and dropped before the 413', async () => {
    const r = request({ 'content-length': String(LIMIT + 100) });
    const p = settle(readBody(asReq(r), LIMIT));
    await wait(150);
    r.end(Buffer.alloc(LIMIT + 100));
    const s = await p;
    expect(s.error?.code).toBe('PAYLOAD_TOO_LARGE');
    expect(s.ms).toBeGreaterThanOrEqual(140);
    expect(s.ms).toBeLessThan(900);
    // The drain leaves no listener behind.
    expect(r.listenerCount('end')).toBe(0);
    expect(r.listenerCount('error')).toBe(0);
    expect(r.listenerCount('data')).toBe(0);
  });

  test('a declared length exactly 256 KiB over the limit is still drained; one byte more is not', async () => {
    const at = request({ 'content-length': String(LIMIT + 256 * KIB) });
    const p = settle(readBody(asReq(at), LIMIT));
    await wait(100);
    at.end();
    expect((await p).ms).toBeGreaterThanOrEqual(90);
    const over = request({ 'content-length': String(LIMIT + 256 * KIB + 1) });
    expect((await settle(readBody(asReq(over), LIMIT))).ms).toBeLessThan(90);
  });

  test('a body cut off as it arrives: the rest is dropped until it ends', async () => {
    const r = request();
    const p = settle(readBody(asReq(r), LIMIT));
    r.write(Buffer.alloc(LIMIT + 1));
    await wait(150);
    r.write(Buffer.alloc(10 * KIB));
    r.end();
    const s = await p;
    expect(s.error?.code).toBe('PAYLOAD_TOO_LARGE');
    expect(s.ms).toBeGreaterThanOrEqual(140);
    expect(s.ms).toBeLessThan(900);
  });

  test('at most 256 KiB more is dropped: past that the 413 goes at once, the stream paused', async () => {
    const r = request();
    const p = settle(readBody(asReq(r), LIMIT));
    r.write(Buffer.alloc(LIMIT + 1));
    await wait(50);
    r.write(Buffer.alloc(128 * KIB));
    await wait(50);
    let settled = false;
    void p.then(() => (settled = true));
    await wait(10);
    expect(settled).toBe(false);
    r.write(Buffer.alloc(128 * KIB));
    await wait(20);
    expect(settled).toBe(false);
    r.write(Buffer.alloc(1));
    const s = await p;
    expect(s.error?.code).toBe('PAYLOAD_TOO_LARGE');
    expect(s.ms).toBeLessThan(800);
    expect(r.listenerCount('data')).toBe(0);
    expect(r.listenerCount('close')).toBe(0);
    expect(r.isPaused()).toBe(true);
  });

  test('or for at most one second', async () => {
    const r = request();
    const p = settle(readBody(asReq(r), LIMIT));
    r.write(Buffer.alloc(LIMIT + 1));
    const s = await p;
    expect(s.error?.code).toBe('PAYLOAD_TOO_LARGE');
    expect(s.ms).toBeGreaterThanOrEqual(900);
    expect(s.ms).toBeLessThan(1600);
    r.destroy();
  });

  test('a drain ends when the stream is closed or fails', async () => {
    const closed = request();
    const p = settle(readBody(asReq(closed), LIMIT));
    closed.write(Buffer.alloc(LIMIT + 1));
    await wait(50);
    closed.destroy();
    expect((await p).ms).toBeLessThan(600);
    const failed = request();
    const q = settle(readBody(asReq(failed), LIMIT));
    failed.write(Buffer.alloc(LIMIT + 1));
    await wait(50);
    failed.emit('error', new Error('reset'));
    const s = await q;
    expect(s.error?.code).toBe('PAYLOAD_TOO_LARGE');
    expect(s.ms).toBeLessThan(600);
  });

  test('a refused request already complete or destroyed is not waited for', async () => {
    const done = request({ 'content-length': String(LIMIT + 10) });
    done.complete = true;
    expect((await settle(readBody(asReq(done), LIMIT))).ms).toBeLessThan(200);
    const gone = request({ 'content-length': String(LIMIT + 10) });
    gone.destroy();
    expect((await settle(readBody(asReq(gone), LIMIT))).ms).toBeLessThan(200);
  });

  test('a read error and an abort are MALFORMED_REQUEST, at once, the stream paused', async () => {
    const r = request();
    const p = settle(readBody(asReq(r), LIMIT));
    r.write('abc');
    r.emit('error', new Error('boom'));
    const s = await p;
    expect(`${s.error?.code}: ${s.error?.message}`).toBe('MALFORMED_REQUEST: The request body could not be read');
    expect(s.ms).toBeLessThan(200);
    expect(r.isPaused()).toBe(true);
    expect(r.listenerCount('data')).toBe(0);
    const a = request();
    const q = settle(readBody(asReq(a), LIMIT));
    a.emit('aborted');
    a.end('late');
    const t = await q;
    expect(`${t.error?.code}: ${t.error?.message}`).toBe('MALFORMED_REQUEST: The request was aborted');
  });

  test('an unsupported Content-Encoding is 415 before reading', async () => {
    const r = request({ 'content-encoding': 'compress', 'content-length': '10' });
    const s = await settle(readBody(asReq(r), LIMIT));
    expect(s.error?.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(s.ms).toBeLessThan(200);
  });

  test('gzip and deflate are inflated; past the limit once inflated is 413; a broken one MALFORMED_REQUEST naming the coding', async () => {
    for (const [coding, pack] of [
      ['gzip', zlib.gzipSync],
      ['deflate', zlib.deflateSync],
    ] as const) {
      const ok = request({ 'content-encoding': coding });
      const p = readBody(asReq(ok), LIMIT);
      ok.end(pack(Buffer.from('a'.repeat(LIMIT))));
      expect((await p).toString()).toBe('a'.repeat(LIMIT));
      const big = request({ 'content-encoding': coding });
      const q = settle(readBody(asReq(big), LIMIT));
      big.end(pack(Buffer.from('a'.repeat(LIMIT + 1))));
      expect((await q).error?.code).toBe('PAYLOAD_TOO_LARGE');
      const bad = request({ 'content-encoding': coding });
      const b = settle(readBody(asReq(bad), LIMIT));
      bad.end(Buffer.from('not compressed'));
      expect((await b).error?.message).toBe(`The ${coding} body could not be decompressed`);
    }
  });

  test('the limit counts the inflated bytes, not the sent ones', async () => {
    const r = request({ 'content-encoding': 'gzip' });
    const p = settle(readBody(asReq(r), 100));
    r.end(zlib.gzipSync(Buffer.alloc(50)));
    expect((await p).value?.length).toBe(50);
  });
});

describe('bodyIfArrived and endIfArrived, on a stream in each state', () => {
  function arrived(body: Buffer | string, headers: Record<string, string> = {}): FakeReq {
    const r = request(headers);
    r.end(body);
    r.complete = true;
    return r;
  }

  test('a complete identity body is taken at once', () => {
    expect(bodyIfArrived(asReq(arrived('hello')), LIMIT)?.toString()).toBe('hello');
  });

  test('not complete, flowing, or over the limit while buffered: null', () => {
    const r = request();
    r.write('x');
    expect(bodyIfArrived(asReq(r), LIMIT)).toBeNull();
    const big = arrived(Buffer.alloc(LIMIT + 1));
    expect(bodyIfArrived(asReq(big), LIMIT)).toBeNull();
    const at = arrived(Buffer.alloc(LIMIT));
    expect(bodyIfArrived(asReq(at), LIMIT)?.length).toBe(LIMIT);
    const flowing = arrived('abc');
    flowing.on('data', () => undefined);
    expect(bodyIfArrived(asReq(flowing), LIMIT)).toBeNull();
  });

  test('headers that refuse it (declared too large, unknown coding): null, left to readBody', () => {
    expect(bodyIfArrived(asReq(arrived('abc', { 'content-length': String(LIMIT + 1) })), LIMIT)).toBeNull();
    expect(bodyIfArrived(asReq(arrived('abc', { 'content-encoding': 'br' })), LIMIT)).toBeNull();
  });

  test('a compressed body is inflated; a broken one throws', () => {
    expect(
      bodyIfArrived(
        asReq(arrived(zlib.gzipSync(Buffer.from('zip')), { 'content-encoding': 'gzip' })),
        LIMIT,
      )?.toString(),
    ).toBe('zip');
    expect(() => bodyIfArrived(asReq(arrived('zip', { 'content-encoding': 'deflate' })), LIMIT)).toThrow(
      'The deflate body could not be decompressed',
    );
  });

  test('endIfArrived reads a complete, empty request to its end; leaves others alone', async () => {
    const empty = arrived('');
    endIfArrived(asReq(empty));
    await wait(5);
    expect(empty.readableEnded).toBe(true);
    const withBody = arrived('abc');
    endIfArrived(asReq(withBody));
    await wait(5);
    expect(withBody.readableEnded).toBe(false);
    const open = request();
    endIfArrived(asReq(open));
    await wait(5);
    expect(open.readableEnded).toBe(false);
  });
});
