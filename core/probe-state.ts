/**
 * Why a probe never reached a paywall (docs/data-files.md "Why a listing never reached its paywall"): when the
 * request (and, in a crawl, the listing's example parameters after it) ended before a 402, one code of a small
 * stable vocabulary says which way, so a seller can read what to fix. Published in `/rules.json`, in the receipt's
 * `quality` block (`probe_state`), in the crawl's index lines and skip records. A probe that met a 402 has none: what
 * its terms say is the verdict's business. Metadata only: it never changes a verdict or a reason code.
 */
import type { ProbeOutcome } from './model.ts';

/** The vocabulary, in the order of `/rules.json`. Published: never renamed; new codes are additions. */
export const PROBE_STATES = [
  'needs_input',
  'access_denied',
  'not_found',
  'method_not_allowed',
  'rate_limited',
  'client_error',
  'server_error',
  'answered_without_paywall',
  'redirect_unfollowed',
  'timeout',
  'unreachable',
  'ssrf_blocked',
] as const;

export type ProbeState = (typeof PROBE_STATES)[number];

const TEXT: Record<ProbeState, string> = {
  needs_input:
    'HTTP 400 or 422: the endpoint wants input before its paywall, and the listing’s example parameters (if any) did not satisfy it. List example parameters (bazaar info.input), or answer 402 before validating.',
  access_denied:
    'HTTP 401 or 403: the endpoint refuses an unauthenticated caller before its paywall. x402 asks for payment with a 402, not a login.',
  not_found: 'HTTP 404 or 410: nothing answers at the listed URL. Fix or remove the listing.',
  method_not_allowed:
    'HTTP 405: the listed method is refused (for a listed GET, POST was tried too and did not answer 402). List the method the route takes.',
  rate_limited:
    'HTTP 429: the endpoint limited the request rate, and no retry within the run reached its paywall (Retry-After is honoured within the run’s time budget).',
  client_error: 'Another 4xx status: the request was refused before the paywall.',
  server_error:
    'HTTP 5xx: the endpoint failed before its paywall (503 with Retry-After is retried within the run).',
  answered_without_paywall:
    'A 1xx or 2xx answer: the endpoint served the request without asking for payment.',
  redirect_unfollowed:
    'A 3xx answer without a usable Location: the redirect could not be followed (the probe follows at most 3, each checked).',
  timeout: 'No complete answer within the 5 second budget.',
  unreachable: 'DNS, connection or TLS failure, or more than 3 redirects.',
  ssrf_blocked: 'The address is not a public internet address: it was not contacted.',
};

/** The vocabulary with its plain words, for `/rules.json`. */
export function probeStateRules(): Array<{ code: ProbeState; text: string }> {
  return PROBE_STATES.map((code) => ({ code, text: TEXT[code] }));
}

/**
 * The state of a probe that ended before a 402, or null when it met one. The outcome is the last request made: a
 * crawl's example request when the bare one answered 4xx, and for a listed GET answered 405 the prober's POST retry
 * already tried (`io/probe/prober.ts`), so a 405 here was met by both methods.
 * @example probeStateOf({ kind: 'response', response: { status: 404, … }, … }) // 'not_found'
 */
export function probeStateOf(outcome: ProbeOutcome): ProbeState | null {
  if (outcome.kind === 'blocked') return 'ssrf_blocked';
  if (outcome.kind === 'timeout') return 'timeout';
  if (outcome.kind === 'unreachable') return 'unreachable';
  const status = outcome.response.status;
  if (status === 402) return null;
  if (status === 400 || status === 422) return 'needs_input';
  if (status === 401 || status === 403) return 'access_denied';
  if (status === 404 || status === 410) return 'not_found';
  if (status === 405) return 'method_not_allowed';
  if (status === 429) return 'rate_limited';
  if (status >= 400 && status < 500) return 'client_error';
  if (status >= 500) return 'server_error';
  if (status >= 300 && status < 400) return 'redirect_unfollowed';
  return 'answered_without_paywall';
}

export function isProbeState(value: unknown): value is ProbeState {
  return typeof value === 'string' && (PROBE_STATES as readonly string[]).includes(value);
}
