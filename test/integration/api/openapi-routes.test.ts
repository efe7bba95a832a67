/**
 * `/openapi.json` against the routes themselves: every route the h3 app registers and every path of docs/api.md §4 (and
 * the invoices) is described; on a fresh DATA_DIR a described route answers 404 only with the documented
 * "nothing published yet" codes; once a crawl run and a bazaar check are published and the site built, none answers 404; and the
 * listings, badges, the integrator's account and its invoices answer what the document says (every `appFetch`
 * answer is held to it, and so is each answer here, explicitly).
 */
import { mkdir, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeProber } from '../../fixtures/probe.ts';
import { createIntegrator, previousMonth, recordHostedCalls } from '../../helpers/integrators.ts';
import { openApiChecker } from '../../helpers/openapi.ts';
import { appFetch, EXEMPT_SECRET, startTestService, type TestService } from '../../helpers/service.ts';
import { crawlSandboxIn } from '../../helpers/site.ts';

/** docs/api.md §4, written out here (never read from the code): method, a concrete path, the template describing it. */
const SPEC_ROUTES: ReadonlyArray<[string, string, string]> = [
  ['GET', '/v1/lookup', '/v1/lookup'],
  ['GET', '/v1/lookup/paid', '/v1/lookup/paid'],
  ['GET', '/v1/products/endpoint-spot-check', '/v1/products/endpoint-spot-check'],
  ['POST', '/v1/products/endpoint-spot-check', '/v1/products/endpoint-spot-check'],
  ['GET', '/v1/products/overnight-cos-pack', '/v1/products/overnight-cos-pack'],
  ['POST', '/v1/products/overnight-cos-pack', '/v1/products/overnight-cos-pack'],
  ['POST', '/v1/products/payment-status', '/v1/products/payment-status'],
  ['GET', '/v1/products/payment-status', '/v1/products/payment-status'],
  ['GET', '/v1/tasks', '/v1/tasks'],
  ['GET', '/v1/receipts', '/v1/receipts'],
  ['GET', '/v1/receipts/sc-aaaaaaaaaaaaaaaaaaaaaaaaaa', '/v1/receipts/{receipt_id}'],
  ['GET', '/v1/receipts/by-url', '/v1/receipts/by-url'],
  ['GET', '/v1/skips', '/v1/skips'],
  ['GET', '/v1/skips.json', '/v1/skips.json'],
  ['GET', '/bazaar', '/bazaar'],
  ['GET', '/bazaar.json', '/bazaar.json'],
  ['GET', '/saves', '/saves'],
  ['GET', '/saves.json', '/saves.json'],
  ['GET', '/rules', '/rules'],
  ['GET', '/rules.json', '/rules.json'],
  ['GET', '/badge/seller.example.svg', '/badge/{host}.svg'],
  ['GET', '/badge/seller.example.png', '/badge/{host}.png'],
  ['GET', '/badge/seller.example.json', '/badge/{host}.json'],
  ['GET', '/badge/seller.example', '/badge/{host}'],
  ['GET', '/v1/integrators/me', '/v1/integrators/me'],
  ['POST', '/mcp', '/mcp'],
  ['GET', '/openapi.json', '/openapi.json'],
  ['GET', '/.well-known/jwks.json', '/.well-known/jwks.json'],
  // Invoices.
  ['GET', '/v1/invoices/inv-202601-acme', '/v1/invoices/{id}'],
  ['GET', '/v1/invoices/inv-202601-acme.pdf', '/v1/invoices/{id}.pdf'],
  ['GET', '/v1/invoices/inv-202601-acme/pay', '/v1/invoices/{id}/pay'],
  ['POST', '/v1/invoices/inv-202601-acme/pay', '/v1/invoices/{id}/pay'],
  // Watches (docs/api.md "Watches").
  ['POST', '/v1/watches', '/v1/watches'],
  ['GET', `/v1/watches/wa-${'0'.repeat(32)}`, '/v1/watches/{watch_id}'],
  ['DELETE', `/v1/watches/wa-${'0'.repeat(32)}`, '/v1/watches/{watch_id}'],
  ['GET', `/v1/watches/wa-${'0'.repeat(32)}/events`, '/v1/watches/{watch_id}/events'],
];

/** Registered routes that are not API operations: CORS preflight, and the built site's own files. */
const NOT_OPERATIONS = ['OPTIONS /**', 'GET /**'];

/** A route or template with its parameters blanked: `/v1/receipts/:id` and `/v1/receipts/{receipt_id}` agree. */
const shape = (path: string) => path.replace(/:[A-Za-z_]+|\{[^}]+\}/g, '{}');

let spot: TestService;
let doc: { paths: Record<string, Record<string, { security?: unknown[] }>> };
let checker: ReturnType<typeof openApiChecker>;
let key = '';
let invoiceId = '';
/** The query of the invoice's pay link (its token): without it or the key, the pay route is the one 404. */
let payQuery = '';
let receiptId = '';
/** Two watches (made with the exempt key): one read by the GET routes, one the DELETE removes. */
const watches: Record<'kept' | 'doomed', { id: string; token: string }> = {
  kept: { id: '', token: '' },
  doomed: { id: '', token: '' },
};
beforeAll(async () => {
  spot = await startTestService({}, { prober: fakeProber() }, { listen: false });
  doc = (await (await appFetch(spot.service, '/openapi.json')).json()) as typeof doc;
  checker = openApiChecker(doc);
  const hosted = spot.service.deps.hosted;
  if (!hosted) throw new Error('hosted mode is not wired');
  [key = ''] = await createIntegrator(hosted, 'docs', '100000000');
  const month = previousMonth();
  await recordHostedCalls(hosted, 'docs', month, 1001);
  await hosted.apply(JSON.stringify({ op: 'invoices', month }));
  invoiceId = `inv-${month.replace('-', '')}-docs`;
  const invoice = await appFetch(spot.service, `/v1/invoices/${invoiceId}`, {
    headers: { 'x-service-key': key },
  });
  payQuery = new URL(((await invoice.json()) as { payment: { pay_url: string } }).payment.pay_url).search;
  const checked = await appFetch(
    spot.service,
    `/v1/products/endpoint-spot-check?url=${encodeURIComponent('https://seller-0.example/api/item-0')}`,
    { ip: '203.0.113.70' },
  );
  receiptId = ((await checked.json()) as { receipt_id: string }).receipt_id;
  await makeWatch('kept');
});

/** Makes the watch `name` (again: each pass of the routes deletes `doomed`). */
async function makeWatch(name: keyof typeof watches): Promise<void> {
  const made = await appFetch(spot.service, '/v1/watches', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-key': EXEMPT_SECRET },
    body: JSON.stringify({ url: `http://127.0.0.1/watched-${name}` }),
  });
  expect(made.status).toBe(201);
  watches[name] = (await made.json()) as { id: string; token: string };
}
afterAll(async () => {
  await spot.stop();
});

/** Each described operation, requested with a concrete path (with the integrator's key where one is required). */
async function requestEach(): Promise<Array<{ method: string; template: string; res: Response }>> {
  await makeWatch('doomed');
  const answers: Array<{ method: string; template: string; res: Response }> = [];
  for (const [template, methods] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const path =
        template
          .replace('{receipt_id}', receiptId)
          .replace('{id}', invoiceId)
          .replace('{host}', 'seller-0.example')
          .replace('{watch_id}', watches[method === 'delete' ? 'doomed' : 'kept'].id) +
        (template.endsWith('/pay') ? payQuery : '');
      const keyed =
        (operation.security ?? []).length > 0 && !JSON.stringify(operation.security).includes('{}');
      const headers: Record<string, string> = keyed ? { authorization: `Bearer ${key}` } : {};
      if (template.includes('{watch_id}')) {
        headers['x-watch-token'] = watches[method === 'delete' ? 'doomed' : 'kept'].token;
      }
      if (method === 'post') {
        headers['content-type'] = 'application/json';
        headers.accept = 'application/json, text/event-stream';
      }
      const res = await appFetch(spot.service, path, {
        ip: '203.0.113.71',
        method: method.toUpperCase(),
        headers,
        ...(method === 'post' ? { body: '{}' } : {}),
      });
      await checker.check(method, template, res);
      answers.push({ method, template, res });
    }
  }
  return answers;
}

describe('the document covers the routes', () => {
  it('describes every route the app registers and every path of docs/api.md §4', () => {
    // h3 2 has no public way to list an app's routes (h3js/h3#1111, open); its route table is `~routes`. The length
    // check below fails loudly if a new h3 renames it, rather than letting the comparison pass on an empty list.
    const routes = (spot.service.app as unknown as { '~routes': Array<{ method?: string; route?: string }> })[
      '~routes'
    ].map((route) => `${route.method ?? 'ANY'} ${route.route ?? ''}`);
    expect(routes.length).toBeGreaterThan(25);
    const described = new Set(
      Object.entries(doc.paths).flatMap(([path, methods]) =>
        Object.keys(methods).map((method) => `${method.toUpperCase()} ${shape(path)}`),
      ),
    );
    const undescribed = routes.filter(
      (route) => !NOT_OPERATIONS.includes(route) && !described.has(shape(route)),
    );
    expect(undescribed).toEqual([]);
    for (const [method, path, template] of SPEC_ROUTES) {
      expect(checker.templateOf(method, path), `${method} ${path}`).toBe(template);
    }
  });
});

describe('every described route is served', () => {
  it('on a fresh DATA_DIR, answers 404 only with the documented nothing-published-yet codes', async () => {
    const notFound: string[] = [];
    for (const { method, template, res } of await requestEach()) {
      if (res.status !== 404) continue;
      const { error } = (await res.json()) as { error: { code: string } };
      notFound.push(`${method} ${template} ${error.code}`);
    }
    expect(notFound.sort()).toEqual([
      'get /badge/{host} not_found',
      'get /bazaar not_found',
      'get /bazaar.json no_bazaar_check',
      'get /rules not_found',
      'get /saves not_found',
      'get /saves.json no_published_run',
      'get /v1/skips not_found',
      'get /v1/skips.json no_published_run',
    ]);
  });

  it('once a crawl run and a bazaar check are published and the site built, never answers 404', async () => {
    // A real crawl and bazaar check of the sandbox fleet, published under the service's DATA_DIR.
    await crawlSandboxIn(spot.dataDir);
    await pagesOnlyBuild(spot.dataDir);
    const notFound = (await requestEach())
      .filter(({ res }) => res.status === 404)
      .map(({ method, template }) => `${method} ${template}`);
    expect(notFound).toEqual([]);
  });
});

/** A build folder with the §4 pages only (the JSON twins then come from the published run). */
async function pagesOnlyBuild(dataDir: string): Promise<void> {
  const dir = join(dataDir, 'site-builds', 'pages');
  for (const page of ['v1/skips', 'saves', 'bazaar', 'rules', 'badge/seller-0.example']) {
    await mkdir(join(dir, page), { recursive: true });
    await writeFile(join(dir, page, 'index.html'), `<h1>${page}</h1>`);
  }
  await symlink(join('site-builds', 'pages'), join(dataDir, 'site.tmp'));
  await rename(join(dataDir, 'site.tmp'), join(dataDir, 'site'));
}
