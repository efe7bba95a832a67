/**
 * Catalog items of the shape the public discovery lists publish (docs/x402.md §6.2): `resource`, `type`,
 * `x402Version`, `accepts[]` (`scheme`, `network`, `amount` or `maxAmountRequired`, `asset`, `payTo`,
 * `maxTimeoutSeconds`, `extra`), `lastUpdated`, `metadata`, `serviceName`, `tags`, `description`, `iconUrl`,
 * `extensions`, `curated`. Written for the sandbox from those field lists (no copied data): the real-shape catalog
 * (`sandbox/real-catalog.ts`) and the parsing tests use them.
 */
import { BASE, BASE_USDC, canonicalUsdc, SOLANA } from '../core/networks.ts';

/** One option as a catalog writes it. */
export type CatalogOption = {
  network: string;
  asset: string;
  payTo: string;
  /** The v2 field; every item carries it. */
  amount?: string;
  /** The v1 field; about one item in eight carries it too. */
  maxAmountRequired?: string;
};

/** What one catalog item says. */
export type CatalogItemSpec = {
  url: string;
  method?: 'GET' | 'POST';
  x402Version?: 1 | 2;
  options: CatalogOption[];
  serviceName?: string;
  tags?: string[];
  description?: string;
  iconUrl?: string;
  /** ISO string or Unix seconds, as the lists vary. */
  lastUpdated?: string | number;
  query?: Record<string, string>;
  body?: Record<string, unknown>;
  curated?: boolean;
};

/** A catalog item with every published member. */
export function catalogItem(spec: CatalogItemSpec) {
  const method = spec.method ?? 'GET';
  const input = {
    type: 'http',
    method,
    ...(spec.query ? { queryParams: spec.query } : {}),
    ...(spec.body ? { bodyType: 'json', body: spec.body } : {}),
  };
  return {
    resource: spec.url,
    type: 'http',
    x402Version: spec.x402Version ?? 2,
    accepts: spec.options.map((o) => ({
      scheme: 'exact',
      network: o.network,
      ...(o.amount === undefined ? {} : { amount: o.amount }),
      ...(o.maxAmountRequired === undefined ? {} : { maxAmountRequired: o.maxAmountRequired }),
      asset: o.asset,
      payTo: o.payTo,
      maxTimeoutSeconds: 60,
      extra: { name: 'USD Coin', version: '2' },
    })),
    lastUpdated: spec.lastUpdated ?? '2026-03-01T12:00:00.000Z',
    metadata: { listedBy: 'sandbox' },
    ...(spec.serviceName === undefined ? {} : { serviceName: spec.serviceName }),
    tags: spec.tags ?? [],
    ...(spec.description === undefined ? {} : { description: spec.description }),
    ...(spec.iconUrl === undefined ? {} : { iconUrl: spec.iconUrl }),
    extensions: { bazaar: { info: { input } } },
    curated: spec.curated ?? false,
  };
}

/** The USDC of a supported network (throws for one without: a fixture mistake). */
export function usdcOf(network: string): string {
  const usdc = canonicalUsdc(network);
  if (usdc === null) throw new TypeError(`no canonical USDC for ${network}`);
  return usdc.asset;
}

/**
 * Every network and asset form the public lists carry, each with what Spotcheck reads from it: the network as
 * normalized, and the listing note (null: a USD price is read).
 */
export function networkForms(payTo: string) {
  const evm = (network: string) => ({ network, asset: usdcOf(network), payTo, amount: '10000' });
  return [
    { label: 'Base', option: evm(BASE), network: BASE, note: null },
    {
      label: 'Base by its v1 name, priced by maxAmountRequired',
      version: 1 as const,
      option: { network: 'base', asset: BASE_USDC, payTo, maxAmountRequired: '10000' },
      network: BASE,
      note: null,
    },
    { label: 'Polygon', option: evm('eip155:137'), network: 'eip155:137', note: null },
    { label: 'Arbitrum', option: evm('eip155:42161'), network: 'eip155:42161', note: null },
    { label: 'Monad', option: evm('eip155:143'), network: 'eip155:143', note: null },
    {
      label: 'World Chain',
      option: {
        network: 'eip155:480',
        asset: '0x79A02482A880bCE3F13e09Da970dC34db4CD24d1',
        payTo,
        amount: '10000',
      },
      network: 'eip155:480',
      note: 'network_unsupported',
    },
    {
      label: 'Solana',
      option: {
        network: SOLANA,
        asset: usdcOf(SOLANA),
        payTo: 'So1anaPayee1111111111111111111111111111111',
        amount: '10000',
      },
      network: SOLANA,
      note: null,
    },
    {
      label: 'aws:base',
      option: { network: 'aws:base', asset: BASE_USDC, payTo, amount: '10000' },
      network: 'aws:base',
      note: 'network_unsupported',
    },
    {
      label: 'iso4217:usd',
      option: { network: 'iso4217:usd', asset: 'USD', payTo, amount: '1' },
      network: 'iso4217:usd',
      note: 'network_unsupported',
    },
    {
      label: 'Base in another token',
      option: { network: BASE, asset: '0x4200000000000000000000000000000000000006', payTo, amount: '10000' },
      network: BASE,
      note: 'asset_not_usdc',
    },
  ] as const;
}
