/**
 * The endpoint check (spec §1.1–1.2): one probe, one decision, one signed receipt, and the answer shapes of
 * spec §2.1 (paid, exempt) and §2.4 (free, dry run). Every tier runs this same code on the same data; the tier
 * only chooses how much of the result the answer shows (spec §1, pricing principle).
 */
import { atomicToUsd, isAtomic } from '../core/amount.ts';
import { decodeChallenge } from '../core/challenge.ts';
import { confidence } from '../core/confidence.ts';
import { HISTORY_LIMIT, observationOf, payToChanged, summarizeHistory } from '../core/history.ts';
import type { ChallengeResult, ProbeOutcome, Quality } from '../core/model.ts';
import { canonicalUsdc } from '../core/networks.ts';
import { buildPayment, paymentTermsSha256 } from '../core/payment.ts';
import { cachedProbe, type ProbeCache } from '../core/probe-cache.ts';
import { assessQuality } from '../core/quality.ts';
import { reasonText } from '../core/reasons.ts';
import { badgeSnippets, newReceiptId } from '../core/receipt.ts';
import { decide } from '../core/verdict.ts';
import type { Ledger } from '../io/ledger.ts';
import type { Store } from '../io/store.ts';
import type { PaidAccess } from './deps.ts';
import type { CheckParams } from './params.ts';

export type Prober = { probe(url: string, method: 'GET' | 'POST'): Promise<ProbeOutcome> };

export type CheckDeps = {
  prober: Prober;
  probeCache: ProbeCache;
  store: Store;
  ledger: Ledger;
  now: () => Date;
  random: (n: number) => Uint8Array;
  baseUrl: string;
};

/** Who an unpaid check is for: decides the receipt label and what the answer shows. */
export type CheckAccess = {
  tier: 'free' | 'exempt';
  /** `self-checked` only for the service's own self-test client (design.md). */
  checkType: 'dry-run' | 'self-checked';
  quota: { day: string; keys: Array<[string, string]> } | null;
};

/** The quota units a receipt records (`IssueMeta['quota']`). */
type QuotaRecord = CheckAccess['quota'];

/** A receipt's `access`: the tier alone, or the paid block naming the landed settlement. */
export type ReceiptAccess = { tier: 'free' | 'exempt' } | PaidAccess;

/** A check computed but not yet issued. */
export type CheckDraft = {
  /** The paid-tier answer of spec §2.1, without `access`. */
  full: Record<string, unknown>;
  /** The free-tier answer of spec §2.4, without `access`. */
  free: Record<string, unknown>;
  /** Signs the receipt with `access`, journals it (resolving once fsynced) and publishes it with its observation. */
  issue(access: ReceiptAccess, quota: QuotaRecord): Promise<Record<string, unknown> & { id: string }>;
};

export type CheckResult = Omit<CheckDraft, 'issue'> & {
  receipt: Record<string, unknown> & { id: string };
};

/**
 * What a probe says, decoded once: a reused probe is the same object, and its challenge and quality depend on
 * nothing else, so every check that reuses it shares one decode.
 */
const decoded = new WeakMap<ProbeOutcome, { challenge: ChallengeResult | null; quality: Quality }>();
function readOutcome(outcome: ProbeOutcome): { challenge: ChallengeResult | null; quality: Quality } {
  let read = decoded.get(outcome);
  if (!read) {
    const challenge = outcome.kind === 'response' ? decodeChallenge(outcome.response) : null;
    read = { challenge, quality: assessQuality(outcome, challenge) };
    decoded.set(outcome, read);
  }
  return read;
}

/** Runs one check and durably issues its receipt. Failures of the target are verdicts, never exceptions. */
export async function runCheck(
  deps: CheckDeps,
  params: CheckParams,
  access: CheckAccess,
): Promise<CheckResult> {
  const draft = await draftCheck(deps, params, access.checkType);
  const receipt = await draft.issue({ tier: access.tier }, access.quota);
  return { receipt, full: draft.full, free: draft.free };
}

/**
 * Runs one check up to its receipt, without issuing it: nothing of the check (receipt, index row, observation) is
 * written until `issue` is called. The paid route issues only after its settlement landed (issue 12).
 */
export async function draftCheck(
  deps: CheckDeps,
  params: CheckParams,
  checkType: CheckAccess['checkType'],
): Promise<CheckDraft> {
  // The probe answers for `params.url` only, the URL it requested and the receipt names; history and listings
  // are per endpoint (`urlNorm`, the spec §2.10 dedupe form).
  const { outcome, cached } = await cachedProbe(
    deps.probeCache,
    (url, method) => deps.prober.probe(url, method),
    params.url,
    params.method,
  );
  const now = deps.now();
  const [listing, previous] = await Promise.all([
    deps.store.listing(params.urlNorm, params.method),
    deps.store.observations(params.urlNorm, params.method),
  ]);
  const { challenge, quality } = readOutcome(outcome);
  const request = {
    url: params.url,
    method: params.method,
    claimedPrice: params.claimedPrice,
    payTo: params.payTo,
    network: params.network,
    checkExpiry: params.checkExpiry,
    skewS: params.skewS,
  };
  const decision = decide({ outcome, challenge, request, listing, now });
  const observation = observationOf(outcome, decision);
  // A reused probe was recorded when it was made; compare against what came before it.
  const before = previous.filter((item) => item.observed_at !== outcome.probedAt);
  const observations = [observation, ...before].slice(0, HISTORY_LIMIT);
  const dryRun = params.mode === 'dry-run';
  const option = decision.option;
  const usdc = option ? canonicalUsdc(option.network) : null;
  const pay = decision.verdict === 'pay' && option !== null;
  const termsHash =
    pay && !dryRun
      ? paymentTermsSha256({
          network: option.network,
          asset: option.asset,
          amountAtomic: option.amount,
          payTo: option.payTo,
        })
      : null;

  const id = newReceiptId('sc-', deps.random);
  const receiptUrl = `${deps.baseUrl}/v1/receipts/${id}`;
  const facts = {
    verdict: decision.verdict,
    reason: decision.reason,
    ...(decision.reason === 'free_trial_active' ? { free_trial_remaining: decision.freeTrialRemaining } : {}),
    quoted_price_usd:
      option && usdc && isAtomic(option.amount) ? atomicToUsd(option.amount, usdc.decimals) : null,
    claimed_price_usd: params.claimedPrice === null ? null : Number(params.claimedPrice),
    pay_to: option?.payTo ?? null,
    network: option?.network ?? null,
    asset: option?.asset ?? null,
    expected_pay_to: decision.expectedPayTo,
    expected_network: decision.expectedNetwork,
    expected_source: decision.expectedSource,
    // A dry run is never an approval: no payment object, no terms hash (spec §2.4).
    payment: pay && !dryRun ? buildPayment(option, new Date(outcome.probedAt)) : null,
    probe: {
      probed_at: outcome.probedAt,
      cached,
      cache_ttl_s: deps.probeCache.ttlSeconds,
      ...(outcome.kind === 'response' && outcome.response.methodUsed !== params.method
        ? { method_used: outcome.response.methodUsed }
        : {}),
    },
    check_type: dryRun ? 'dry-run' : checkType,
    payment_terms_sha256: termsHash,
    receipt_id: id,
    receipt_url: receiptUrl,
    pay_to_changed: payToChanged(before, observation),
    reason_code: decision.reason,
    confidence: confidence({
      fresh: !cached,
      lenient: challenge?.ok === true && challenge.value.lenient,
      expectedSource: decision.expectedSource,
      expectedPayTo: decision.expectedPayTo,
    }),
    history: summarizeHistory(observations, now),
    quality,
    ...(decision.expiry ? { expiry_check: decision.expiry } : {}),
  };

  const host = new URL(params.url).host;
  const unsigned = {
    id,
    type: 'check',
    issued_at: now.toISOString(),
    url: params.url,
    method: params.method,
    mode: params.mode,
    task: params.task,
    client: params.client,
    ref: params.ref,
    ...facts,
    http_status: outcome.kind === 'response' ? outcome.response.status : null,
    badge: badgeSnippets({ baseUrl: deps.baseUrl, host, receiptUrl, verdict: decision.verdict }),
  };
  const row = {
    id,
    type: 'check' as const,
    issuedAt: unsigned.issued_at,
    url: params.url,
    urlNorm: params.urlNorm,
    method: params.method,
    verdict: decision.verdict,
    reason: decision.reason,
    checkType: facts.check_type,
    mode: params.mode,
  };
  const issue: CheckDraft['issue'] = (receiptAccess, quota) =>
    deps.ledger.issue(
      { ...unsigned, access: receiptAccess },
      {
        row: { ...row, tier: receiptAccess.tier },
        observation: cached ? null : { urlNorm: params.urlNorm, method: params.method, value: observation },
        quota,
      },
    );

  return {
    issue,
    full: { ...facts, history_observations: observations },
    free: {
      verdict: decision.verdict,
      reason: reasonText(decision.reason),
      payment_terms_sha256: termsHash,
      receipt_id: id,
      receipt_url: receiptUrl,
      pay_to_changed: facts.pay_to_changed,
      reason_code: decision.reason,
      check_type: facts.check_type,
    },
  };
}
