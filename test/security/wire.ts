// Raw HTTP/1.1 over a TCP socket, for requests a normal client would tidy up: broken bytes, wrong
// lengths, bodies that stop half-way or trickle in, and a look at how the connection ends.

import net from 'node:net';

export interface WireAnswer {
  /** 0 when no status line arrived. */
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
  readonly text: string;
  /** How the exchange ended: a complete response, the server closing or resetting, or our own timeout. */
  readonly ended: 'response' | 'closed' | 'reset' | 'timeout';
  readonly ms: number;
}

export interface WireOptions {
  /** Pause between chunks, ms. */
  readonly gapMs?: number;
  /** Give up after this long (the answer's `ended` is then 'timeout'). */
  readonly timeoutMs?: number;
  /** Half-close our side after the last chunk. */
  readonly endAfterWrite?: boolean;
}

function parseHead(buf: Buffer): { status: number; headers: Record<string, string>; bodyStart: number } | null {
  const end = buf.indexOf('\r\n\r\n');
  if (end === -1) return null;
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0])?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const c = line.indexOf(':');
    if (c > 0) headers[line.slice(0, c).trim().toLowerCase()] = line.slice(c + 1).trim();
  }
  return { status, headers, bodyStart: end + 4 };
}

/** Decodes a chunked body, or returns null while it is incomplete. */
function dechunk(buf: Buffer): Buffer | null {
  const parts: Buffer[] = [];
  let i = 0;
  for (;;) {
    const eol = buf.indexOf('\r\n', i);
    if (eol === -1) return null;
    const size = parseInt(buf.subarray(i, eol).toString('latin1'), 16);
    if (Number.isNaN(size)) return null;
    if (size === 0) return Buffer.concat(parts);
    if (buf.length < eol + 2 + size + 2) return null;
    parts.push(buf.subarray(eol + 2, eol + 2 + size));
    i = eol + 2 + size + 2;
  }
}

/** Sends the chunks as they are (with gaps if asked) and reads one response. */
export function exchange(
  port: number,
  chunks: ReadonlyArray<Buffer | string>,
  opts: WireOptions = {},
): Promise<WireAnswer> {
  const { gapMs = 0, timeoutMs = 10_000, endAfterWrite = false } = opts;
  return new Promise((resolve) => {
    const t0 = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let got = Buffer.alloc(0);
    let settled = false;
    const finish = (ended: WireAnswer['ended']) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const head = parseHead(got);
      let body: Buffer = head ? got.subarray(head.bodyStart) : Buffer.alloc(0);
      if (head?.headers['transfer-encoding'] === 'chunked') body = dechunk(body) ?? body;
      if (head?.headers['content-length'] !== undefined)
        body = body.subarray(0, Number(head.headers['content-length']));
      resolve({
        status: head?.status ?? 0,
        headers: head?.headers ?? {},
        body,
        text: body.toString('utf8'),
        ended,
        ms: Date.now() - t0,
      });
    };
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    socket.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
      const head = parseHead(got);
      if (!head) return;
      // 1xx answers come before the real one.
      if (head.status >= 100 && head.status < 200) {
        got = got.subarray(head.bodyStart);
        return;
      }
      const rest = got.length - head.bodyStart;
      const len = head.headers['content-length'];
      if (len !== undefined && rest >= Number(len)) finish('response');
      else if (head.headers['transfer-encoding'] === 'chunked' && dechunk(got.subarray(head.bodyStart)))
        finish('response');
    });
    socket.on('end', () => finish('closed'));
    socket.on('close', () => finish('closed'));
    socket.on('error', (e: NodeJS.ErrnoException) =>
      finish(e.code === 'ECONNRESET' || e.code === 'EPIPE' ? 'reset' : 'closed'),
    );
    void (async () => {
      for (const c of chunks) {
        if (settled || socket.destroyed) return;
        socket.write(c);
        if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
      }
      if (endAfterWrite && !socket.destroyed) socket.end();
    })();
  });
}

export interface RawRequest {
  readonly method?: string;
  readonly path?: string;
  readonly headers?: Record<string, string | number>;
  readonly body?: Buffer | string;
  /** Leave out Content-Length (for a chunked or a hand-made framing). */
  readonly noLength?: boolean;
}

export function head(req: RawRequest, bodyLength: number): string {
  const headers = { ...(req.headers ?? {}) };
  const lines = [`${req.method ?? 'POST'} ${req.path ?? '/api/reg.asmx'} HTTP/1.1`, 'Connection: close'];
  if (!Object.keys(headers).some((h) => h.toLowerCase() === 'host')) lines.push('Host: 127.0.0.1');
  if (!req.noLength && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length'))
    headers['Content-Length'] = bodyLength;
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  return lines.join('\r\n') + '\r\n\r\n';
}

/** One request, written in one go. */
export function send(port: number, req: RawRequest, opts: WireOptions = {}): Promise<WireAnswer> {
  const body =
    req.body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
  return exchange(port, [Buffer.concat([Buffer.from(head(req, body.length), 'latin1'), body])], opts);
}
