/**
 * The live h3 service. The app is a value: tests call `app.fetch(new Request(...))` without a port, and the
 * entry file serves the same app on a socket.
 */
import { H3 } from 'h3';
import type { AppDeps } from './deps.ts';
import { toErrorResponse } from './errors.ts';
import { checkRoutes } from './routes/check.ts';
import { lookupRoutes } from './routes/lookup.ts';
import { paymentStatusRoutes } from './routes/payment-status.ts';
import { receiptRoutes } from './routes/receipts.ts';
import { setupPackRoutes } from './routes/setup-pack.ts';
import { taskRoutes } from './routes/tasks.ts';

export const API_VERSION = '0.42.1';

/** Builds the app over its dependencies. */
export function createApp(deps: AppDeps): H3 {
  const app = new H3({ onError: (error) => toErrorResponse(error) });

  app.use((event) => {
    event.res.headers.set('x-content-type-options', 'nosniff');
    // Agents and browsers read payment headers cross-origin (x402-notes §9 item 16).
    event.res.headers.set('access-control-allow-origin', '*');
    event.res.headers.set(
      'access-control-expose-headers',
      'PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE',
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
            'content-type, authorization, payment-signature, x-payment, x-service-key, x-service-end-user',
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
  return app;
}
