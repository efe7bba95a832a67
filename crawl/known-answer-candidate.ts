/**
 * One candidate of a task: checked first with the same engine as the API's live check (an unpaid
 * probe through the SSRF-gated prober, `core/check-answer.ts`), then, only on `pay`, paid with the approved terms.
 * Each step is a signed receipt; the check is `self-checked` (docs/api.md §2.1: the service's own test client).
 */
import { assembleCheck } from '../core/check-answer.ts';
import { assemblePaidCall, type PaidTerms } from '../core/paid-call.ts';
import { newReceiptId, type Signer, signReceipt } from '../core/receipt.ts';
import { SEED_BYTES } from '../core/task-inputs.ts';
import { type CallRequest, type Task, taskRequest } from '../core/tasks.ts';
import type { PaidCall, PayingClient } from '../io/probe/paying-client.ts';
import type { Prober } from '../io/probe/prober.ts';

/** What checking and paying a candidate needs. */
export type CandidateDeps = {
  prober: Prober;
  payer: PayingClient;
  signer: Signer;
  now: () => Date;
  random: (n: number) => Uint8Array;
  baseUrl: string;
  runId: string;
  /** Every task of the run's file: an answer that also passes one of them fails (`core/known-answer.ts`). */
  catalog: readonly Task[];
};

type SignedReceipt = Record<string, unknown> & { id: string };

/** A candidate's check: its signed receipt, and the terms to pay when the verdict was `pay`. */
export type CandidateCheck = {
  receipt: SignedReceipt;
  verdict: string;
  reason: string;
  terms: PaidTerms | null;
};

/**
 * Checks a candidate as the live check would, with no caller expectation (expected network Base, no wallet or
 * price): the one small seam between the known-answer calls and the check engine.
 * @example const { verdict, terms } = await checkCandidate(deps, task, 'https://a.example/fx')
 */
export async function checkCandidate(
  deps: CandidateDeps,
  task: Task,
  candidate: string,
): Promise<CandidateCheck> {
  // Inputs of its own: the unpaid probe shows the seller nothing a paid call will ask.
  const { url, method } = taskRequest(task, candidate, seedOf(deps));
  const outcome = await deps.prober.probe(url, method);
  const check = assembleCheck({
    outcome,
    cached: false,
    cacheTtlS: 0,
    request: { url, method, claimedPrice: null, payTo: null, network: null, checkExpiry: false, skewS: 30 },
    mode: 'live',
    checkType: 'self-checked',
    listing: null,
    previous: [],
    now: deps.now(),
    id: newReceiptId('sc-', deps.random),
    baseUrl: deps.baseUrl,
    context: { task: task.name, origin: 'known-answers', run_id: deps.runId, endpoint: candidate },
  });
  const receipt = signReceipt(check.unsigned, deps.signer);
  const { verdict, reason, option } = check.decision;
  const terms =
    verdict === 'pay' && option !== null
      ? { network: option.network, asset: option.asset, amount_atomic: option.amount, pay_to: option.payTo }
      : null;
  return { receipt, verdict, reason, terms };
}

/** A paid call's signed receipt and the lookup record behind it. */
export type PaidCallResult = {
  receipt: SignedReceipt;
  record: ReturnType<typeof assemblePaidCall>['record'];
};

/**
 * Pays a candidate once with the approved terms. Returns the paying side's refusal (budget, changed terms, no
 * payment asked) as a value; a signed payment always yields a receipt, whatever the seller did with it.
 */
export async function payCandidate(
  deps: CandidateDeps,
  task: Task,
  candidate: string,
  check: CandidateCheck & { terms: PaidTerms },
): Promise<PaidCallResult | { refused: string; why: string }> {
  const seed = seedOf(deps);
  const request = taskRequest(task, candidate, seed);
  const { url, method, body } = request;
  const call = await deps.payer.pay({ url, method, body }, check.terms);
  if (call.kind === 'not_paid') return { refused: call.message, why: call.why };
  return paidResult(deps, task, candidate, { seed, request }, check, call);
}

/** A fresh seed for one call's inputs, from the injected randomness. */
function seedOf(deps: CandidateDeps): string {
  return [...deps.random(SEED_BYTES)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

function paidResult(
  deps: CandidateDeps,
  task: Task,
  candidate: string,
  sent: { seed: string; request: CallRequest },
  check: CandidateCheck,
  call: PaidCall,
): PaidCallResult {
  const { unsigned, record } = assemblePaidCall({
    id: newReceiptId('sc-', deps.random),
    now: deps.now(),
    baseUrl: deps.baseUrl,
    runId: deps.runId,
    known: { task, seed: sent.seed, others: deps.catalog.filter((other) => other.name !== task.name) },
    candidate,
    request: sent.request,
    checkReceiptId: check.receipt.id,
    terms: call.terms,
    payer: call.payer,
    status: call.status,
    text: call.text,
    truncated: call.truncated,
    settlementTx: call.settlement_tx,
    error: call.error,
  });
  return { receipt: signReceipt(unsigned, deps.signer), record };
}
