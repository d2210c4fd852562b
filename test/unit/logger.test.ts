// The access log: one JSON line per request, with its id, in the same stream as the other log
// lines, written once per event-loop turn; nothing at all when the level is below info.

import { Writable } from 'node:stream';
import winston from 'winston';
import { createLogger, logAccess, textLine } from '../../src/ops/logger';

const record = {
  id: 'req-1',
  client: '192.0.2.1',
  method: 'GET',
  path: '/api/reg.asmx/Check',
  transport: 'get',
  operation: 'Check',
  outcome: 'VEHICLE_NOT_FOUND',
  status: 404,
  ms: 1.5,
  caller: 'sha256:3f2a9c1b7e4d',
};
const turn = () => new Promise((r) => setImmediate(r));

/** Starts collecting what the process writes to stdout (instead of writing it). */
function captureStdout(): { writes: string[]; restore(): void } {
  const writes: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation(((chunk: string) => {
    writes.push(String(chunk));
    return true;
  }) as typeof process.stdout.write);
  return { writes, restore: () => spy.mockRestore() };
}

/** What the process writes to stdout while fn runs and in the two turns after, one entry per write. */
async function stdoutOf(fn: () => void | Promise<void>): Promise<string[]> {
  const out = captureStdout();
  try {
    await fn();
    await turn();
    await turn();
  } finally {
    out.restore();
  }
  return out.writes;
}

test('an access line is one JSON object per request, batched with the other lines of the turn', async () => {
  const writes = await stdoutOf(() => {
    const logger = createLogger('info', 'json');
    logAccess(logger, record);
    logAccess(logger, { ...record, id: 'req-2', status: 200, outcome: 'ok', caller: '-' });
    logger.warn('something to say', { detail: 1 });
  });
  const lines = writes
    .join('')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
  expect(lines[0]).toMatchObject({
    level: 'info',
    message: 'request',
    id: 'req-1',
    client: '192.0.2.1',
    status: 404,
    outcome: 'VEHICLE_NOT_FOUND',
    path: '/api/reg.asmx/Check',
    caller: 'sha256:3f2a9c1b7e4d',
  });
  expect(lines[1]).toMatchObject({ id: 'req-2', status: 200, outcome: 'ok' });
  expect(lines[1]).toMatchObject({ caller: '-' });
  for (const l of lines) expect(l).not.toHaveProperty('username');
  expect(lines[2]).toMatchObject({ level: 'warn', message: 'something to say', detail: 1 });
  for (const l of lines) expect(Date.parse(l.timestamp)).not.toBeNaN();
  expect(writes.length).toBeLessThanOrEqual(2);
});

test('below info, or silent, no access line is written', async () => {
  const writes = await stdoutOf(() => {
    logAccess(createLogger('warn', 'json'), record);
    logAccess(createLogger('silent', 'json'), record);
  });
  expect(writes).toEqual([]);
});

test('LOG_FORMAT=text: one line of key=value, values with spaces, quotes or controls quoted and escaped', async () => {
  const writes = await stdoutOf(() => {
    const logger = createLogger('info', 'text');
    logAccess(logger, { ...record, path: 'a b\n"c"\u2028' });
    logger.warn('disk nearly full', { free: 12, where: '/var/lib' });
  });
  const lines = writes
    .join('')
    .split('\n')
    .filter((l) => l !== '');
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(
    /^\d{4}-\d\d-\d\dT[\d:.]+Z info request id=req-1 client=192\.0\.2\.1 method=GET path="a b\\n\\"c\\"\\u2028" transport=get operation=Check outcome=VEHICLE_NOT_FOUND status=404 ms=1\.5 caller=sha256:3f2a9c1b7e4d$/,
  );
  expect(lines[1]).toMatch(/^\S+Z warn disk nearly full free=12 where=\/var\/lib$/);
});

test('every logger of the process shares one buffer: the lines of a turn, whichever logger wrote them, leave in one write, in order', async () => {
  const writes = await stdoutOf(() => {
    const a = createLogger('info', 'json');
    const b = createLogger('info', 'text');
    logAccess(a, record);
    logAccess(b, { ...record, id: 'req-2' });
    logAccess(a, { ...record, id: 'req-3' });
  });
  expect(writes).toHaveLength(1);
  expect(
    writes[0]
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => /req-\d/.exec(l)?.[0]),
  ).toEqual(['req-1', 'req-2', 'req-3']);
});

test('a line logged just before the process exits is written, not lost with the buffer', () => {
  jest.isolateModules(() => {
    const before = new Set(process.listeners('exit'));
    const fresh = require('../../src/ops/logger') as typeof import('../../src/ops/logger');
    const logger = fresh.createLogger('info', 'json');
    const added = process.listeners('exit').filter((l) => !before.has(l));
    const { writes, restore } = captureStdout();
    try {
      fresh.logAccess(logger, { ...record, id: 'last-words' });
      expect(writes).toEqual([]); // still buffered for the end of the turn
      expect(added).toHaveLength(1);
      added[0].call(process, 0); // what process.exit() runs, in the same turn
      expect(writes.join('')).toContain('"id":"last-words"');
    } finally {
      restore();
      for (const l of added) process.off('exit', l);
    }
  });
});

test('README: health, readiness and metrics requests are logged at debug, so at info they are not', async () => {
  const atInfo = await stdoutOf(() => logAccess(createLogger('info', 'json'), record, 'debug'));
  expect(atInfo).toEqual([]);
  const atDebug = await stdoutOf(() => logAccess(createLogger('debug', 'json'), record, 'debug'));
  expect(JSON.parse(atDebug.join(''))).toMatchObject({ level: 'debug', message: 'request', id: 'req-1' });
});

test('LOG_LEVEL=silent: not even an error is written', async () => {
  const writes = await stdoutOf(() => {
    const logger = createLogger('silent', 'json');
    logger.error('the store is failing', { error: 'x' });
    logger.warn('w');
    logAccess(logger, record);
  });
  expect(writes).toEqual([]);
});

test('JSON lines: DEL, C1 controls and the Unicode line separators are written as \\uXXXX (four hex digits), as C0 ones are', async () => {
  const writes = await stdoutOf(() =>
    logAccess(createLogger('info', 'json'), { ...record, path: 'a\u0001b\u007fc\u0085d\u2028e' }),
  );
  const line = writes.join('');
  expect(line).toContain('"path":"a\\u0001b\\u007fc\\u0085d\\u2028e"');
  expect(JSON.parse(line).path).toBe('a\u0001b\u007fc\u0085d\u2028e');
});

test('JSON lines: quotes, backslashes, non-ASCII text and odd numbers read back exactly as given; ms to the microsecond; absent fields left out', async () => {
  const tricky = {
    ...record,
    operation: 'he said "hi" \\ o\'brien é 漢字 😀',
    path: '/api/reg.asmx/Check"}',
    client: '::ffff:192.0.2.1',
    ms: 2.3456789,
    sandbox: true,
    source: undefined,
  };
  const writes = await stdoutOf(() => {
    const logger = createLogger('info', 'json');
    logAccess(logger, tricky);
    logAccess(logger, { ...record, ms: NaN, status: 500 });
  });
  const lines = writes.join('').split('\n');
  expect(lines).toHaveLength(3);
  const first = JSON.parse(lines[0]) as Record<string, unknown>;
  expect(first).toEqual({
    level: 'info',
    message: 'request',
    timestamp: first.timestamp,
    ...tricky,
    ms: 2.346,
    source: undefined,
  });
  expect(Object.keys(first)).toEqual([
    'level',
    'message',
    'timestamp',
    'id',
    'client',
    'method',
    'path',
    'transport',
    'operation',
    'outcome',
    'status',
    'ms',
    'caller',
    'sandbox',
  ]);
  // As JSON.stringify writes a number it cannot represent.
  expect(JSON.parse(lines[1])).toMatchObject({ ms: null, status: 500 });
  expect(lines[2]).toBe('');
});

test('an access line from a logger made elsewhere (winston directly) still carries every field', () => {
  const lines: string[] = [];
  const logger = winston.createLogger({
    level: 'info',
    format: winston.format.json(),
    transports: [
      new winston.transports.Stream({ stream: new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }) }),
    ],
  });
  logAccess(logger, record);
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0])).toEqual({ level: 'info', message: 'request', ...record });
});

describe('LOG_FORMAT=text values (README: "values with spaces or quotes in double quotes")', () => {
  const line = (fields: Record<string, unknown>) => textLine('2026-11-23T12:00:00.000Z', 'info', 'm', fields);

  test('plain printable ASCII bare; a space anywhere, a quote, an equals sign, a backslash or anything else quoted', () => {
    expect(line({ a: 'demo', b: '/api/reg.asmx/Check', c: '203.0.113.7' })).toBe(
      '2026-11-23T12:00:00.000Z info m a=demo b=/api/reg.asmx/Check c=203.0.113.7',
    );
    expect(line({ a: 'New York' })).toBe('2026-11-23T12:00:00.000Z info m a="New York"');
    expect(line({ a: ' lead' })).toBe('2026-11-23T12:00:00.000Z info m a=" lead"');
    expect(line({ a: 'trail ' })).toBe('2026-11-23T12:00:00.000Z info m a="trail "');
    expect(line({ a: 'k=v' })).toBe('2026-11-23T12:00:00.000Z info m a="k=v"');
    expect(line({ a: 'say"hi' })).toBe('2026-11-23T12:00:00.000Z info m a="say\\"hi"');
    expect(line({ a: 'C:\\x' })).toBe('2026-11-23T12:00:00.000Z info m a="C:\\\\x"');
    expect(line({ a: 'Zürich' })).toBe('2026-11-23T12:00:00.000Z info m a="Zürich"');
    expect(line({ a: '' })).toBe('2026-11-23T12:00:00.000Z info m a=""');
    expect(line({ a: 'x\u007fy' })).toBe('2026-11-23T12:00:00.000Z info m a="x\\u007fy"');
  });

  test('a message made only of control characters is escaped too', () => {
    expect(textLine('2026-11-23T12:00:00.000Z', 'warn', '\u0085', {})).toBe('2026-11-23T12:00:00.000Z warn \\u0085');
    expect(textLine('2026-11-23T12:00:00.000Z', 'warn', '\u2028\u007f', {})).toBe(
      '2026-11-23T12:00:00.000Z warn \\u2028\\u007f',
    );
  });

  test('numbers and booleans as JavaScript writes them (NaN and Infinity too); objects as quoted JSON; absent fields left out', () => {
    expect(line({ ms: 0.84, status: 200, n: NaN, big: Infinity, ok: true, no: false })).toBe(
      '2026-11-23T12:00:00.000Z info m ms=0.84 status=200 n=NaN big=Infinity ok=true no=false',
    );
    expect(line({ o: { x: 1 }, l: [1, 2] })).toBe('2026-11-23T12:00:00.000Z info m o="{\\"x\\":1}" l=[1,2]');
    expect(line({ a: undefined, b: 1, c: undefined })).toBe('2026-11-23T12:00:00.000Z info m b=1');
    expect(line({ f: Symbol('s') })).toBe('2026-11-23T12:00:00.000Z info m f=Symbol(s)');
  });
});
