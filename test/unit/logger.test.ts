// The access log: one JSON line per request, with its id, in the same stream as the other log
// lines, written once per event-loop turn; nothing at all when the level is below info.

import { createLogger, logAccess } from '../../src/ops/logger';

const record = { id: 'req-1', client: '192.0.2.1', method: 'GET', path: '/api/reg.asmx/Check', transport: 'get', operation: 'Check', outcome: 'VEHICLE_NOT_FOUND', status: 404, ms: 1.5, username: 'demo' };
const turn = () => new Promise((r) => setImmediate(r));

test('an access line is one JSON object per request, batched with the other lines of the turn', async () => {
  const writes: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation(((chunk: string) => {
    writes.push(String(chunk));
    return true;
  }) as typeof process.stdout.write);
  try {
    const logger = createLogger('info', 'json');
    logAccess(logger, record);
    logAccess(logger, { ...record, id: 'req-2', status: 200, outcome: 'ok', username: undefined });
    logger.warn('something to say', { detail: 1 });
    await turn();
    await turn();
  } finally {
    spy.mockRestore();
  }
  const lines = writes.join('').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
  expect(lines[0]).toMatchObject({ level: 'info', message: 'request', id: 'req-1', client: '192.0.2.1', status: 404, outcome: 'VEHICLE_NOT_FOUND', path: '/api/reg.asmx/Check', username: 'demo' });
  expect(lines[1]).toMatchObject({ id: 'req-2', status: 200, outcome: 'ok' });
  expect(lines[1]).not.toHaveProperty('username');
  expect(lines[2]).toMatchObject({ level: 'warn', message: 'something to say', detail: 1 });
  for (const l of lines) expect(Date.parse(l.timestamp)).not.toBeNaN();
  expect(writes.length).toBeLessThanOrEqual(2);
});

test('below info, or silent, no access line is written', async () => {
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((() => true) as typeof process.stdout.write);
  try {
    logAccess(createLogger('warn', 'json'), record);
    logAccess(createLogger('silent', 'json'), record);
    await turn();
    expect(spy).not.toHaveBeenCalled();
  } finally {
    spy.mockRestore();
  }
});

test('LOG_FORMAT=text: one line of key=value, values with spaces, quotes or controls quoted and escaped', async () => {
  const writes: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation(((chunk: string) => {
    writes.push(String(chunk));
    return true;
  }) as typeof process.stdout.write);
  try {
    const logger = createLogger('info', 'text');
    logAccess(logger, { ...record, username: 'a b\n"c"\u2028' });
    logger.warn('disk nearly full', { free: 12, where: '/var/lib' });
    await turn();
    await turn();
  } finally {
    spy.mockRestore();
  }
  const lines = writes.join('').split('\n').filter((l) => l !== '');
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z info request id=req-1 client=192\.0\.2\.1 method=GET path=\/api\/reg\.asmx\/Check transport=get operation=Check outcome=VEHICLE_NOT_FOUND status=404 ms=1\.5 username="a b\\n\\"c\\"\\u2028"$/);
  expect(lines[1]).toMatch(/^\S+Z warn disk nearly full free=12 where=\/var\/lib$/);
});
