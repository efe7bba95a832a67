/**
 * How listing sources are fetched: one GET through the same SSRF-gated, pinned prober as the live check
 * (`io/probe/prober.ts`), with a larger body cap and budget, because a discovery page is bigger than a 402. Source URLs
 * are as hostile as endpoints: a private address is refused, and loopback only passes through
 * `PROBE_ALLOW_CIDRS`. Never throws: a failure is a note for the source's report.
 */
import type { Prober } from '../../io/probe/prober.ts';

/** What fetching one source URL gave: parsed JSON, or a plain-words note of why not. */
export type FetchJsonResult = { ok: true; value: unknown } | { ok: false; note: string };

/** Fetches one URL and parses its JSON body (the injected seam of every URL source). */
export type FetchJson = (url: string) => Promise<FetchJsonResult>;

/** Largest source answer read: 16 MiB (a CDP page of 1000 items is about 2 MiB). */
export const SOURCE_MAX_BYTES = 16 * 1024 * 1024;
/** Budget of one source request, DNS to last byte. */
export const SOURCE_TIMEOUT_MS = 30_000;

/**
 * A {@link FetchJson} over a prober built with `maxBodyBytes: SOURCE_MAX_BYTES, timeoutMs: SOURCE_TIMEOUT_MS`.
 * @example const fetchJson = fetchJsonVia(createProber({ allow, maxBodyBytes: SOURCE_MAX_BYTES, timeoutMs: SOURCE_TIMEOUT_MS }))
 */
export function fetchJsonVia(prober: Prober): FetchJson {
  return async (url) => {
    const outcome = await prober.probe(url, 'GET');
    if (outcome.kind === 'blocked')
      return { ok: false, note: `refused by the SSRF gate (${outcome.detail})` };
    if (outcome.kind === 'timeout') return { ok: false, note: `timed out (${outcome.detail})` };
    if (outcome.kind === 'unreachable') return { ok: false, note: `unreachable (${outcome.detail})` };
    const { status, body, bodyTruncated } = outcome.response;
    if (status !== 200) return { ok: false, note: `answered HTTP ${status}` };
    if (bodyTruncated) return { ok: false, note: 'the answer was cut short or is over the size cap' };
    if (body === null) return { ok: false, note: 'the answer is empty' };
    try {
      return { ok: true, value: JSON.parse(body) as unknown };
    } catch {
      return { ok: false, note: 'the answer is not JSON' };
    }
  };
}
