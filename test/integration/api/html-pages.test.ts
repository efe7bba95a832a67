/**
 * Pages for browsers from the server (docs/api.md §4 "Pages for browsers"), through `app.fetch` of the real service
 * with no site built (the fallback shell) and with a build's shell in place: a request whose `Accept` prefers HTML
 * gets errors and receipts as pages, with the status and code an API client gets as JSON; API clients (a wildcard,
 * `application/json`, no header) keep the JSON, and `{id}.json` is always the JSON.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { receiptView } from '../../../core/format.ts';
import { PAGE_SHELL_FILE, parseShell, prefersHtml, receiptPage, SLOTS } from '../../../core/page-shell.ts';
import { fakeProber } from '../../fixtures/probe.ts';
import { appFetch, startTestService, type TestService } from '../../helpers/service.ts';

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
const API_CLIENTS = [null, '*/*', 'application/json', 'application/json, text/html'];

let spot: TestService;
beforeAll(async () => {
  spot = await startTestService({}, { prober: fakeProber() }, { listen: false });
});
afterAll(async () => {
  await spot.stop();
});

const get = (path: string, accept: string | null) =>
  appFetch(spot.service, path, accept === null ? {} : { headers: { accept } });

async function receiptId(): Promise<string> {
  const res = await get(
    `/v1/products/endpoint-spot-check?url=${encodeURIComponent('https://seller.example/a')}`,
    null,
  );
  return ((await res.json()) as { receipt_id: string }).receipt_id;
}

describe('Accept', () => {
  it.each([
    [BROWSER, true],
    ['text/html', true],
    ['*/*', false],
    ['application/json', false],
    ['application/json, text/html', false],
    ['text/html;q=0.5, application/json', false],
    ['application/json;q=0.5, text/html', true],
    ['text/html;q=0', false],
  ])('%s prefers HTML: %s', (accept, html) => {
    expect(prefersHtml(accept)).toBe(html);
  });
});

describe('errors', () => {
  it.each([
    ['/v1/no-such-route', 404, 'not_found'],
    ['/v1/products/endpoint-spot-check?url=nope', 400, 'bad_url'],
    ['/v1/receipts/sc-nope', 404, 'receipt_not_found'],
  ])(
    '%s: a page for a browser, the JSON for API clients, same status and code',
    async (path, status, code) => {
      const page = await get(path, BROWSER);
      expect(page.status).toBe(status);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('vary')).toBe('accept');
      expect(page.headers.get('access-control-allow-origin')).toBe('*');
      const html = await page.text();
      expect(html).toMatch(/^<!doctype html>/);
      expect(html).toContain(`code <code>${code}</code>`);
      for (const accept of API_CLIENTS) {
        const json = await get(path, accept);
        expect(json.status, String(accept)).toBe(status);
        expect(json.headers.get('content-type'), String(accept)).toMatch(/^application\/json/);
        expect(((await json.json()) as { error: { code: string } }).error.code).toBe(code);
      }
    },
  );
});

describe('a live receipt', () => {
  it('is its page for a browser, the JSON for API clients and at {id}.json, and says it varies by Accept', async () => {
    const id = await receiptId();
    const page = await get(`/v1/receipts/${id}`, BROWSER);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('vary')).toBe('accept');
    expect(page.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const html = await page.text();
    expect(html).toContain(`<h1>Receipt <code>${id}</code></h1>`);
    expect(html).toContain(`href="/v1/receipts/${id}.json"`);
    const json = await get(`/v1/receipts/${id}`, 'application/json');
    expect(json.headers.get('vary')).toBe('accept');
    const receipt = (await json.json()) as Record<string, unknown>;
    expect(receipt.id).toBe(id);
    for (const accept of [BROWSER, null]) {
      const raw = await get(`/v1/receipts/${id}.json`, accept);
      expect(raw.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await raw.json()).toEqual(receipt);
    }
  });

  it('shortens its wallets, hashes and signature with the copy button used across the site', async () => {
    const id = await receiptId();
    const receipt = (await (await get(`/v1/receipts/${id}`, 'application/json')).json()) as Record<
      string,
      unknown
    >;
    const html = await (await get(`/v1/receipts/${id}`, BROWSER)).text();
    const long = [receipt.pay_to, receipt.asset, receipt.payment_terms_sha256, receipt.signature].filter(
      (v): v is string => typeof v === 'string',
    );
    expect(long.length).toBeGreaterThanOrEqual(2);
    for (const value of long) {
      // Never shown whole on the page (a 390 px screen would wrap it letter by letter), but copyable whole.
      expect(html, value).not.toContain(`<code>${value}</code>`);
      expect(html, value).toContain(`<code title="${value}">`);
      expect(html, value).toContain(`<button type="button" class="copy" data-copy="${value}"`);
    }
    // Short values stay as they are.
    expect(html).toContain(`<code>${receipt.reason_code ?? receipt.reason}</code>`);
  });

  it('fills the current build’s shell, as the site fills it for crawled receipts', async () => {
    const id = await receiptId();
    const receipt = (await (await get(`/v1/receipts/${id}`, 'application/json')).json()) as Record<
      string,
      unknown
    >;
    // A build folder with a shell, named by DATA_DIR/site as `npm run build:site` names it.
    const builds = await mkdtemp(join(tmpdir(), 'sc-shell-'));
    const shell = `<!doctype html><html><head><title>${SLOTS.title}</title><meta name="description" content="${SLOTS.description}"></head><body><nav>the site's own frame</nav><main>${SLOTS.body}</main></body></html>`;
    await mkdir(join(builds, 'b1'));
    await writeFile(join(builds, 'b1', PAGE_SHELL_FILE), shell);
    const site = spot.service.deps.site?.dir;
    if (site === undefined) throw new Error('the test service serves no site');
    await symlink(join(builds, 'b1'), site);
    try {
      const html = await (await get(`/v1/receipts/${id}`, BROWSER)).text();
      expect(html).toBe(
        receiptPage(parseShell(shell), receiptView(receipt), {
          baseUrl: spot.config.baseUrl,
          raw: `/v1/receipts/${id}.json`,
          endpoint: null,
        }),
      );
      expect(html).toContain("<nav>the site's own frame</nav>");
      const error = await (await get('/v1/products/endpoint-spot-check?url=nope', BROWSER)).text();
      expect(error).toContain("<nav>the site's own frame</nav>");
    } finally {
      await rm(site, { force: true });
      await rm(builds, { recursive: true, force: true });
    }
  });
});
