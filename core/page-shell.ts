/**
 * The site's page shell and the pages filled into it (docs/decisions.md "Receipt pages from one shell", "Pages for
 * browsers from the server"): Astro renders the frame every page shares once, with three slots; the build fills it
 * for every receipt, endpoint, host and task page, and the server fills the same shell (the copy the build leaves at
 * {@link PAGE_SHELL_FILE}) for a receipt it issued after the build and for the error pages a browser gets. One
 * renderer, so a live receipt's page is the page a crawled receipt has. Pure: the callers read and write files.
 */
import { endpointPagePath } from './endpoint-paths.ts';
import { escapeXml, type Fact, type ReceiptView } from './format.ts';
import { receiptUrlOf } from './receipt.ts';

/** The slots of the shell, as the Astro page writes them (letters and underscores survive any escaping). */
export const SLOTS = {
  title: '__SC_SLOT_TITLE__',
  description: '__SC_SLOT_DESCRIPTION__',
  body: '__SC_SLOT_BODY__',
} as const;
type Slot = keyof typeof SLOTS;

/** Where a build keeps its shell, from its root, for the server to fill (`site/build.ts`). */
export const PAGE_SHELL_FILE = '_shell.html';

/**
 * The shell of a server without a built site (an API-only instance, or before `npm run build:site`): a plain page, so
 * a browser still gets HTML.
 */
export const FALLBACK_SHELL = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${SLOTS.title} · Spotcheck</title><meta name="description" content="${SLOTS.description}"></head><body><header><a href="/">Spotcheck</a></header><main id="main">${SLOTS.body}</main></body></html>`;

/** The shell cut at its slots: literal text at even positions, slot names at odd ones. Throws when a slot is missing. */
export function parseShell(html: string): string[] {
  const parts = html.split(/__SC_SLOT_([A-Z]+)__/);
  const names = parts.filter((_, i) => i % 2 === 1);
  for (const slot of Object.keys(SLOTS))
    if (!names.includes(slot.toUpperCase())) throw new Error(`the page shell has no ${slot} slot`);
  return parts.map((part, i) => (i % 2 === 1 ? part.toLowerCase() : part));
}

/** The shell with its slots filled: `title` and `description` as text (escaped here), `body` as HTML. */
export function fillShell(
  shell: readonly string[],
  page: { title: string; description: string; body: string },
): string {
  const values: Record<Slot, string> = {
    title: escapeXml(page.title),
    description: escapeXml(page.description),
    body: page.body,
  };
  let html = '';
  for (let i = 0; i < shell.length; i++) html += i % 2 === 1 ? (values[shell[i] as Slot] ?? '') : shell[i];
  return html;
}

/** Where a receipt page links to: the raw signed JSON, and the key of its endpoint's page when there is one. */
export type ReceiptPageLinks = { baseUrl: string; raw: string; endpoint: string | null };

/** One receipt's page: the shell with the receipt's facts. */
export function receiptPage(shell: readonly string[], view: ReceiptView, links: ReceiptPageLinks): string {
  return fillShell(shell, {
    title: `Receipt ${view.id}`,
    description: `${view.verdict}: ${view.why}`,
    body: receiptBody(view, links),
  });
}

/** What a receipt page says: the decision and why, the terms, the signature and kid, the raw file, the verifier. */
function receiptBody(view: ReceiptView, links: ReceiptPageLinks): string {
  const e = escapeXml;
  const permalink = receiptUrlOf(links.baseUrl, view.id);
  const signed = view.signed
    ? 'The signature covers the RFC 8785 canonical JSON of the receipt without its signature member.'
    : 'This receipt is unsigned (issued before receipts were signed).';
  return [
    `<h1>Receipt <code>${e(view.id)}</code></h1>`,
    `<p class="code">${e(view.title)}</p>`,
    `<p>Decision: <span class="v-${e(view.verdict)}">${e(view.verdict)}</span>. ${e(view.why)}</p>`,
    `<h2>Decision</h2>${facts(view.decision)}`,
    `<h2>Payment terms</h2>${facts(view.terms)}`,
    `<h2>Signature</h2>${facts(view.signature)}`,
    `<p>${signed}</p>`,
    links.endpoint === null
      ? ''
      : `<p>This endpoint's checks over the last 90 days, its listing and its badge: <a href="${e(endpointPagePath(links.endpoint))}">its page</a>.</p>`,
    `<ul><li><a href="${e(links.raw)}">The raw signed receipt (JSON)</a>, also at <a href="${e(permalink)}">${e(permalink)}</a></li>`,
    `<li><a href="/verify/?receipt=${e(encodeURIComponent(links.raw))}">Verify this receipt in your browser</a></li></ul>`,
    view.badgeMarkdown === null
      ? ''
      : `<h2>Badge snippet</h2><pre class="code">${e(view.badgeMarkdown)}</pre>`,
  ].join('');
}

/** A list of labelled facts, as `site/components/Facts.astro` draws them; long opaque values shortened. */
function facts(list: readonly Fact[]): string {
  const items = list.map(
    (f) => `<dt>${escapeXml(f.label)}</dt><dd>${f.code ? copyableCode(f.value) : escapeXml(f.value)}</dd>`,
  );
  return `<dl class="facts">${items.join('')}</dl>`;
}

/**
 * A value as code; a long opaque one (a wallet or contract, a SHA-256, a base64url signature) shortened, with the
 * whole value in its title and the copy button of `site/components/Hex.astro` (the site's layout wires the button),
 * so a narrow screen never breaks it letter by letter.
 */
export function copyableCode(value: string): string {
  const e = escapeXml;
  if (!/^(?:0x)?[0-9a-fA-F]{24,}$|^[A-Za-z0-9_-]{40,}$/.test(value)) return `<code>${e(value)}</code>`;
  return shortenedCode(value, `${value.slice(0, value.startsWith('0x') ? 6 : 4)}…${value.slice(-4)}`);
}

/** `short` as code, the whole `value` in its title and behind the copy button (the markup of `Hex.astro`). */
export function shortenedCode(value: string, short: string): string {
  const e = escapeXml;
  return `<code title="${e(value)}">${e(short)}</code> <button type="button" class="copy" data-copy="${e(value)}" aria-label="Copy ${e(value)}">copy</button>`;
}

const ERROR_TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Not authorized',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflict',
  413: 'Request too large',
  429: 'Too many requests',
  502: 'Bad gateway',
  503: 'Unavailable',
};

/**
 * The page a browser gets for an API error (docs/api.md §7): the same status, code and message as the JSON body an
 * API client gets.
 */
export function errorPage(
  shell: readonly string[],
  error: { status: number; code: string; message: string },
): string {
  const e = escapeXml;
  const title = ERROR_TITLES[error.status] ?? (error.status >= 500 ? 'Server error' : 'Error');
  return fillShell(shell, {
    title,
    description: error.message,
    body: [
      `<h1>${e(title)}</h1>`,
      `<p>${e(error.message)}</p>`,
      `<p class="muted">HTTP ${error.status}, code <code>${e(error.code)}</code>. An API client that asks for JSON gets the same as <code>{"error":{"code","message"}}</code>.</p>`,
      '<p>Start from the <a href="/">home page</a>, or <a href="/search/">search</a> for an endpoint, host or task.</p>',
    ].join(''),
  });
}

/**
 * True when an `Accept` header prefers HTML to JSON: `text/html` listed with a higher quality than
 * `application/json` (browsers list `text/html` first and every other type through a wildcard at q=0.8); a wildcard
 * counts for neither, and a tie is JSON, so `curl`, `fetch` and the SDKs keep the API's answers.
 * @example prefersHtml('text/html,application/xhtml+xml;q=0.9') // true
 */
export function prefersHtml(accept: string | null): boolean {
  if (accept === null) return false;
  let html = 0;
  let json = 0;
  for (const range of accept.toLowerCase().split(',')) {
    const [type = '', ...params] = range.split(';').map((part) => part.trim());
    const q = qualityOf(params);
    if (type === 'text/html' || type === 'application/xhtml+xml') html = Math.max(html, q);
    else if (type === 'application/json' || type.endsWith('+json')) json = Math.max(json, q);
  }
  return html > json;
}

function qualityOf(params: readonly string[]): number {
  for (const param of params) {
    const match = /^q=([01](?:\.\d{0,3})?)$/.exec(param);
    if (match) return Number(match[1]);
  }
  return 1;
}
