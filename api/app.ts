/**
 * The live h3 service. The app is a value: tests call `app.fetch(new Request(...))` without a port, and the
 * entry file serves the same app on a socket.
 */
import { H3 } from 'h3';
import { API_VERSION } from '../core/rules.ts';
import type { AppDeps } from './deps.ts';
import { toErrorResponse } from './errors.ts';
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

/** Builds the app over its dependencies. */
export function createApp(deps: AppDeps): H3 {
  // Silent: h3 would print every unhandled error in full; `toErrorResponse` logs each once, in one place.
  const app = new H3({ silent: true, onError: (error) => toErrorResponse(error) });

  app.use((event) => {
    event.res.headers.set('x-content-type-options', 'nosniff');
    // Agents and browsers read payment headers cross-origin (docs/x402.md §9.16).
    event.res.headers.set('access-control-allow-origin', '*');
    event.res.headers.set(
      'access-control-expose-headers',
      'PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, RateLimit, RateLimit-Policy, Retry-After, x-service-hosted',
    );
  });
  app.options(
    '/**',
    () =>
      new Response(null, {
        status: 204,
        headers: {
          'access-control-allow-origin': '*',
          'access-control-allow-methods': 'GET, POST, OPTIONS',
          'access-control-allow-headers':
            'content-type, authorization, payment-signature, x-payment, x-service-key, x-service-end-user, mcp-protocol-version',
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
