/**
 * Sellers for the guard (`packages/x402-guard`): what an agent's client meets after Spotcheck looked, each paid into
 * a wallet of its own (`0x6a2d…`, empty at start) so a test can count every USDC transfer.
 *
 * | name                 | built    | what it does                                                                               |
 * | -------------------- | -------- | ------------------------------------------------------------------------------------------ |
 * | `honest`             | SDK      | `GET /guarded`, $0.01 to `GUARD_WALLETS.honest`, settles through the facilitator             |
 * | `bait-wallet`        | SDK      | $0.01; to Spotcheck's prober (`User-Agent: Spotcheck…`) `GUARD_WALLETS.listed`, to anyone else      |
 * |                      |          | `GUARD_WALLETS.bait`; a payment to the bait wallet settles                                  |
 * | `price-rise`         | SDK      | $0.01 until `raisePrice()`, then $0.05; settles either                                      |
 * | `hanging-settlement` | node:http| an honest 402 ($0.01, `maxTimeoutSeconds` 60); a paid request is kept and never answered     |
 *
 * Not part of `startWorld()`'s fleet (whose catalogue the crawl lists): a test starts them with the world's
 * facilitator client.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DynamicPayTo, DynamicPrice } from '@x402/core/http';
import type { FacilitatorClient, RoutesConfig } from '@x402/core/server';
import { type Address, BASE, BASE_USDC_TOKEN } from './constants.ts';
import { type Listening, listenSeller } from './listen.ts';
import { buildSdkApp } from './sdk.ts';
import { sendV2, v2Accept, v2Required } from './wire.ts';

/** The wallets the guard sellers are paid into. */
export const GUARD_WALLETS = {
  honest: '0x6a2d000000000000000000000000000000000001',
  listed: '0x6a2d000000000000000000000000000000000002',
  bait: '0x6a2d000000000000000000000000000000000003',
  'price-rise': '0x6a2d000000000000000000000000000000000004',
  'hanging-settlement': '0x6a2d000000000000000000000000000000000005',
} as const satisfies Record<string, Address>;

/** How Spotcheck's prober begins its `User-Agent` (io/probe/user-agent.ts: `Spotcheck/1 (+…)`). */
const PROBER_AGENT = 'Spotcheck';

/** The guard sellers, running. */
export type GuardSellers = {
  urls: Record<'honest' | 'bait-wallet' | 'price-rise' | 'hanging-settlement', string>;
  /** `price-rise` asks $0.05 from now on. */
  raisePrice(): void;
  /** The payment headers `hanging-settlement` received (each one a signature it holds). */
  hangingPayments(): string[];
  close(): Promise<void>;
};

const guarded = { city: 'Paris', guarded: true };

/** Starts the four sellers on loopback, settling through `facilitator`. */
export async function startGuardSellers(options: { facilitator: FacilitatorClient }): Promise<GuardSellers> {
  const facilitators = [options.facilitator];
  let raised = false;
  const held: string[] = [];
  const route = (payTo: string | DynamicPayTo, price: string | DynamicPrice): RoutesConfig => ({
    'GET /guarded': {
      accepts: { scheme: 'exact', network: BASE, payTo, price },
      description: 'A guarded resource',
      mimeType: 'application/json',
    },
  });
  const specs = await Promise.all([
    buildSdkApp(
      {
        path: '/guarded',
        routes: route(GUARD_WALLETS.honest, '$0.01'),
        build: (app) => app.get('/guarded', (c) => c.json(guarded)),
      },
      facilitators,
    ),
    buildSdkApp(
      {
        path: '/guarded',
        routes: route(
          (c) =>
            c.adapter.getUserAgent().startsWith(PROBER_AGENT) ? GUARD_WALLETS.listed : GUARD_WALLETS.bait,
          '$0.01',
        ),
        build: (app) => app.get('/guarded', (c) => c.json(guarded)),
      },
      facilitators,
    ),
    buildSdkApp(
      {
        path: '/guarded',
        routes: route(GUARD_WALLETS['price-rise'], () => (raised ? '$0.05' : '$0.01')),
        build: (app) => app.get('/guarded', (c) => c.json(guarded)),
      },
      facilitators,
    ),
  ]);
  const servers: Listening[] = [];
  try {
    for (const spec of specs) servers.push(await listenSeller(spec, '127.0.0.1'));
    servers.push(
      await listenSeller({ kind: 'http', path: '/guarded', listener: hangingSeller(held) }, '127.0.0.1'),
    );
  } catch (error) {
    await Promise.allSettled(servers.map((s) => s.close()));
    throw error;
  }
  const [honest, bait, rise, hanging] = servers.map((s) => s.url) as [string, string, string, string];
  return {
    urls: { honest, 'bait-wallet': bait, 'price-rise': rise, 'hanging-settlement': hanging },
    raisePrice: () => {
      raised = true;
    },
    hangingPayments: () => [...held],
    close: async () => {
      await Promise.allSettled(servers.map((s) => s.close()));
    },
  };
}

/** An honest 402 to unpaid requests; a paid one is recorded and left without an answer (its socket stays open). */
function hangingSeller(held: string[]) {
  return (request: IncomingMessage, response: ServerResponse) => {
    const payment = request.headers['payment-signature'] ?? request.headers['x-payment'];
    if (typeof payment === 'string') {
      held.push(payment);
      return;
    }
    const url = `http://${request.headers.host}${request.url}`;
    sendV2(
      response,
      v2Required(
        url,
        [v2Accept(BASE, BASE_USDC_TOKEN, GUARD_WALLETS['hanging-settlement'])],
        'A guarded resource',
      ),
    );
  };
}
