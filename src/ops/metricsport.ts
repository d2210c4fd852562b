// METRICS_PORT: a server of its own that answers only GET /metrics, so that the metrics can be kept
// off the public port (bind it where only the scraper reaches).

import { messageOf } from '../core/errors';
import http from 'node:http';
import { CONTENT_TYPE } from './metrics';
import type { Logger } from './logger';

export function createMetricsServer(text: () => Promise<string>, logger: Logger): http.Server {
  return http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Only /metrics is served on this port\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' }).end('Use GET\n');
      return;
    }
    text().then(
      (t) => res.writeHead(200, { 'Content-Type': CONTENT_TYPE }).end(req.method === 'HEAD' ? undefined : t),
      (e: unknown) => {
        logger.error('metrics scrape failed', { error: messageOf(e) });
        res
          .writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' })
          .end('The metrics could not be collected; the log has the detail\n');
      },
    );
  });
}
