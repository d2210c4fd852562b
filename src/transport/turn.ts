// Serving the requests of one event-loop turn together.

import type http from 'node:http';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/**
 * Requests that arrive in one turn of the event loop are served together, in that turn's check
 * phase, rather than each as its socket is read. Their lookups then share one store read
 * transaction and their answers leave in one burst, which under load costs much less CPU a request
 * than serving each alone (bench/PROFILE.md, "Third round"). A request waits
 * only for the other sockets of its turn to be read; on an idle service that is none.
 * One request's failure is answered on its own and never keeps the rest of the turn from being served.
 */
export function servedTogether(
  serve: Handler,
  onError: (req: http.IncomingMessage, res: http.ServerResponse, e: unknown) => void,
): Handler {
  let waiting: [http.IncomingMessage, http.ServerResponse][] = [];
  const serveAll = () => {
    // Requests that arrive while these are served wait for the next turn.
    const batch = waiting;
    waiting = [];
    for (const [req, res] of batch) {
      try {
        serve(req, res);
      } catch (e) {
        try {
          onError(req, res, e);
        } catch {
          res.destroy();
        }
      }
    }
  };
  return (req, res) => {
    if (waiting.length === 0) setImmediate(serveAll);
    waiting.push([req, res]);
  };
}
