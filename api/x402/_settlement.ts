/**
 * Reading the facilitator's settle answer. A paid answer is delivered only on a settlement that
 * says what was asked for: a transaction hash (`0x` + 32 bytes), the requirement's network, the price (when the
 * answer gives an amount) and the payer that verify found. Anything else claiming success is a settlement whose
 * outcome is unknown: the buyer gets a 502 and the payment key stays held, as for a settle that timed out.
 */
import type { SettleError, SettleResponse } from '@x402/core/types';
import { atomicToUsdText } from '../../core/amount.ts';
import type { Settlement } from './_types.ts';

/** What a settlement must match: the requirement the payment was verified against, and the verified payer. */
export type SettlementExpectation = {
  /** The network as the facilitator names it for this payment's version (CAIP-2 for v2, `base` for v1). */
  network: string;
  amountAtomic: string;
  /** The payer verify reported (else the payload's `from`). */
  payer: string;
};

/** The three outcomes of a settle answer. */
export type SettleReading =
  | { kind: 'landed'; settlement: Settlement }
  /** Settlement failed or is still pending; `broadcast` when a transaction may be on its way. */
  | { kind: 'failed'; reason: string; broadcast: boolean }
  /** `success: true`, but the answer does not describe the payment asked for. */
  | { kind: 'unverified'; problem: string };

const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

/** Classifies a settle answer against what was verified. */
export function readSettlement(result: SettleResponse, expected: SettlementExpectation): SettleReading {
  if (!result.success) {
    const reason = result.errorReason ?? 'settlement_failed';
    return {
      kind: 'failed',
      reason,
      broadcast: reason === 'settlement_pending' || result.transaction !== '',
    };
  }
  const problem = mismatchOf(result, expected);
  if (problem !== null) return { kind: 'unverified', problem };
  return {
    kind: 'landed',
    settlement: {
      tx: result.transaction,
      payer: expected.payer,
      network: result.network,
      amountAtomic: expected.amountAtomic,
      chargedUsd: atomicToUsdText(expected.amountAtomic),
    },
  };
}

function mismatchOf(result: SettleResponse, expected: SettlementExpectation): string | null {
  if (typeof result.transaction !== 'string' || !TX_HASH.test(result.transaction))
    return 'transaction is not a 32-byte hash';
  if (result.network !== expected.network)
    return `network ${String(result.network)} is not ${expected.network}`;
  if (result.amount !== undefined && result.amount !== expected.amountAtomic)
    return `amount ${String(result.amount)} is not ${expected.amountAtomic}`;
  if (typeof result.payer !== 'string' || result.payer.toLowerCase() !== expected.payer.toLowerCase())
    return `payer ${String(result.payer)} is not the verified payer`;
  return null;
}

/** The settle answer a `SettleError` (the SDK's non-2xx settle) stands for; always a failure. */
export function settleErrorResult(error: SettleError, network: string): SettleResponse {
  return {
    success: false,
    errorReason: error.errorReason ?? error.message,
    transaction: error.transaction ?? '',
    network: (error.network ?? network) as SettleResponse['network'],
    ...(error.errorMessage === undefined ? {} : { errorMessage: error.errorMessage }),
    ...(error.payer === undefined ? {} : { payer: error.payer }),
  };
}
