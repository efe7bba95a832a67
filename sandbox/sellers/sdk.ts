/**
 * Sellers built the way the official quick-start builds them: Hono + `@x402/hono`'s payment middleware over an
 * `x402ResourceServer` with the EVM `exact` scheme and the bazaar discovery extension (docs/x402.md §4.2, §6.1).
 * Their 402s are whatever SDK 2.27 emits; nothing here touches the wire format.
 */
import { getRequestListener } from '@hono/node-server';
import type { FacilitatorClient, RoutesConfig } from '@x402/core/server';
import { x402HTTPResourceServer, x402ResourceServer } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { bazaarResourceServerExtension, declareDiscoveryExtension } from '@x402/extensions/bazaar';
import { paymentMiddleware } from '@x402/hono';
import { Hono } from 'hono';
import { type Address, BASE, BASE_SEPOLIA, POLYGON } from './constants.ts';
import type { SellerSpec } from './types.ts';

/** What the SDK sellers are built from. */
export type SdkContext = { payTo: Address; facilitators: FacilitatorClient[] };

type App = { path: string; routes: RoutesConfig; build: (app: Hono) => void };

const weather = { city: 'Paris', temperature: 21, unit: 'C' };

const APPS = {
  'sdk-ok': (payTo: Address): App => ({
    path: '/weather',
    routes: {
      'GET /weather': {
        accepts: { scheme: 'exact', network: BASE, payTo, price: '$0.01' },
        description: 'Current weather for a city',
        mimeType: 'application/json',
        serviceName: 'SandboxWeather',
        tags: ['weather', 'sandbox'],
        extensions: declareDiscoveryExtension({
          input: { city: 'Paris' },
          inputSchema: { properties: { city: { type: 'string' } }, required: ['city'] },
          output: { example: weather },
        }),
      },
    },
    build: (app) => app.get('/weather', (c) => c.json(weather)),
  }),

  'sdk-post': (payTo: Address): App => ({
    path: '/x',
    routes: {
      'POST /x': {
        accepts: { scheme: 'exact', network: BASE, payTo, price: '$0.01' },
        description: 'Summarize a text',
        mimeType: 'application/json',
        extensions: declareDiscoveryExtension({
          bodyType: 'json',
          input: { text: 'hello' },
          inputSchema: { properties: { text: { type: 'string' } }, required: ['text'] },
          output: { example: { summary: 'hello' } },
        }),
      },
    },
    // Hono alone would answer GET with 404 (docs/x402.md §9.6); a 405 tells a prober to try POST.
    build: (app) => {
      app.get('/x', (c) => c.json({ error: 'method not allowed' }, 405, { Allow: 'POST' }));
      app.post('/x', (c) => c.json({ summary: 'hello' }));
    },
  }),

  'sdk-base-sepolia': (payTo: Address): App => ({
    path: '/weather',
    routes: {
      'GET /weather': {
        accepts: { scheme: 'exact', network: BASE_SEPOLIA, payTo, price: '$0.01' },
        description: 'Weather, testnet only',
        mimeType: 'application/json',
      },
    },
    build: (app) => app.get('/weather', (c) => c.json(weather)),
  }),

  'sdk-expensive': (payTo: Address): App => ({
    path: '/report',
    routes: {
      'GET /report': {
        accepts: { scheme: 'exact', network: BASE, payTo, price: '$0.50' },
        description: 'A long report',
        mimeType: 'application/json',
      },
    },
    build: (app) => app.get('/report', (c) => c.json({ report: 'long' })),
  }),

  'sdk-two-options': (payTo: Address): App => ({
    path: '/quote',
    routes: {
      'GET /quote': {
        accepts: [
          { scheme: 'exact', network: BASE, payTo, price: '$0.01' },
          { scheme: 'exact', network: POLYGON, payTo, price: '$0.01' },
        ],
        description: 'A price quote, payable on Base or Polygon',
        mimeType: 'application/json',
      },
    },
    build: (app) => app.get('/quote', (c) => c.json({ quote: 42 })),
  }),
} satisfies Record<string, (payTo: Address) => App>;

export type SdkName = keyof typeof APPS;
export const SDK_NAMES = Object.keys(APPS) as SdkName[];

/**
 * Builds one SDK seller. The route configuration is checked against the facilitators before the seller is
 * listed (`initialize()` throws on a network no facilitator supports), so a misconfigured fleet fails at start
 * instead of answering 500 to the first probe.
 */
export async function buildSdkSeller(name: SdkName, ctx: SdkContext): Promise<SellerSpec> {
  return buildSdkApp(APPS[name](ctx.payTo), ctx.facilitators);
}

/** A seller app: routes behind `@x402/hono`'s payment middleware; `before` registers middleware outside it (it sees the settled answer). */
export type SdkApp = App & { before?: (app: Hono) => void };

/** Builds a seller from its SDK route configuration and handlers (the fleet's and the task sellers'). */
export async function buildSdkApp(spec: SdkApp, facilitators: FacilitatorClient[]): Promise<SellerSpec> {
  const { path, routes, build } = spec;
  const resourceServer = new x402ResourceServer(facilitators)
    .register(BASE, new ExactEvmScheme())
    .register(BASE_SEPOLIA, new ExactEvmScheme())
    .register(POLYGON, new ExactEvmScheme())
    .registerExtension(bazaarResourceServerExtension);
  // Preflight with the same classes the middleware uses; the middleware then syncs on its own, as in production.
  await new x402HTTPResourceServer(resourceServer, routes).initialize();
  const app = new Hono();
  spec.before?.(app);
  app.use(paymentMiddleware(routes, resourceServer));
  build(app);
  return { kind: 'http', path, listener: getRequestListener(app.fetch) };
}
