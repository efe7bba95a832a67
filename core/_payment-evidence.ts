/**
 * The chain evidence of the payment-status check: what the chain reader (`io/chain-reader.ts`) is asked and what
 * each RPC source reported about one EIP-3009 authorization. Internal to `core/payment-status.ts`, whose rules
 * read it.
 */
import type { Hex, PaymentStatusQuery } from './payment-input.ts';

/** What the chain reader asks about: the authorization (from, nonce) and/or a settlement transaction. */
export type ChainQuery = Pick<PaymentStatusQuery, 'from' | 'nonce' | 'txHash' | 'validAfter' | 'validBefore'>;

/** Where an `AuthorizationUsed` or `AuthorizationCanceled` event was found. */
export type LogRef = { txHash: Hex; blockNumber: number };
/** A USDC `Transfer` as its log carries it. */
export type TransferEvidence = { from: Hex; to: Hex; value: bigint };
/** The receipt of a transaction: the one that emitted the event, or the `tx_hash` sent. */
export type ReceiptEvidence = {
  txHash: Hex;
  status: 'success' | 'reverted';
  blockNumber: number;
  /** The USDC `Transfer` out of the authorizer in this transaction, if any. */
  transfer: TransferEvidence | null;
};
/** An authorization recovered from a transaction (its logs or its calldata) when only `tx_hash` was sent. */
export type RecoveredAuthorization = {
  from: Hex;
  nonce: Hex;
  to: Hex | null;
  value: bigint | null;
  validAfter: bigint | null;
  validBefore: bigint | null;
};

/** What one RPC source reported. A source that failed has `ok: false`, its error, and nulls elsewhere. */
export type SourceEvidence = {
  name: string;
  ok: boolean;
  head: number | null;
  /** Unix seconds of the head block. */
  headTime: number | null;
  /** `authorizationState(from, nonce)` at the head: true for used or canceled; null when (from, nonce) is unknown. */
  nonceUsed: boolean | null;
  usedLog: LogRef | null;
  canceledLog: LogRef | null;
  receipt: ReceiptEvidence | null;
  recovered: RecoveredAuthorization | null;
  error: string | null;
  rpcCalls: number;
};

/** What every configured RPC source reported, failed ones included. */
export type ChainEvidence = { sources: SourceEvidence[] };
