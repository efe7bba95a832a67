/**
 * The endpoint check (docs/api.md §1.1–1.2): one probe, one decision, one signed receipt, and the answer shapes of
 * docs/api.md §2.1 (paid, exempt) and §2.4 (free, dry run). Every tier runs this same code on the same data; the tier
 * only chooses how much of the result the answer shows (docs/api.md §1, pricing principle).
 */
import type { CheckFreeAnswer, CheckFullAnswer } from '../core/answer-schemas.ts';
import { assembleCheck } from '../core/check-answer.ts';
import { newReceiptId } from '../core/receipt.ts';
import { cachedProbe, type ProbeCache } from '../io/probe/probe-cache.ts';
import type { Prober } from '../io/probe/prober.ts';
import type { Ledger } from '../io/receipts/ledger.ts';
import type { Store } from '../io/store/port.ts';
import type { CheckParams } from './params.ts';

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
  tier: 'free' | 'exempt' | 'hosted';
  /** `self-checked` only for the service's own self-test client (docs/api.md §2.1). */
  checkType: 'dry-run' | 'self-checked';
  /**
   * What the caller journals with the receipt (`IssueMeta['attached']`): the free quota units the answer used, or
   * the hosted use it is billed as; null for none. Committed in the receipt's own journal record, so the answer
   * waits for one fsync, not two.
   */
  attached: unknown;
};

/** The `access` block of a paid answer and of its receipt (docs/api.md §2.1), from a landed settlement. */
export type PaidAccess = { tier: 'paid'; charged_usd: string; tx: string };

/** A receipt's `access`: the tier alone, or the paid block naming the landed settlement. */
export type ReceiptAccess = { tier: CheckAccess['tier'] } | PaidAccess;

/** A check computed but not yet issued. */
export type CheckDraft = {
  /** The paid-tier answer of docs/api.md §2.1, without `access` and `reputation`. */
  full: CheckFullAnswer;
  /** The free-tier answer of docs/api.md §2.4, without `access`. */
  free: CheckFreeAnswer;
  /** Signs the receipt with `access`, journals it (resolving once fsynced) and publishes it with its observation. */
  issue(access: ReceiptAccess, attached: unknown): Promise<Record<string, unknown> & { id: string }>;
};

export type CheckResult = Omit<CheckDraft, 'issue'> & {
  receipt: Record<string, unknown> & { id: string };
};

/** Runs one check and durably issues its receipt. Failures of the target are verdicts, never exceptions. */
export async function runCheck(
  deps: CheckDeps,
  params: CheckParams,
  access: CheckAccess,
): Promise<CheckResult> {
  const draft = await draftCheck(deps, params, access.checkType);
  const receipt = await draft.issue({ tier: access.tier }, access.attached);
  return { receipt, full: draft.full, free: draft.free };
}

/**
 * Runs one check up to its receipt, without issuing it: nothing of the check (receipt, index row, observation) is
 * written until `issue` is called. The paid route issues only after its settlement landed.
 */
export async function draftCheck(
  deps: CheckDeps,
  params: CheckParams,
  checkType: CheckAccess['checkType'],
): Promise<CheckDraft> {
  // The probe answers for `params.url` only, the URL it requested and the receipt names; history and listings
  // are per endpoint (`urlNorm`, the docs/api.md §2.10 dedupe form).
  const { outcome, cached } = await cachedProbe(
    deps.probeCache,
    (url, method) => deps.prober.probe(url, method),
    params.url,
    params.method,
  );
  const now = deps.now();
  // A store that fails costs the listing and the history (docs/api.md §2.1: `history` null), never the answer.
  const known = await deps.store.endpoint(params.urlNorm, params.method).catch(storeDown);
  const listing = known?.listing ?? null;
  const previous = known?.observations ?? null;
  const check = assembleCheck({
    outcome,
    cached,
    cacheTtlS: deps.probeCache.ttlSeconds,
    request: {
      url: params.url,
      method: params.method,
      claimedPrice: params.claimedPrice,
      payTo: params.payTo,
      network: params.network,
      checkExpiry: params.checkExpiry,
      skewS: params.skewS,
    },
    mode: params.mode,
    checkType,
    listing,
    previous,
    now,
    id: newReceiptId('sc-', deps.random),
    baseUrl: deps.baseUrl,
    context: { task: params.task, client: params.client, ref: params.ref },
    sent: params.sent,
  });
  const { decision, unsigned } = check;
  const row = {
    id: unsigned.id,
    type: 'check' as const,
    issuedAt: unsigned.issued_at,
    url: params.url,
    urlNorm: params.urlNorm,
    method: params.method,
    verdict: decision.verdict,
    reason: decision.reason,
    checkType: check.free['check_type'] as string,
    mode: params.mode,
  };
  const observation = check.observation;
  const issue: CheckDraft['issue'] = (receiptAccess, attached) =>
    deps.ledger.issue(
      {
        ...(receiptAccess.tier === 'free' || params.mode === 'dry-run' ? check.freeUnsigned : unsigned),
        access: receiptAccess,
      },
      {
        row: { ...row, tier: receiptAccess.tier },
        observation:
          observation === null
            ? null
            : { urlNorm: params.urlNorm, method: params.method, value: observation },
        attached,
      },
    );

  return { issue, full: check.full, free: check.free };
}

/** A failed store read: logged, and read as "unavailable". */
function storeDown(error: unknown): null {
  console.error('[spotcheck] [check] store unavailable', error);
  return null;
}
