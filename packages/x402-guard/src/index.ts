/**
 * `@spotcheck/x402-guard`: Spotcheck inside an x402 client's payment path. See README.md.
 */
export {
  attachGuard,
  type CreationContext,
  type Guard,
  type GuardableClient,
  type ResponseContext,
} from './guard.ts';
export { caip2Network, requirementSha256, requirementTerms, type Terms, termsSha256 } from './terms.ts';
export type { GuardEvent, GuardExpectations, GuardOptions, PaymentStatusAnswer } from './types.ts';
