// Requests of one event-loop turn are served together in its check phase (src/transport/turn.ts).

import type http from 'node:http';
import { servedTogether } from '../../src/transport/turn';

type Pair = [http.IncomingMessage, http.ServerResponse];

function pair(name: string): Pair {
  const res: { destroyed: boolean; destroy: jest.Mock } = { destroyed: false, destroy: jest.fn() };
  res.destroy.mockImplementation(() => {
    res.destroyed = true;
  });
  return [{ url: name } as unknown as http.IncomingMessage, res as unknown as http.ServerResponse];
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('requests of one turn are served in arrival order, in the check phase, not as they arrive', async () => {
  const served: string[] = [];
  const handle = servedTogether(
    (req) => served.push(req.url as string),
    () => undefined,
  );
  for (const name of ['a', 'b', 'c']) handle(...pair(name));
  expect(served).toEqual([]);
  await turn();
  expect(served).toEqual(['a', 'b', 'c']);
});

test('a request that arrives while a turn is being served waits for the next turn', async () => {
  const served: string[] = [];
  let handle: (req: http.IncomingMessage, res: http.ServerResponse) => void = () => undefined;
  handle = servedTogether(
    (req) => {
      served.push(req.url as string);
      if (req.url === 'a') handle(...pair('late'));
    },
    () => undefined,
  );
  handle(...pair('a'));
  handle(...pair('b'));
  await turn();
  expect(served).toEqual(['a', 'b']);
  await turn();
  expect(served).toEqual(['a', 'b', 'late']);
});

test("one request's failure is answered on its own; the rest of the turn is still served", async () => {
  const served: string[] = [];
  const failed: [string, unknown][] = [];
  const handle = servedTogether(
    (req) => {
      if (req.url === 'bad') throw new Error('boom');
      served.push(req.url as string);
    },
    (req, _res, e) => failed.push([req.url as string, (e as Error).message]),
  );
  for (const name of ['a', 'bad', 'c']) handle(...pair(name));
  await turn();
  expect(served).toEqual(['a', 'c']);
  expect(failed).toEqual([['bad', 'boom']]);
});

test('if answering the failure fails too, that connection is dropped and the turn goes on', async () => {
  const served: string[] = [];
  const bad = pair('bad');
  const handle = servedTogether(
    (req) => {
      if (req.url === 'bad') throw new Error('boom');
      served.push(req.url as string);
    },
    () => {
      throw new Error('cannot answer');
    },
  );
  handle(...bad);
  handle(...pair('after'));
  await turn();
  expect(bad[1].destroy).toHaveBeenCalledTimes(1);
  expect(served).toEqual(['after']);
});
