/**
 * How Spotcheck stays welcome on the servers it probes (docs/decisions.md "Politeness"), as figures the crawl, the
 * bazaar check and the watches use and `/rules.json` publishes (`politeness`), so the page a seller reads cannot
 * drift from what runs.
 */
import { OPT_OUT_RULE } from './opt-out.ts';

/** Requests per host per UTC day beyond its listings: the bazaar check and the watches. */
export const HOST_DAILY_BASE = 500;
/** Requests per listed endpoint per day: the bare probe, the example request and two `Retry-After` retries. */
export const HOST_DAILY_PER_LISTING = 4;
/** A crawl's default time budget: 6 hours. A `Retry-After` that would end past it is not waited for. */
export const RUN_BUDGET_MS = 6 * 60 * 60 * 1000;
/** The longest `Retry-After` pause honoured: 10 minutes (a longer one is recorded as answered). */
export const MAX_RETRY_AFTER_MS = 10 * 60 * 1000;
/** Retries of one URL after `Retry-After`, at most. */
export const MAX_RETRIES = 2;

/** The day's request budget of a host listing `listed` endpoints. */
export function hostDailyLimit(listed: number): number {
  return HOST_DAILY_BASE + HOST_DAILY_PER_LISTING * Math.max(0, listed);
}

/** The `politeness` member of `/rules.json`. */
export const POLITENESS_RULES = {
  user_agent:
    'Every request carries User-Agent: Spotcheck/1 (+<this service>/rules; unpaid x402 pre-payment check; opt out: <this service>/rules#opt-out).',
  what_is_probed:
    'One unpaid request per listed URL per crawl (weekly), as listed; the listing’s example parameters only after a 4xx; never a payment. The daily bazaar check asks the top results of one discovery search the same way.',
  opt_out: OPT_OUT_RULE,
  retry_after: `A 429 or 503 with Retry-After pauses the whole host for that long and its URLs are asked again later in the same run: at most ${MAX_RETRIES} times per URL, a pause of at most ${MAX_RETRY_AFTER_MS / 60_000} minutes, and only within the run’s ${RUN_BUDGET_MS / 3_600_000}-hour budget; otherwise the answer is recorded as it came (probe_state rate_limited or server_error).`,
  host_daily_budget: {
    base: HOST_DAILY_BASE,
    per_listed_endpoint: HOST_DAILY_PER_LISTING,
    rule: `At most ${HOST_DAILY_BASE} + ${HOST_DAILY_PER_LISTING} × (endpoints the host lists) requests to one host per UTC day, crawl, bazaar check and watches together; an endpoint its host’s spent budget leaves unasked keeps its last receipt.`,
  },
};
