import { describe, expect, it } from 'vitest';
import { SDK_MAINNET_USDC, SDK_V1_CHAIN_IDS } from '../../../core/_sdk-networks.ts';
import { BASE, BASE_USDC, canonicalUsdc, networkFromV1Name } from '../../../core/networks.ts';
import { sdkNetworks } from '../../../scripts/sdk-networks.ts';

describe('core/_sdk-networks.ts', () => {
  it('matches @x402/evm and viem as installed (npm run sdk-networks rewrites it)', () => {
    const fresh = sdkNetworks();
    expect(SDK_MAINNET_USDC).toEqual(fresh.mainnetUsdc);
    expect(SDK_V1_CHAIN_IDS).toEqual(fresh.v1ChainIds);
  });

  it('keeps Base USDC and leaves testnets and non-USDC defaults out', () => {
    expect(canonicalUsdc(BASE)?.asset).toBe(BASE_USDC);
    expect(canonicalUsdc('eip155:84532')).toBeNull(); // Base Sepolia: USDC, but a testnet
    expect(canonicalUsdc('eip155:988')).toBeNull(); // Stable: its default asset is USDT0
  });

  it("maps only the SDK's own v1 names, not inherited keys", () => {
    expect(networkFromV1Name('base')).toBe(BASE);
    expect(networkFromV1Name('constructor')).toBeNull();
    expect(networkFromV1Name('toString')).toBeNull();
  });
});
