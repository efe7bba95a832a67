/**
 * Verify and settle for each x402 version, behind one shape so the paid flow is written once.
 *
 * v2 goes through the SDK resource server (requirement matching, extension-echo check, hooks, the single
 * `settlement_pending` retry). v1 (`X-PAYMENT` with `x402Version: 1`, docs/api.md §5.2) goes to the facilitator
 * directly with the equivalent v1 requirements: the resource server only matches v2 networks, and
 * `FacilitatorClient` dispatches on `x402Version` at run time.
 */
import type { FacilitatorClient, x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from '@x402/core/types';
import { EVM_NETWORK_CHAIN_ID_MAP } from '@x402/evm/v1';
import { evmChainId } from '../../core/networks.ts';
import { type OfferQuote, paymentRequiredOf, toV1Requirements } from './_challenge.ts';
import type { PayloadV1 } from './_payment-header.ts';

/** One version's verify and settle for one request. */
export type Driver = {
  x402Version: 1 | 2;
  amountAtomic: string;
  network: string;
  /** The network as the facilitator names it in this version's answers: CAIP-2 for v2, `base` for v1. */
  wireNetwork: string;
  /** Null when the payload targets these requirements; otherwise the 402 error string. May throw when the
   *  facilitator must be asked and cannot be reached. */
  prepare(): Promise<string | null>;
  verify(): Promise<VerifyResponse>;
  settle(): Promise<SettleResponse>;
};

/** The v2 driver: the SDK resource server does the matching and talks to the facilitator. */
export function v2Driver(server: x402ResourceServer, quote: OfferQuote, payload: PaymentPayload): Driver {
  const matched = server.findMatchingRequirements(quote.requirements, payload);
  const requirement = matched ?? quote.requirements[0]!;
  return {
    x402Version: 2,
    amountAtomic: requirement.amount,
    network: requirement.network,
    wireNetwork: requirement.network,
    async prepare() {
      if (!matched) return 'No matching payment requirements';
      const advertised = await paymentRequiredOf(server, quote);
      const echo = server.validateExtensions(advertised, payload);
      return echo.valid ? null : (echo.invalidReason ?? 'extension_echo_mismatch');
    },
    verify: () => server.verifyPayment(payload, requirement, quote.extensions, quote.transport),
    settle: () => server.settlePayment(payload, requirement, quote.extensions, quote.transport),
  };
}

/** Whether the facilitator lists v1 `exact` on `v1Network`; remembered once it has answered. */
export function createV1Support(facilitator: FacilitatorClient, v1Network: string | null) {
  let known: boolean | undefined;
  return async (): Promise<boolean> => {
    if (v1Network === null) return false;
    if (known === undefined) {
      const supported = await facilitator.getSupported();
      known = supported.kinds.some(
        (kind) => kind.x402Version === 1 && kind.scheme === 'exact' && kind.network === v1Network,
      );
    }
    return known;
  };
}

/** The v1 driver: the payload must name `exact` on the v1 name of the seller's network. */
export function v1Driver(
  facilitator: FacilitatorClient,
  supportsV1: () => Promise<boolean>,
  quote: OfferQuote,
  payload: PayloadV1,
  v1Network: string | null,
): Driver {
  const requirement = quote.requirements[0]!;
  const requirementsV1 = toV1Requirements(requirement, quote.resource, v1Network ?? '');
  // FacilitatorClient is typed with the v2 shapes only, though both SDK facilitators (HTTP and in-process)
  // route on `x402Version`; the payload was schema-checked by the header decoder.
  const wirePayload = payload as unknown as PaymentPayload;
  const wireRequirements = requirementsV1 as unknown as PaymentRequirements;
  return {
    x402Version: 1,
    amountAtomic: requirement.amount,
    network: requirement.network,
    wireNetwork: requirementsV1.network,
    async prepare() {
      if (!(await supportsV1())) return 'x402_v1_unsupported';
      if (payload.scheme !== requirementsV1.scheme || payload.network !== requirementsV1.network) {
        return 'No matching payment requirements';
      }
      return null;
    },
    verify: () => facilitator.verify(wirePayload, wireRequirements),
    async settle() {
      // The same single retry the v2 resource server makes (docs/x402.md §8.4): the facilitator reconciles the
      // broadcast transaction instead of sending a second one.
      const first = await facilitator.settle(wirePayload, wireRequirements);
      if (first.success || first.errorReason !== 'settlement_pending' || !first.transaction) return first;
      return facilitator.settle(wirePayload, wireRequirements);
    },
  };
}

/** Rejects when `promise` has not settled within `ms`; the timer never keeps the process alive. */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`facilitator verify timed out after ${ms} ms`)), ms);
    timer.unref?.();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The v1 network name (`base`) of a CAIP-2 EVM network, for v1 payloads; null when v1 has no name for it. */
export function v1NameOf(network: string): string | null {
  const id = evmChainId(network);
  const entry = Object.entries(EVM_NETWORK_CHAIN_ID_MAP as Record<string, number>).find(
    ([, chain]) => chain === id,
  );
  return entry ? entry[0] : null;
}
