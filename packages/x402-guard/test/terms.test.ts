/**
 * The guard's copy of the SDK's v1 network names: equal to `@x402/evm/v1` as installed, so a name the SDK's client
 * maps to a chain maps to the same CAIP-2 id in the hash the guard asks Spotcheck about.
 */
import { EVM_NETWORK_CHAIN_ID_MAP } from '@x402/evm/v1';
import { describe, expect, it } from 'vitest';
import { caip2Network, V1_CHAIN_IDS } from '../src/terms.ts';

describe('caip2Network', () => {
  it("holds the SDK's v1 EVM names and chain ids, no more and no fewer", () => {
    expect(V1_CHAIN_IDS).toEqual({ ...EVM_NETWORK_CHAIN_ID_MAP });
    for (const [name, id] of Object.entries(EVM_NETWORK_CHAIN_ID_MAP)) {
      expect(caip2Network(name)).toBe(`eip155:${id}`);
    }
  });

  it('keeps CAIP-2 ids (namespace lower-cased) and unknown or inherited names as written', () => {
    expect(caip2Network('EIP155:8453')).toBe('eip155:8453');
    expect(caip2Network('BASE')).toBe('eip155:8453');
    expect(caip2Network('solana')).toBe('solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp');
    expect(caip2Network('toString')).toBe('toString');
    expect(caip2Network('aws:base')).toBe('aws:base');
    expect(caip2Network('base-mainnet')).toBe('base-mainnet');
  });
});
