/**
 * Pages for browsers from the server (docs/api.md §4 "Pages for browsers", docs/decisions.md "Pages for browsers from
 * the server"): a request whose `Accept` prefers HTML (`core/page-shell.ts` `prefersHtml`) gets a receipt as the page
 * the site gives crawled receipts, and an API error as an HTML page with the same status, code and message; every
 * other client keeps the JSON. Both are filled into the shell the current build left (`PAGE_SHELL_FILE`), else a
 * plain fallback shell. Answers that depend on `Accept` say so (`Vary: Accept`), so a cache keeps both forms apart.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { H3Event } from 'h3';
import { endpointKeyOfUrl, endpointPagePath } from '../core/endpoint-paths.ts';
import { receiptView } from '../core/format.ts';
import {
  errorPage,
  FALLBACK_SHELL,
  PAGE_SHELL_FILE,
  parseShell,
  prefersHtml,
  receiptPage,
} from '../core/page-shell.ts';

const HTML = 'text/html; charset=utf-8';
const FALLBACK = parseShell(FALLBACK_SHELL);

/** The shell of the build a site folder names now; each build's shell is read once. */
type Shell = { root: string | null; parts: readonly string[] };
let last: { root: string; parts: readonly string[] } | null = null;

/** True when the request's `Accept` prefers HTML to JSON (a browser's navigation). */
export function wantsHtml(event: H3Event): boolean {
  return prefersHtml(event.req.headers.get('accept'));
}

async function shellOf(siteDir: string | undefined): Promise<Shell> {
  const root = siteDir === undefined ? null : await realpath(siteDir).catch(() => null);
  if (root === null) return { root: null, parts: FALLBACK };
  if (last?.root === root) return last;
  const html = await readFile(join(root, PAGE_SHELL_FILE), 'utf8').catch(() => null);
  let parts = FALLBACK;
  try {
    if (html !== null) parts = parseShell(html);
  } catch {
    // A build from before the shell was kept, or a damaged file: the plain page.
  }
  last = { root, parts };
  return last;
}

/** A receipt as its page (the site's receipt page, linking the raw JSON at `/v1/receipts/{id}.json`). */
export async function receiptHtml(
  receipt: Record<string, unknown>,
  options: { baseUrl: string; siteDir: string | undefined; cacheControl: string },
): Promise<Response> {
  const shell = await shellOf(options.siteDir);
  const view = receiptView(receipt);
  const key =
    typeof receipt.url === 'string' && typeof receipt.method === 'string'
      ? endpointKeyOfUrl(receipt.url, receipt.method)
      : null;
  // Linked only when the current build has that endpoint's page.
  const endpoint =
    key !== null &&
    shell.root !== null &&
    (await isFile(join(shell.root, endpointPagePath(key), 'index.html')))
      ? key
      : null;
  const html = receiptPage(shell.parts, view, {
    baseUrl: options.baseUrl,
    raw: `/v1/receipts/${view.id}.json`,
    endpoint,
  });
  return new Response(html, {
    headers: { 'content-type': HTML, 'cache-control': options.cacheControl, vary: 'accept' },
  });
}

/**
 * The HTML form of a JSON error answer (`{"error":{"code","message"}}`) for a browser: same status and headers; any
 * other answer is returned as it is.
 */
export async function errorHtml(response: Response, siteDir: string | undefined): Promise<Response> {
  const body = (await response
    .clone()
    .json()
    .catch(() => null)) as { error?: { code?: unknown; message?: unknown } } | null;
  const code = body?.error?.code;
  const message = body?.error?.message;
  if (typeof code !== 'string' || typeof message !== 'string') return response;
  const shell = await shellOf(siteDir);
  const headers = new Headers(response.headers);
  headers.set('content-type', HTML);
  headers.delete('content-length');
  headers.set('vary', 'accept');
  return new Response(errorPage(shell.parts, { status: response.status, code, message }), {
    status: response.status,
    headers,
  });
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isFile() ?? false;
}
