/**
 * The sandbox seller fleet: x402 sellers built with the official SDK plus hand-written ones the SDK would never
 * produce, each on its own loopback port, with the verdict docs/api.md §3.1 gives for each (see README.md).
 */
import type { FacilitatorClient } from '@x402/core/server';
import { type Address, FLEET_WALLET } from './constants.ts';
import { buildExpectations, type Expectation, type SellerName } from './expectations.ts';
import { type HandwrittenName, handwritten } from './handwritten.ts';
import { listenSeller } from './listen.ts';
import { createOfflineFacilitator } from './offline-facilitator.ts';
import { buildSdkSeller, SDK_NAMES, type SdkName } from './sdk.ts';
import { type TransportName, transport } from './transport.ts';
import type { SellerSpec } from './types.ts';

export {
  ATTACKER_WALLET,
  BASE_DAI,
  BASE_USDC_TOKEN,
  FLEET_WALLET,
  LISTING_WALLET,
  LOOKALIKE_USDC,
  POLYGON_USDC_TOKEN,
  ROTATING_WALLETS,
} from './constants.ts';
export type { Expectation, ExpectedPayment, SellerName, VariantRequest } from './expectations.ts';
export { BIG_DESCRIPTION_CHARS } from './handwritten.ts';
export { createOfflineFacilitator, OFFLINE_NETWORKS } from './offline-facilitator.ts';
export { DRIP_SECONDS, HUGE_BODY_BYTES } from './transport.ts';

export type SellerFleetOptions = {
  /** Interface to listen on; default `127.0.0.1`. */
  host?: string;
  /**
   * Facilitator of the SDK sellers (e.g. the sandbox's HTTP facilitator on anvil). The offline facilitator is
   * always appended after it, so networks it does not settle (Base Sepolia, Polygon) still initialize; the
   * given facilitator wins on every network it reports. Default: the offline facilitator alone.
   */
  facilitator?: FacilitatorClient;
  /** Wallet of the honest sellers; default {@link FLEET_WALLET}. */
  payTo?: Address;
};

export type SellerFleet = {
  /** Absolute URL of each seller's paid route. */
  urls: Record<SellerName, string>;
  /** The honest sellers' wallet. */
  payTo: Address;
  /** The verdict docs/api.md §3.1 gives for an unpaid probe of each URL with default expectations. */
  expectations: Record<SellerName, Expectation>;
  /** Stops every seller and destroys its open sockets; safe to call twice. */
  close(): Promise<void>;
};

// Every expectation has a seller and every seller an expectation (a type error here otherwise).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
true satisfies Same<SdkName | HandwrittenName | TransportName, SellerName>;

/** Every seller name, in table order. */
export const SELLER_NAMES = Object.keys(buildExpectations(FLEET_WALLET)) as SellerName[];

/** Starts the whole fleet on OS-assigned ports. */
export async function startSellers(options: SellerFleetOptions = {}): Promise<SellerFleet> {
  const host = options.host ?? '127.0.0.1';
  const payTo = options.payTo ?? FLEET_WALLET;
  const offline = createOfflineFacilitator();
  const facilitators = options.facilitator ? [options.facilitator, offline] : [offline];

  const specs = new Map<SellerName, Promise<SellerSpec>>();
  for (const name of SDK_NAMES) specs.set(name, buildSdkSeller(name, { payTo, facilitators }));
  for (const [name, make] of Object.entries(handwritten)) {
    specs.set(
      name as SellerName,
      Promise.resolve({ kind: 'http', path: `/${name}`, listener: make({ payTo }) }),
    );
  }
  for (const [name, make] of Object.entries(transport))
    specs.set(name as SellerName, Promise.resolve(make({ payTo })));

  const results = await Promise.allSettled(
    [...specs].map(async ([name, spec]) => [name, await listenSeller(await spec, host)] as const),
  );
  const started = new Map(results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])));
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) {
    await Promise.allSettled([...started.values()].map((s) => s.close()));
    throw new Error('sandbox: the seller fleet failed to start', { cause: failed.reason });
  }
  const urls = Object.fromEntries(SELLER_NAMES.map((name) => [name, started.get(name)!.url])) as Record<
    SellerName,
    string
  >;
  let closing: Promise<void> | null = null;
  return {
    urls,
    payTo,
    expectations: buildExpectations(payTo),
    close: () => {
      closing ??= Promise.all([...started.values()].map((s) => s.close())).then(() => undefined);
      return closing;
    },
  };
}
