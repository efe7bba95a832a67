/**
 * The User-Agent every Spotcheck request carries (the live check, the crawl and its sources, the bazaar check): it
 * names Spotcheck and links the rules page, where a seller reads what is probed, how often, and how to opt out
 * (`/rules.json` `politeness`).
 */

/** The product token: `Spotcheck/<major>`. */
export const USER_AGENT_PRODUCT = 'Spotcheck/1';

/**
 * The User-Agent of a service published at `baseUrl` (no trailing slash).
 * @example spotcheckUserAgent('https://spotcheck.example') // 'Spotcheck/1 (+https://spotcheck.example/rules; …)'
 */
export function spotcheckUserAgent(baseUrl: string): string {
  return `${USER_AGENT_PRODUCT} (+${baseUrl}/rules; unpaid x402 pre-payment check; opt out: ${baseUrl}/rules#opt-out)`;
}

/** The User-Agent of a prober built without a base URL: Spotcheck named, no link. */
export const DEFAULT_USER_AGENT = `${USER_AGENT_PRODUCT} (unpaid x402 pre-payment check)`;
