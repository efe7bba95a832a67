/**
 * Confidence in a verdict (docs/api.md §2.1 `confidence`, docs/api.md §2.1).
 */

/** docs/api.md §2.1 `confidence`. */
export type Confidence = 'high' | 'medium' | 'low';

/** The facts confidence depends on. */
export type ConfidenceInput = {
  /** The probe was made for this call, not reused from the 5-minute cache. */
  fresh: boolean;
  /** The challenge needed a lenient decode (`Challenge.lenient`). */
  lenient: boolean;
  expectedSource: 'request' | 'listing' | null;
  expectedPayTo: string | null;
};

/** The confidence rules in plain words, in the order they are tried, for the rules document. */
export const CONFIDENCE_RULES: readonly { confidence: Confidence; rule: string }[] = [
  {
    confidence: 'low',
    rule: 'No expected wallet was available (neither the caller nor a listing named one), so the wallet asked for could not be compared.',
  },
  {
    confidence: 'medium',
    rule: 'The expectation came from a listing rather than the caller, or the probe was reused from the cache, or the payment terms needed a lenient decode.',
  },
  {
    confidence: 'high',
    rule: 'The probe is fresh, the payment terms decoded cleanly and the expectation came from the caller.',
  },
];

/**
 * Confidence of a verdict. Rules are tried in {@link CONFIDENCE_RULES} order: no expected wallet → `low`;
 * listing-sourced expectation, cached probe or lenient decode → `medium`; otherwise `high`.
 * @example confidence({ fresh: true, lenient: false, expectedSource: 'request', expectedPayTo: '0x…' }) // 'high'
 */
export function confidence(input: ConfidenceInput): Confidence {
  if (input.expectedPayTo === null) return 'low';
  if (input.expectedSource !== 'request' || !input.fresh || input.lenient) return 'medium';
  return 'high';
}
