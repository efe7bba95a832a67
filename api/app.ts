/**
 * The live h3 service. The app is a value: tests call `app.fetch(new Request(...))` without a port, and the
 * entry file serves the same app on a socket.
 */
import { H3, type H3Event, type HTTPError } from 'h3';
import { API_VERSION } from '../core/rules.ts';
import type { AppDeps } from './deps.ts';
import { toErrorResponse } from './errors.ts';
import { errorHtml, wantsHtml } from './html-pages.ts';
import { mcpRoutes } from './mcp/route.ts';
import { openApiRoutes } from './openapi.ts';
import { badgeRoutes } from './routes/badge.ts';
import { checkRoutes } from './routes/check.ts';
import { integratorRoutes } from './routes/integrators.ts';
import { invoiceRoutes } from './routes/invoices.ts';
import { listingRoutes } from './routes/listings.ts';
import { lookupRoutes } from './routes/lookup.ts';
import { paymentStatusRoutes } from './routes/payment-status.ts';
import { receiptRoutes } from './routes/receipts.ts';
import { setupPackRoutes } from './routes/setup-pack.ts';
import { taskRoutes } from './routes/tasks.ts';
import { watchRoutes } from './routes/watches.ts';
import { serveBuiltFile, siteRoutes } from './site.ts';
import { X402_CORS } from './x402/seller.ts';

/** The API description version (docs/api.md §9.1), kept with the rules document. */
export { API_VERSION };

/**
 * The CORS lists of every answer and preflight (docs/api.md §4): the x402 adapter's payment headers, then the
 * service's own (rate limits, hosted mode, service keys, MCP).
 */
const CORS = {
  expose: [
    ...X402_CORS.exposeHeaders,
    'RateLimit',
    'RateLimit-Policy',
    'Retry-After',
    'x-service-hosted',
    'x-delisted-at',
  ].join(', '),
  allow: [...X402_CORS.allowHeaders, 'x-service-key', 'x-service-end-user', 'mcp-protocol-version'].join(
    ', ',
  ),
};

/** Headers of every answer: agents and browsers read payment headers cross-origin (docs/x402.md §9.16). */
const commonHeaders: ReadonlyArray<[string, string]> = [
  ['x-content-type-options', 'nosniff'],
  ['access-control-allow-origin', '*'],
  ['access-control-expose-headers', CORS.expose],
];

/** Builds the app over its dependencies. */
export function createApp(deps: AppDeps): H3 {
  // Silent: h3 would print every unhandled error in full; `toErrorResponse` logs each once, in one place.
  // An error's answer is built here, so it gets the common headers here too; a browser gets it as a page.
  const onError = async (error: HTTPError, event: H3Event) => {
    const json = toErrorResponse(error);
    const answer = wantsHtml(event) ? await errorHtml(json, deps.site?.dir) : json;
    for (const [name, value] of commonHeaders) answer.headers.set(name, value);
    return answer;
  };
  const app = new H3({ silent: true, onError });

  app.use((event) => {
    // Set for error answers a route returns as well (h3 keeps those apart): a page on another origin reads both.
    for (const [name, value] of commonHeaders) {
      event.res.headers.set(name, value);
      event.res.errHeaders.set(name, value);
    }
  });
  app.options(
    '/**',
    () =>
      new Response(null, {
        status: 204,
        headers: {
          'access-control-allow-origin': '*',
          'access-control-allow-methods': 'GET, POST, OPTIONS',
          'access-control-allow-headers': CORS.allow,
          'access-control-max-age': '600',
        },
      }),
  );

  app.get('/healthz', () => ({ ok: true, version: API_VERSION }));
  app.get('/.well-known/jwks.json', async (event) => {
    event.res.headers.set('cache-control', 'public, max-age=300');
    return deps.jwks();
  });
  checkRoutes(app, deps);
  paymentStatusRoutes(app, deps);
  receiptRoutes(app, deps);
  lookupRoutes(app, deps);
  taskRoutes(app, deps);
  setupPackRoutes(app, deps);
  mcpRoutes(app, deps, API_VERSION);
  openApiRoutes(app, deps.baseUrl, API_VERSION);
  const site = deps.site;
  listingRoutes(app, site ? { ...deps, fromBuild: (event) => serveBuiltFile(event, site.dir) } : deps);
  integratorRoutes(app, deps);
  invoiceRoutes(app, deps);
  watchRoutes(app, deps);
  if (deps.site) {
    badgeRoutes(app, { store: deps.store, badges: deps.site.badges, now: deps.now, siteDir: deps.site.dir });
    siteRoutes(app, deps.site.dir); // last: what no API route answers is looked up in the built site
  }
  return app;
}
