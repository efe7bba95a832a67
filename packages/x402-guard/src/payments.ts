/**
 * The payments a guarded client signed whose outcome is not known to be a settlement: kept per resource URL until a
 * settlement is seen, or until payment status says a new signature is safe. A payment is `sent` from its creation;
 * it becomes `unknown` when its request failed without a settlement (a transport error, a settle failure, a refusal
 * after the payment was sent), `landed` when payment status found it on chain.
 */
import type { PaymentStatusAnswer } from './types.ts';

/** The request a payment was made in, while the guard tracks it (`guard.track`). */
export type Call = { url: string; method: string; live: boolean };

/** One signed payment. */
export type PaymentRecord = {
  /** Normalized URL of the resource paid for. */
  url: string;
  /** The payload object the client created (compared by identity with what its hooks see later). */
  payload: object;
  /** The payload as sent: base64 of its JSON, the `PAYMENT-SIGNATURE` / `X-PAYMENT` value. */
  header: string;
  state: 'sent' | 'unknown' | 'landed';
  /** The tracked request it was made in; null when the client is used without `guard.track`. */
  call: Call | null;
  /** What payment status said when it found the payment landed. */
  landed: PaymentStatusAnswer | null;
};

/** The ledger of one guard. */
export type Payments = {
  add(record: PaymentRecord): void;
  /** The record of a payload object, if it is still kept. */
  find(payload: object): PaymentRecord | null;
  /** Forgets one payment (settled, or safe to sign again). */
  remove(record: PaymentRecord): void;
  /**
   * The payments of `url` that may still land: every kept one except those still in flight in a live tracked
   * request. Untracked `sent` payments count: without `guard.track` a request that threw is never reported.
   */
  unresolved(url: string): PaymentRecord[];
  /** Forgets every payment of `url` (the caller's decision after a `landed`). */
  forget(url: string): void;
  /** Every kept payment, oldest first. */
  all(): PaymentRecord[];
};

/** At most this many payments are kept per URL, and this many URLs (oldest first out). */
const MAX_PER_URL = 64;
const MAX_URLS = 4096;

/** Creates an empty ledger. */
export function createPayments(): Payments {
  const byUrl = new Map<string, PaymentRecord[]>();
  return {
    add(record) {
      const list = byUrl.get(record.url) ?? [];
      list.push(record);
      if (list.length > MAX_PER_URL) list.splice(0, list.length - MAX_PER_URL);
      byUrl.delete(record.url);
      byUrl.set(record.url, list);
      while (byUrl.size > MAX_URLS) {
        const oldest = byUrl.keys().next().value;
        if (oldest === undefined) break;
        byUrl.delete(oldest);
      }
    },
    find(payload) {
      for (const list of byUrl.values())
        for (const record of list) if (record.payload === payload) return record;
      return null;
    },
    remove(record) {
      const list = byUrl.get(record.url);
      if (!list) return;
      const kept = list.filter((item) => item !== record);
      if (kept.length === 0) byUrl.delete(record.url);
      else byUrl.set(record.url, kept);
    },
    unresolved(url) {
      return (byUrl.get(url) ?? []).filter((r) => !(r.state === 'sent' && r.call !== null && r.call.live));
    },
    forget(url) {
      byUrl.delete(url);
    },
    all() {
      return [...byUrl.values()].flat();
    },
  };
}

/** The `PAYMENT-SIGNATURE` (v2) / `X-PAYMENT` (v1) value of a payload: base64 of its JSON, as the x402 SDK sends it. */
export function encodePayload(payload: object): string {
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64');
}

/**
 * A URL as the guard keys it: parsed and printed back (lower-case scheme and host, default port dropped), without
 * its fragment. Null when it is not an absolute URL.
 */
export function normalizeUrl(url: string): string | null {
  try {
    const parsed = new URL(url);
    parsed.hash = '';
    return parsed.href;
  } catch {
    return null;
  }
}
