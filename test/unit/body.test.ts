// Reading request bodies: taken at once when they have all arrived, read through events when they
// are still arriving, and refused by the same rules either way.

import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';
import { bodyIfArrived, endIfArrived, readBody } from '../../src/transport/body';

const LIMIT = 1024;

/** Runs fn against a server on a free local port, then closes it. */
async function serving(handler: http.RequestListener, fn: (port: number) => Promise<void>): Promise<void> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    await fn((server.address() as net.AddressInfo).port);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

type Seen = { now: Buffer | null | Error; read: Buffer | Error };

/** A server that, a turn after each request arrives, records what bodyIfArrived and then readBody make of it. */
async function withServer(fn: (port: number, seen: Seen[]) => Promise<void>): Promise<void> {
  const seen: Seen[] = [];
  const handler: http.RequestListener = (req, res) => {
    setImmediate(() => {
      let now: Buffer | null | Error;
      try {
        now = bodyIfArrived(req, LIMIT);
      } catch (e) {
        now = e as Error;
      }
      const done = (read: Buffer | Error) => {
        seen.push({ now, read });
        res.end('ok');
      };
      if (now !== null) done(now);
      else readBody(req, LIMIT).then(done, done);
    });
  };
  await serving(handler, (port) => fn(port, seen));
}

/** Sends raw bytes in the given pieces, pausing between them, and waits for the answer. */
function send(port: number, pieces: Array<string | Buffer>, pauseMs = 0): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let answer = '';
    s.on('data', (d) => {
      answer += d.toString();
      if (answer.endsWith('ok')) {
        s.end();
        resolve(answer);
      }
    });
    s.on('error', reject);
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- it awaits only timers: nothing in it rejects
    s.on('connect', async () => {
      for (const p of pieces) {
        s.write(p);
        if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
      }
    });
  });
}

const head = (length: number, extra = '') => `POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: ${length}${extra}\r\n\r\n`;

describe('bodyIfArrived', () => {
  test('takes a body that came with its headers, without waiting for events', async () => {
    await withServer(async (port, seen) => {
      await send(port, [head(11) + 'a=1&b=two&c']);
      expect(seen).toHaveLength(1);
      expect(Buffer.isBuffer(seen[0].now)).toBe(true);
      expect((seen[0].now as Buffer).toString()).toBe('a=1&b=two&c');
    });
  });

  test('leaves a body still arriving to readBody, which gets all of it', async () => {
    await withServer(async (port, seen) => {
      await send(port, [head(11) + 'a=1&', 'b=two&c'], 50);
      expect(seen[0].now).toBeNull();
      expect((seen[0].read as Buffer).toString()).toBe('a=1&b=two&c');
    });
  });

  test('inflates a gzip body that has arrived, within the limit', async () => {
    const gz = zlib.gzipSync(Buffer.from('RegistrationNumber=AB12CDE'));
    await withServer(async (port, seen) => {
      await send(port, [Buffer.concat([Buffer.from(head(gz.length, '\r\nContent-Encoding: gzip')), gz])]);
      expect((seen[0].now as Buffer).toString()).toBe('RegistrationNumber=AB12CDE');
    });
  });

  test('a gzip body inflating past the limit is refused as too large either way', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(LIMIT * 4, 0x61));
    await withServer(async (port, seen) => {
      await send(port, [Buffer.concat([Buffer.from(head(bomb.length, '\r\nContent-Encoding: gzip')), bomb])]);
      expect((seen[0].now as { code?: string }).code).toBe('PAYLOAD_TOO_LARGE');
    });
  });

  test('leaves a body over the limit to readBody, which refuses it', async () => {
    const big = 'x'.repeat(LIMIT + 10);
    await withServer(async (port, seen) => {
      await send(port, [head(big.length) + big]);
      expect(seen[0].now).toBeNull();
      expect((seen[0].read as { code?: string }).code).toBe('PAYLOAD_TOO_LARGE');
    });
  });

  test('an empty body is an empty buffer', async () => {
    await withServer(async (port, seen) => {
      await send(port, [head(0)]);
      expect((seen[0].now as Buffer).length).toBe(0);
    });
  });
});

describe('endIfArrived', () => {
  test('reads a request without a body to its end before the answer, so nothing is left to hook', async () => {
    const ended: boolean[] = [];
    const handler: http.RequestListener = (req, res) => {
      setImmediate(() => {
        endIfArrived(req);
        // 'end' follows on the next tick, before any promise continuation writes the answer.
        process.nextTick(() => {
          ended.push(req.readableEnded);
          res.end('ok');
        });
      });
    };
    await serving(handler, async (port) => {
      await send(port, ['GET /x HTTP/1.1\r\nHost: t\r\n\r\n']);
    });
    expect(ended).toEqual([true]);
  });

  test('leaves a request whose body is still arriving to be read', async () => {
    const bodies: string[] = [];
    const handler: http.RequestListener = (req, res) => {
      endIfArrived(req);
      void readBody(req, LIMIT).then((b) => {
        bodies.push(b.toString());
        res.end('ok');
      });
    };
    await serving(handler, async (port) => {
      await send(port, [head(7) + 'a=', '1&b=2'], 50);
    });
    expect(bodies).toEqual(['a=1&b=2']);
  });
});
