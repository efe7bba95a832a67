/**
 * EIP-3009 authorizations as a buyer signs them, and the x402 payment headers that carry them: for tests,
 * benchmarks and the demo that need a payment they control (unsubmitted, canceled, replayed), and the relayer
 * that submits or cancels them on the sandbox chain.
 */
import { createWalletClient, type Hex, http, keccak256, parseAbi, toHex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { type Chain, localBase } from './chain.ts';
import { BASE_USDC_ADDRESS, fiatTokenAbi } from './fiat-token.ts';

export type Authorization = {
  from: Hex;
  to: Hex;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
};

const TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/** The USDC EIP-712 domain on the sandbox chain, the same as Base mainnet's (docs/x402.md §3.1). */
export const usdcDomain = {
  name: 'USD Coin',
  version: '2',
  chainId: 8453,
  verifyingContract: BASE_USDC_ADDRESS as Hex,
} as const;

/** Signs a TransferWithAuthorization; the nonce is fresh unless given. */
export async function signAuthorization(
  buyer: PrivateKeyAccount,
  terms: { to: Hex; value: bigint; validBefore: bigint; validAfter?: bigint; nonce?: Hex },
): Promise<{ auth: Authorization; signature: Hex }> {
  const auth: Authorization = {
    from: buyer.address,
    to: terms.to,
    value: terms.value,
    validAfter: terms.validAfter ?? 0n,
    validBefore: terms.validBefore,
    nonce: terms.nonce ?? keccak256(toHex(`${buyer.address}-${performance.now()}-${Math.random()}`)),
  };
  const signature = await buyer.signTypedData({
    domain: usdcDomain,
    types: TYPES,
    primaryType: 'TransferWithAuthorization',
    message: auth,
  });
  return { auth, signature };
}

/** Submits a signed authorization from the relayer, which pays the gas; resolves to the transaction hash. A
 *  fixed `gas` skips estimation, so a transfer the token refuses still lands as a reverted transaction. */
export function submitAuthorization(
  chain: Chain,
  auth: Authorization,
  signature: Hex,
  options: { gas?: bigint } = {},
): Promise<Hex> {
  return relayer(chain).writeContract({
    address: chain.usdc,
    abi: fiatTokenAbi,
    functionName: 'transferWithAuthorization',
    args: [auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce, signature],
    ...(options.gas === undefined ? {} : { gas: options.gas }),
  });
}

// fiat-token.ts types only what the installer and the transfer need; cancellation is EIP-3009's other half.
const cancelAbi = parseAbi([
  'function cancelAuthorization(address authorizer, bytes32 nonce, bytes signature)',
]);

/** The buyer signs a CancelAuthorization for `auth`'s nonce and the relayer submits it; resolves to the hash. */
export async function cancelAuthorization(
  chain: Chain,
  buyer: PrivateKeyAccount,
  auth: Authorization,
): Promise<Hex> {
  const signature = await buyer.signTypedData({
    domain: usdcDomain,
    types: {
      CancelAuthorization: [
        { name: 'authorizer', type: 'address' },
        { name: 'nonce', type: 'bytes32' },
      ],
    },
    primaryType: 'CancelAuthorization',
    message: { authorizer: auth.from, nonce: auth.nonce },
  });
  return relayer(chain).writeContract({
    address: chain.usdc,
    abi: cancelAbi,
    functionName: 'cancelAuthorization',
    args: [auth.from, auth.nonce, signature],
  });
}

const relayer = (chain: Chain) =>
  createWalletClient({
    account: chain.accounts.relayer,
    chain: localBase(chain.rpcUrl),
    transport: http(chain.rpcUrl),
  });

const wire = (auth: Authorization) => ({
  ...auth,
  value: auth.value.toString(),
  validAfter: auth.validAfter.toString(),
  validBefore: auth.validBefore.toString(),
});
const base64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');

/** The v2 `PAYMENT-SIGNATURE` value a buyer would send for this authorization (exact scheme, Base USDC). */
export function v2PaymentHeader(auth: Authorization, signature: Hex): string {
  return base64({
    x402Version: 2,
    payload: { authorization: wire(auth), signature },
    accepted: {
      scheme: 'exact',
      network: 'eip155:8453',
      amount: auth.value.toString(),
      asset: BASE_USDC_ADDRESS,
      payTo: auth.to,
      maxTimeoutSeconds: 300,
      extra: { name: 'USD Coin', version: '2' },
    },
  });
}

/** The v1 `X-PAYMENT` value for the same authorization. */
export function v1PaymentHeader(auth: Authorization, signature: Hex): string {
  return base64({
    x402Version: 1,
    scheme: 'exact',
    network: 'base',
    payload: { authorization: wire(auth), signature },
  });
}
