/**
 * The payment-status check (docs/api.md §1.3, §2.7, §3.2): read the chain sources about one EIP-3009 authorization,
 * decide its status with the pure rules of `core/payment-status.ts`, and durably issue a signed `ps-` receipt.
 * Every tier runs this same code; the route only adds `access` (docs/api.md §1, pricing principle).
 *
 * `seller_url` is probed unpaid through the same SSRF-gated prober and 5-minute probe cache as the check, so a
 * payment-status call never makes a seller see more requests than a check of the same URL would.
 */
import type { PaymentStatusAnswer, WithoutAccess } from '../core/answer-schemas.ts';
import { decodeChallenge } from '../core/challenge.ts';
import { BASE_USDC } from '../core/networks.ts';
import type { PaymentStatusQuery } from '../core/payment-input.ts';
import {
  type ChainEvidence,
  type ChainQuery,
  decidePaymentStatus,
  type ExpectedTerms,
  expectedTermsFromChallenge,
  noSourceAnswered,
} from '../core/payment-status.ts';
import { newReceiptId, receiptUrlOf } from '../core/receipt.ts';
import { normalizeUrl } from '../core/url.ts';
import { createChainReader } from '../io/chain-reader.ts';
import { cachedProbe } from '../io/probe/probe-cache.ts';
import type { CheckAccess, CheckDeps, ReceiptAccess } from './check.ts';

/** What the route needs of the chain reader (`io/chain-reader.ts`); tests put a fake here. */
export type ChainReaderLike = { read(query: ChainQuery): Promise<ChainEvidence> };

export type PaymentStatusDeps = Pick<
  CheckDeps,
  'prober' | 'probeCache' | 'ledger' | 'now' | 'random' | 'baseUrl'
> & {
  chain: ChainReaderLike;
};

/** Who an unpaid answer is for: the receipt records the tier, and a free use is committed with the receipt. */
export type PaymentStatusAccess = Omit<CheckAccess, 'checkType'>;

/** The docs/api.md §2.7 answer without `access` (`PaymentStatusAnswerSchema`); `receipt` is the signed copy. */
type StatusBody = WithoutAccess<PaymentStatusAnswer>;

/** No chain source answered: the route answers 503 and charges nothing (docs/api.md §7). */
type NoChain = { ok: false; code: 'chain_unavailable'; errors: string[] };

export type PaymentStatusOutcome = { ok: true; body: StatusBody; rpcCalls: number } | NoChain;

/** A payment-status answer decided but not yet issued: nothing of it is written until `issue` is called. */
export type PaymentStatusDraft = {
  ok: true;
  rpcCalls: number;
  /** Signs the `ps-` receipt with `access`, journals it (resolving once fsynced), publishes it; resolves with the
   *  answer, signed copy included. */
  issue(access: ReceiptAccess, attached: PaymentStatusAccess['attached']): Promise<StatusBody>;
};

/** Per-source budget of the live service (ms): two sources are read in parallel, so this bounds the answer. */
export const CHAIN_TIMEOUT_MS = 2500;

/**
 * The chain reader over the configured RPC URLs, or null when none is configured (the route then answers 503).
 * Sources are named `rpc-1`, `rpc-2`… by host: URLs on one host share a name, because the rules count only
 * sources with different names as independent (docs/api.md §3.2), and one provider behind two URLs is not two.
 * Names, never URLs, go into public receipts: provider URLs often carry an API key.
 *
 * @example chainReaderFromUrls(['https://a.example/rpc', 'https://b.example/rpc'])?.read(query)
 */
export function chainReaderFromUrls(
  urls: string[],
  options: { timeoutMs?: number } = {},
): ChainReaderLike | null {
  if (urls.length === 0) return null;
  const hosts: string[] = [];
  const sources = urls.map((url) => {
    const host = rpcHost(url);
    if (!hosts.includes(host)) hosts.push(host);
    return { name: `rpc-${hosts.indexOf(host) + 1}`, url };
  });
  return createChainReader({ sources, usdc: BASE_USDC, timeoutMs: options.timeoutMs ?? CHAIN_TIMEOUT_MS });
}

/**
 * Runs one payment-status check: chain and seller read in parallel, the decision, then the durable, signed
 * receipt. Resolves `{ ok: false }` (and issues nothing) when no chain source answered.
 */
export async function runPaymentStatus(
  deps: PaymentStatusDeps,
  query: PaymentStatusQuery,
  access: PaymentStatusAccess,
): Promise<PaymentStatusOutcome> {
  const draft = await draftPaymentStatus(deps, query);
  if (!draft.ok) return draft;
  return {
    ok: true,
    body: await draft.issue({ tier: access.tier }, access.attached),
    rpcCalls: draft.rpcCalls,
  };
}

/**
 * Runs one payment-status check up to its receipt, without issuing it. The paid route issues only after its
 * settlement landed.
 */
export async function draftPaymentStatus(
  deps: PaymentStatusDeps,
  query: PaymentStatusQuery,
): Promise<PaymentStatusDraft | NoChain> {
  const [evidence, seller] = await Promise.all([deps.chain.read(query), sellerTerms(deps, query.sellerUrl)]);
  if (noSourceAnswered(evidence)) {
    return {
      ok: false,
      code: 'chain_unavailable',
      errors: evidence.sources.map((source) => `${source.name}: ${source.error ?? 'no answer'}`),
    };
  }
  // The caller's explicit `terms` win over the seller's live 402; the seller still supplies the claim contact.
  const termsExpected: ExpectedTerms | null =
    query.terms !== null ? { ...query.terms, source: 'terms', contact: seller?.contact ?? null } : seller;
  const result = decidePaymentStatus({ query, evidence, termsExpected });

  const id = newReceiptId('ps-', deps.random);
  const receiptUrl = receiptUrlOf(deps.baseUrl, id);
  const issuedAt = deps.now().toISOString();
  const fields = {
    id,
    type: 'payment-status' as const,
    ...result,
    claim: { ...result.claim, receipt: receiptUrl },
    issued_at: issuedAt,
    receipt_url: receiptUrl,
  };
  const row = {
    id,
    type: 'payment-status' as const,
    issuedAt,
    url: query.sellerUrl,
    urlNorm: query.sellerUrl === null ? null : normalizeUrl(query.sellerUrl),
    method: query.sellerUrl === null ? null : ('GET' as const),
    verdict: result.status,
    reason: result.reason,
    checkType: null,
    mode: null,
  };
  const rpcCalls = evidence.sources.reduce((sum, source) => sum + source.rpcCalls, 0);
  return {
    ok: true,
    rpcCalls,
    async issue(access, attached) {
      const receipt = await deps.ledger.issue(
        { ...fields, client: query.client, ref: query.ref, access },
        { row: { ...row, tier: access.tier }, observation: null, attached },
      );
      return { ...fields, receipt };
    },
  };
}

/** The terms of the seller's live 402, or null when there is no seller URL or no decodable challenge. */
async function sellerTerms(deps: PaymentStatusDeps, url: string | null): Promise<ExpectedTerms | null> {
  if (url === null) return null;
  try {
    const { outcome } = await cachedProbe(deps.probeCache, (u, m) => deps.prober.probe(u, m), url, 'GET');
    if (outcome.kind !== 'response') return null;
    const challenge = decodeChallenge(outcome.response);
    return challenge.ok ? expectedTermsFromChallenge(challenge.value) : null;
  } catch {
    // A seller that cannot be read only costs the comparison: terms_match falls back to the payload's terms.
    return null;
  }
}

/** An RPC URL's host, lower-case (URLs on one host share a source name); the text itself when it is no URL. */
function rpcHost(url: string): string {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return url;
  }
}
