/**
 * A facilitator client for when no chain is running. It advertises the `exact` scheme so the SDK sellers can
 * initialize and answer unpaid requests with a real 402, and it refuses every verify and settle: probes are
 * unpaid and never reach it, so a refusal only ever shows up if someone really tries to pay without a chain.
 */
import type { FacilitatorClient } from '@x402/core/server';
import type {
  Network,
  PaymentRequirements,
  SettleResponse,
  SupportedResponse,
  VerifyResponse,
} from '@x402/core/types';
import { BASE, BASE_SEPOLIA, POLYGON } from './constants.ts';

/** Networks the offline facilitator reports; Polygon is there because `sdk-two-options` quotes on it. */
export const OFFLINE_NETWORKS = [BASE, BASE_SEPOLIA, POLYGON] as const;

const REFUSAL = 'offline_facilitator';
const MESSAGE = 'sandbox offline facilitator: no chain is running, payments cannot be verified or settled';

/** Builds the offline facilitator client (exact v2 on {@link OFFLINE_NETWORKS}; verify/settle refuse). */
export function createOfflineFacilitator(networks: readonly Network[] = OFFLINE_NETWORKS): FacilitatorClient {
  const supported: SupportedResponse = {
    kinds: networks.map((network) => ({ x402Version: 2, scheme: 'exact', network })),
    extensions: [],
    signers: {},
  };
  return {
    async getSupported() {
      return structuredClone(supported);
    },
    async verify(): Promise<VerifyResponse> {
      return { isValid: false, invalidReason: REFUSAL, invalidMessage: MESSAGE };
    },
    async settle(_payload, requirements: PaymentRequirements): Promise<SettleResponse> {
      return {
        success: false,
        errorReason: REFUSAL,
        errorMessage: MESSAGE,
        transaction: '',
        network: requirements.network,
      };
    },
  };
}
