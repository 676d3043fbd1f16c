// The static server both end-to-end runs use: dist/ under a sub-path and the host page, every
// response with the strict CSP the page must run under.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';

const DIST = new URL('../../dist/', import.meta.url).pathname;
const HOST = new URL('../host/', import.meta.url).pathname;
export const BASE = '/docs/tools/dpcalc/';
// The strict policy the page must run under: no inline script or style.
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'";
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css' };

const server = () => createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  const [root, prefix] = url.pathname.startsWith(BASE) ? [DIST, BASE] : url.pathname.startsWith('/host/') ? [HOST, '/host/'] : [];
  if (!root) { res.writeHead(404).end(); return; }
  const rel = url.pathname.slice(prefix.length) || 'index.html';
  const file = normalize(join(root, rel));
  if (!file.startsWith(root)) { res.writeHead(403).end(); return; }
  try {
    const body = await readFile(file);
    res.writeHead(200, { 'content-type': TYPES[extname(file)] || 'application/octet-stream',
      'content-security-policy': CSP }).end(body);
  } catch { res.writeHead(404).end(); }
});


/** Starts the server on a free port; resolves to { origin, close }. */
export async function serve() {
  const s = server();
  await new Promise((ok) => s.listen(0, '127.0.0.1', ok));
  return { origin: `http://127.0.0.1:${s.address().port}`, close: () => s.close() };
}
