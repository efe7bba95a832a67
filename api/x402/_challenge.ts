/**
 * The payment challenge of one offer: v2 requirements built through the SDK's own scheme and resource server,
 * and the equivalent v1 requirements for `X-PAYMENT` v1 payloads (docs/api.md §5.2).
 *
 * `x402ResourceServer.buildPaymentRequirements` refuses to work before `initialize()` has fetched the
 * facilitator's `/supported`, which would make the 402 depend on the facilitator being up. So the accepts are
 * built with the same steps it takes (the scheme's `parsePrice` and `enhancePaymentRequirements`, whose
 * supported-kind argument `ExactEvmScheme` ignores, then the payment-flow wire rule) and the response object
 * comes from `createPaymentRequiredResponse`, which needs no facilitator.
 */
import type {
  HTTPAdapter,
  HTTPRequestContext,
  HTTPTransportContext,
  x402ResourceServer,
} from '@x402/core/server';
import { applyPaymentFlowWireExtra, resolvePaymentFlow } from '@x402/core/server';
import type { PaymentRequired, PaymentRequirements, ResourceInfo } from '@x402/core/types';
import type { ExactEvmScheme } from '@x402/evm/exact/server';
import { declareDiscoveryExtension } from '@x402/extensions/bazaar';
import type { Offer } from './_types.ts';

/** The seller's fixed terms: network, token and its EIP-712 domain, wallet, signing window. */
export type Terms = {
  network: `${string}:${string}`;
  asset: string;
  name: string;
  version: string;
  payTo: string;
  maxTimeoutSeconds: number;
};

/** One offer quoted for one request (its payment challenge, as the seller builds it): everything the flow needs. */
export type OfferQuote = {
  method: string;
  requirements: PaymentRequirements[];
  resource: ResourceInfo;
  extensions: Record<string, unknown> | undefined;
  transport: HTTPTransportContext;
};

/** v1 requirements (docs/x402.md §2.2). The SDK's `PaymentRequirementsV1` types `network` as CAIP-2, but v1 sends
 *  names such as `base`. */
export type RequirementsV1 = {
  scheme: string;
  network: string;
  maxAmountRequired: string;
  resource: string;
  description: string;
  mimeType: string;
  outputSchema: Record<string, unknown>;
  payTo: string;
  maxTimeoutSeconds: number;
  asset: string;
  extra: Record<string, unknown>;
};

/** Splits `'GET /v1/x'` into method and path; a route without a verb is a bug in the offer table. */
export function parseRoute(route: string): { method: string; path: string } {
  const match = /^([A-Z]+)\s+(\/\S*)$/.exec(route.trim());
  if (!match) throw new TypeError(`x402 offer route must look like 'GET /path', got '${route}'`);
  return { method: match[1]!, path: match[2]! };
}

/** Builds the requirements, resource and enriched bazaar declaration of `offer`. */
export async function buildQuote(
  server: x402ResourceServer,
  scheme: ExactEvmScheme,
  terms: Terms,
  offer: Offer,
  request: Request | null,
): Promise<OfferQuote> {
  if (!/^\d{1,30}$/.test(offer.priceAtomic)) {
    throw new TypeError(`x402 offer price must be atomic units, got '${offer.priceAtomic}'`);
  }
  const { method, path } = parseRoute(offer.route);
  const parsed = await scheme.parsePrice(
    { amount: offer.priceAtomic, asset: terms.asset, extra: { name: terms.name, version: terms.version } },
    terms.network,
  );
  const base: PaymentRequirements = {
    scheme: scheme.scheme,
    network: terms.network,
    amount: parsed.amount,
    asset: parsed.asset,
    payTo: terms.payTo,
    maxTimeoutSeconds: terms.maxTimeoutSeconds,
    extra: { ...parsed.extra },
  };
  const requirement = await scheme.enhancePaymentRequirements(
    base,
    { x402Version: 2, scheme: scheme.scheme, network: terms.network },
    [],
  );
  requirement.extra = applyPaymentFlowWireExtra(
    requirement.extra ?? {},
    resolvePaymentFlow(scheme, requirement),
  );

  // The route's declared method, not the request's: a HEAD (or a probe by another verb) must be told the
  // method the bazaar catalogs. routePattern gives `routeTemplate` only for dynamic paths, as in the SDK.
  const context: HTTPRequestContext = {
    adapter: adapterFor(offer, method, path, request),
    path,
    method,
    routePattern: path,
  };
  const declared = offer.discovery ? declareDiscoveryExtension(offer.discovery) : undefined;
  return {
    method,
    requirements: [requirement],
    resource: {
      url: offer.resourceUrl,
      description: offer.description,
      mimeType: offer.mimeType ?? 'application/json',
    },
    extensions: declared ? server.enrichExtensions(declared, context) : undefined,
    transport: { request: context },
  };
}

/** The v2 PaymentRequired object of a quote, carrying `error` when given. */
export function paymentRequiredOf(
  server: x402ResourceServer,
  quote: OfferQuote,
  error?: string,
): Promise<PaymentRequired> {
  return server.createPaymentRequiredResponse(
    quote.requirements,
    quote.resource,
    error,
    quote.extensions,
    quote.transport,
  );
}

/** The v1 requirements equivalent to a v2 requirement, for a facilitator verifying a v1 payload. */
export function toV1Requirements(
  requirement: PaymentRequirements,
  resource: ResourceInfo,
  v1Network: string,
): RequirementsV1 {
  return {
    scheme: requirement.scheme,
    network: v1Network,
    maxAmountRequired: requirement.amount,
    resource: resource.url,
    description: resource.description ?? '',
    mimeType: resource.mimeType ?? 'application/json',
    outputSchema: {},
    payTo: requirement.payTo,
    maxTimeoutSeconds: requirement.maxTimeoutSeconds,
    asset: requirement.asset,
    extra: requirement.extra,
  };
}

function adapterFor(offer: Offer, method: string, path: string, request: Request | null): HTTPAdapter {
  const header = (name: string) => request?.headers.get(name) ?? undefined;
  return {
    getHeader: header,
    getMethod: () => method,
    getPath: () => path,
    getUrl: () => offer.resourceUrl,
    getAcceptHeader: () => header('accept') ?? '',
    getUserAgent: () => header('user-agent') ?? '',
  };
}
