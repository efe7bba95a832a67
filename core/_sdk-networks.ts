/**
 * Written by `npm run sdk-networks` (scripts/sdk-networks.ts) from @x402/evm and viem: do not edit by hand.
 * `test/unit/core/sdk-networks.test.ts` fails when it no longer matches them.
 */

/** A canonical USDC: its network (CAIP-2), token address and EIP-712 domain name and version, decimals. */
export type Usdc = { network: string; asset: string; name: string; version: string; decimals: number };

/** The canonical USDC of each EVM mainnet in the SDK's `DEFAULT_ASSETS`. */
export const SDK_MAINNET_USDC: readonly Usdc[] = [
  {
    network: 'eip155:8453',
    asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    name: 'USD Coin',
    version: '2',
    decimals: 6,
  },
  {
    network: 'eip155:1',
    asset: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
    name: 'USD Coin',
    version: '2',
    decimals: 6,
  },
  {
    network: 'eip155:43114',
    asset: '0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E',
    name: 'USD Coin',
    version: '2',
    decimals: 6,
  },
  {
    network: 'eip155:143',
    asset: '0x754704Bc059F8C67012fEd69BC8A327a5aafb603',
    name: 'USDC',
    version: '2',
    decimals: 6,
  },
  {
    network: 'eip155:137',
    asset: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359',
    name: 'USD Coin',
    version: '2',
    decimals: 6,
  },
  {
    network: 'eip155:42161',
    asset: '0xaf88d065e77c8cC2239327C5EDb3A432268e5831',
    name: 'USD Coin',
    version: '2',
    decimals: 6,
  },
  {
    network: 'eip155:50',
    asset: '0xfA2958CB79b0491CC627c1557F441eF849Ca8eb1',
    name: 'USDC',
    version: '2',
    decimals: 6,
  },
  {
    network: 'eip155:38833',
    asset: '0xA5b8BF902b2844dA17d4506cc827F7F1681735E7',
    name: 'USDC',
    version: '1',
    decimals: 6,
  },
  {
    network: 'eip155:42220',
    asset: '0xcebA9300f2b948710d2653dD7B07f33A8B32118C',
    name: 'USDC',
    version: '2',
    decimals: 6,
  },
  {
    network: 'eip155:1329',
    asset: '0xe15fC38F6D8c56aF07bbCBe3BAf5708A2Bf42392',
    name: 'USDC',
    version: '2',
    decimals: 6,
  },
];

/** The SDK's v1 network names and their chain ids (`EVM_NETWORK_CHAIN_ID_MAP`). */
export const SDK_V1_CHAIN_IDS: Readonly<Record<string, number>> = {
  ethereum: 1,
  sepolia: 11155111,
  abstract: 2741,
  'abstract-testnet': 11124,
  'base-sepolia': 84532,
  base: 8453,
  'avalanche-fuji': 43113,
  avalanche: 43114,
  iotex: 4689,
  sei: 1329,
  'sei-testnet': 1328,
  polygon: 137,
  'polygon-amoy': 80002,
  peaq: 3338,
  story: 1514,
  educhain: 41923,
  'skale-base-sepolia': 324705682,
  megaeth: 4326,
  monad: 143,
  stable: 988,
  'stable-testnet': 2201,
  celo: 42220,
  flare: 14,
};
