// Many requests arriving together, as they do under load, are served in the same turns
// (src/transport/turn.ts): each still gets its own record, in its own transport's form, and a bad
// request among them gets its own error without disturbing the rest.

import { Readable } from 'node:stream';
import { importStream } from '../../src/data/import';
import { call, TRANSPORTS } from '../helpers/call';
import { envelope, soapHeaders } from '../helpers/soap';
import { startServer, type TestServer } from '../helpers/server';

const COUNT = 60;
const reg = (i: number) => `TT${String(i).padStart(2, '0')} TRN`;
const description = (i: number) => `TURN TEST VEHICLE ${i} OF ${COUNT}`;

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
  const lines = Array.from(
    { length: COUNT },
    (_, i) =>
      JSON.stringify({
        operation: 'Check',
        registration: reg(i),
        vehicle: { Description: description(i), ABICode: String(90000000 + i) },
      }) + '\n',
  );
  const report = await importStream(srv.store, Readable.from(lines), {});
  expect(report.committed).toBe(true);
});
afterAll(() => srv.close());

test('240 requests at once over the four transports: each answer carries the record it asked for', async () => {
  const plan = Array.from({ length: COUNT * 4 }, (_, k) => ({
    i: k % COUNT,
    transport: TRANSPORTS[Math.floor(k / COUNT)],
  }));
  const answers = await Promise.all(
    plan.map(({ i, transport }) =>
      call(srv.url, transport, 'Check', { RegistrationNumber: reg(i), username: `turn${i}` }),
    ),
  );
  answers.forEach((res, k) => {
    const { i, transport } = plan[k];
    expect(res.status).toBe(200);
    expect(res.body).toContain(description(i));
    expect(res.body).toContain(`90000${String(i).padStart(3, '0')}`);
    for (let other = 0; other < COUNT; other++)
      if (other !== i) expect(res.body).not.toContain(`${description(other)}<`);
    if (transport === 'get' || transport === 'post') expect(res.body).not.toContain('Envelope');
    else expect(res.body).toContain('CheckResponse');
  });
});

test('bad requests among good ones in the same turns get their own errors; the good ones their records', async () => {
  const good = Array.from({ length: 40 }, (_, i) =>
    call(srv.url, TRANSPORTS[i % 4], 'Check', { RegistrationNumber: reg(i), username: 'turn' }),
  );
  const malformed = Array.from({ length: 10 }, () =>
    fetch(`${srv.url}/api/reg.asmx`, {
      method: 'POST',
      headers: soapHeaders('1.1', 'Check'),
      body: envelope('1.1', 'Check', { RegistrationNumber: 'X' }).replace('</soap:Body>', ''),
    }),
  );
  const unknown = Array.from({ length: 10 }, () =>
    fetch(`${srv.url}/api/reg.asmx/Chek?RegistrationNumber=AB12CDE&username=turn`),
  );
  const [goodAnswers, malformedAnswers, unknownAnswers] = await Promise.all([
    Promise.all(good),
    Promise.all(malformed),
    Promise.all(unknown),
  ]);
  goodAnswers.forEach((res, i) => {
    expect(res.status).toBe(200);
    expect(res.body).toContain(description(i));
  });
  for (const res of malformedAnswers) {
    expect(res.status).toBe(500);
    expect(await res.text()).toContain('>MALFORMED_REQUEST</ErrorCode>');
  }
  for (const res of unknownAnswers) {
    expect(res.status).toBe(404);
    expect(await res.text()).toBe("UNKNOWN_OPERATION: Unknown operation 'Chek'\n");
  }
});
