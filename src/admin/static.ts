// The console's files (HTML, JS, CSS in the package's console/ folder) and the chart library from
// node_modules, served by the admin listener itself: no CDN, nothing inline (the CSP forbids it).

import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';

export interface StaticFile {
  readonly file: string;
  readonly type: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

const CONSOLE_DIR = path.resolve(__dirname, '..', '..', 'console');

/** Path on the admin listener -> file: /admin/ is the console's index.html, /admin/<file> its other files. */
export function consoleFiles(dir = CONSOLE_DIR): Map<string, StaticFile> {
  const out = new Map<string, StaticFile>();
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    const type = TYPES[path.extname(name)];
    if (!type) continue;
    const f = { file: path.join(dir, name), type };
    out.set(`/admin/${name}`, f);
    if (name === 'index.html') out.set('/admin/', f);
  }
  const uplot = vendorFile('uplot/dist/uPlot.iife.min.js');
  if (uplot) out.set('/admin/vendor/uplot.js', { file: uplot, type: TYPES['.js'] });
  const uplotCss = vendorFile('uplot/dist/uPlot.min.css');
  if (uplotCss) out.set('/admin/vendor/uplot.css', { file: uplotCss, type: TYPES['.css'] });
  return out;
}

function vendorFile(id: string): string | null {
  try {
    return require.resolve(id);
  } catch {
    return null;
  }
}

export function serveStatic(req: http.IncomingMessage, res: http.ServerResponse, f: StaticFile): void {
  fs.readFile(f.file, (err, data) => {
    if (err) {
      res
        .writeHead(404, { 'Content-Type': 'application/json; charset=utf-8' })
        .end(JSON.stringify({ code: 'NOT_FOUND', message: 'the console file is missing from this installation' }));
      return;
    }
    res.writeHead(200, { 'Content-Type': f.type, 'Content-Length': data.length });
    res.end(req.method === 'HEAD' ? undefined : data);
  });
}
