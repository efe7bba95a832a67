/**
 * Writes `core/_sdk-networks.ts`: the canonical USDC of each mainnet in `@x402/evm`'s `DEFAULT_ASSETS` (the asset
 * the official SDK resolves `"$0.01"` to, kept only where it is USDC and viem does not mark the chain a testnet),
 * and the SDK's v1 network names. `core/` reads the table instead of importing the SDK and viem's chain list, which
 * are about 1,300 modules and half a second of start-up on every thread that checks an endpoint.
 *
 * Run `npm run sdk-networks` after upgrading `@x402/evm` or viem; `test/unit/core/sdk-networks.test.ts` fails
 * until the table matches them.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_ASSETS } from '@x402/evm';
import { EVM_NETWORK_CHAIN_ID_MAP } from '@x402/evm/v1';
import * as chains from 'viem/chains';
import type { Usdc } from '../core/_sdk-networks.ts';
import { evmChainId } from '../core/networks.ts';

/** The table as the SDK and viem give it today. */
export function sdkNetworks(): { mainnetUsdc: Usdc[]; v1ChainIds: Record<string, number> } {
  const testnets = new Set(
    Object.values(chains as Record<string, { id?: unknown; testnet?: unknown }>)
      .filter((chain) => chain.testnet === true)
      .map((chain) => chain.id),
  );
  const mainnetUsdc: Usdc[] = [];
  for (const [network, [first]] of Object.entries(DEFAULT_ASSETS)) {
    if (first?.symbol !== 'USDC' || testnets.has(evmChainId(network))) continue;
    const { asset, name, version, decimals } = first;
    mainnetUsdc.push({ network, asset, name, version, decimals });
  }
  return { mainnetUsdc, v1ChainIds: { ...(EVM_NETWORK_CHAIN_ID_MAP as Record<string, number>) } };
}

function render(): string {
  const { mainnetUsdc, v1ChainIds } = sdkNetworks();
  return `/**
 * Written by \`npm run sdk-networks\` (scripts/sdk-networks.ts) from @x402/evm and viem: do not edit by hand.
 * \`test/unit/core/sdk-networks.test.ts\` fails when it no longer matches them.
 */

/** A canonical USDC: its network (CAIP-2), token address and EIP-712 domain name and version, decimals. */
export type Usdc = { network: string; asset: string; name: string; version: string; decimals: number };

/** The canonical USDC of each EVM mainnet in the SDK's \`DEFAULT_ASSETS\`. */
export const SDK_MAINNET_USDC: readonly Usdc[] = ${JSON.stringify(mainnetUsdc)};

/** The SDK's v1 network names and their chain ids (\`EVM_NETWORK_CHAIN_ID_MAP\`). */
export const SDK_V1_CHAIN_IDS: Readonly<Record<string, number>> = ${JSON.stringify(v1ChainIds)};
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = fileURLToPath(new URL('../core/_sdk-networks.ts', import.meta.url));
  writeFileSync(file, render());
  execFileSync('npx', ['biome', 'format', '--write', file], { stdio: 'inherit' });
}
