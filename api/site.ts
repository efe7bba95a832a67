/**
 * Serves the built site (`npm run build:site`) from the same origin as the API (the embedded default, docs/site.md).
 * `DATA_DIR/site` is a symlink the build replaces atomically, so it is resolved on every request: a rebuild is
 * live at once, with no restart, and a request never sees half of a build.
 *
 * The spec's query forms map onto the build's plain paths: `/v1/skips?page=N` is `/v1/skips/page/N/` and
 * `/v1/skips.json?page=N` is `/v1/skips/N.json`. Cache headers come from `core/site-cache.ts`, the same rules the
 * build writes into `_headers` for static hosts.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import { extname, join, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { H3, H3Event } from 'h3';
import { parseInput } from '../core/input-codes.ts';
import { SkipsQuerySchema } from '../core/request-schemas.ts';
import { siteCacheControl } from '../core/site-cache.ts';
import { apiError } from './errors.ts';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml; charset=utf-8',
  '.png': 'image/png',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};
const COMPRESSIBLE = new Set(['.html', '.json', '.svg', '.css', '.js', '.txt']);

/** Registers the site as the last route: anything the API does not answer is looked up in the build. */
export function siteRoutes(app: H3, dir: string): void {
  app.get('/**', (event) => serveSite(event, dir));
}

/** Answers a GET from the built site folder `dir`; a JSON 404 when there is no such file. */
export async function serveSite(event: H3Event, dir: string): Promise<Response> {
  const path = sitePath(new URL(event.req.url));
  const root = await buildRoot(dir);
  if (root === null) {
    throw apiError(
      404,
      'not_found',
      'No such route, and the public site is not built yet (npm run build:site).',
    );
  }
  return (await fileResponse(event, root, path)) ?? notFound(root, path, event);
}

/**
 * The built file answering this GET, or null when there is no build or no such file in it. The JSON listing routes
 * use it to prefer the build and fall back to the published run (`api/routes/listings.ts`).
 */
export async function serveBuiltFile(event: H3Event, dir: string): Promise<Response | null> {
  const path = sitePath(new URL(event.req.url));
  const root = await buildRoot(dir);
  return root === null ? null : fileResponse(event, root, path);
}

async function buildRoot(dir: string): Promise<string | null> {
  return realpath(dir).catch(() => null);
}

async function fileResponse(event: H3Event, root: string, path: string): Promise<Response | null> {
  const file = await findFile(root, path);
  if (file === null) return null;
  const type = TYPES[extname(file)] ?? 'application/octet-stream';
  const body = await readFile(file);
  const headers: Record<string, string> = { 'content-type': type, 'cache-control': siteCacheControl(path) };
  const gzip = COMPRESSIBLE.has(extname(file)) && body.length > 1024 && acceptsGzip(event);
  if (COMPRESSIBLE.has(extname(file))) headers.vary = 'accept-encoding';
  if (gzip) headers['content-encoding'] = 'gzip';
  return new Response(new Uint8Array(gzip ? gzipSync(body) : body), { headers });
}

/** The build path for a request, with the spec's `?page=N` forms mapped onto plain paths. */
function sitePath(url: URL): string {
  const page = url.searchParams.get('page');
  const isSkips = url.pathname === '/v1/skips' || url.pathname === '/v1/skips/';
  if (page === null || !(isSkips || url.pathname === '/v1/skips.json')) return url.pathname;
  // The query as `/openapi.json` publishes it for the listing (and its JSON twin without a build).
  const query = parseInput(SkipsQuerySchema, { page });
  if (!query.ok) throw apiError(400, query.code, query.message);
  if (url.pathname === '/v1/skips.json') return page === '1' ? '/v1/skips.json' : `/v1/skips/${page}.json`;
  return page === '1' ? '/v1/skips/' : `/v1/skips/page/${page}/`;
}

/** The file for a path inside `root`, or null; never a file outside it (`..`, encoded slashes, NUL). */
async function findFile(root: string, path: string): Promise<string | null> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return null;
  }
  if (decoded.includes('\0') || decoded.split('/').some((part) => part === '..' || part.includes('\\')))
    return null;
  const base = join(root, decoded);
  if (base !== root && !base.startsWith(root + sep)) return null;
  for (const candidate of decoded.endsWith('/')
    ? [join(base, 'index.html')]
    : [base, join(base, 'index.html')]) {
    const info = await stat(candidate).catch(() => null);
    if (info?.isFile()) return candidate;
  }
  return null;
}

async function notFound(root: string, path: string, event: H3Event): Promise<Response> {
  const page = /^\/v1\/skips(?:\/page\/\d+\/?|\/\d+\.json)$/.test(path);
  const code = page ? 'page_not_found' : 'not_found';
  const wantsHtml = (event.req.headers.get('accept') ?? '').includes('text/html');
  if (wantsHtml) {
    const html = await readFile(join(root, '404.html')).catch(() => null);
    if (html !== null) {
      return new Response(new Uint8Array(html), {
        status: 404,
        headers: { 'content-type': TYPES['.html'] as string, 'cache-control': 'no-store' },
      });
    }
  }
  throw apiError(404, code, page ? 'There is no such page of the skip listing.' : 'No such page.');
}

function acceptsGzip(event: H3Event): boolean {
  return /\bgzip\b/.test(event.req.headers.get('accept-encoding') ?? '');
}
