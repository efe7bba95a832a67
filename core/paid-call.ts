/**
 * The receipt of one of the service's own known-answer calls (docs/api.md §1.4), pure: what was paid, to
 * whom, the settlement transaction, delivered yes/no, the known answer pass/fail and why. It is a receipt like any
 * other (signed by the caller with `signReceipt`, served at `/v1/receipts/{id}`), labelled `check_type`
 * `self-checked` (docs/api.md §2.1: only the service's own test client), and names the check that approved the payment.
 */
import { atomicToUsd, isAtomic } from './amount.ts';
import { type PaidCallRecord, paidCallRecord } from './catalog.ts';
import { type AnswerVerdict, judgeAnswer, type KnownAnswerCase } from './known-answer.ts';
import { canonicalUsdc } from './networks.ts';
import { receiptUrlOf } from './receipt.ts';
import type { CallRequest } from './tasks.ts';

/** The paid terms (the check's approved payment). */
export type PaidTerms = { network: string; asset: string; amount_atomic: string; pay_to: string };

/** Everything one paid call's receipt is assembled from; ids and times are drawn by the caller. */
export type PaidCallInput = {
  id: string;
  now: Date;
  baseUrl: string;
  runId: string;
  /** The task, the seed of the call's inputs, and the run's other tasks (judged against too). */
  known: KnownAnswerCase;
  /** The candidate as listed in the task file. */
  candidate: string;
  /** What was sent: the inputs drawn from the seed, the URL (with the task's query) and a POST's body. */
  request: CallRequest;
  checkReceiptId: string;
  terms: PaidTerms;
  payer: string;
  /** Paid answer; `status` null when none came. */
  status: number | null;
  text: string;
  truncated: boolean;
  settlementTx: string | null;
  /** A transport error of the paid request, if any. */
  error: string | null;
};

/** The unsigned receipt and the record the lookup ranks. */
export type PaidCallAssembly = {
  unsigned: Record<string, unknown> & { id: string; issued_at: string };
  record: PaidCallRecord;
};

/**
 * Assembles one paid call: judges the answer, then builds the receipt and the lookup record from the same facts.
 * @example assemblePaidCall({ id, now, baseUrl, runId, known: { task, seed, others }, … }).record.known_answer // 'pass'
 */
export function assemblePaidCall(input: PaidCallInput): PaidCallAssembly {
  const judged = judge(input);
  const issuedAt = input.now.toISOString();
  const usdc = canonicalUsdc(input.terms.network);
  const amountUsd =
    usdc && isAtomic(input.terms.amount_atomic)
      ? atomicToUsd(input.terms.amount_atomic, usdc.decimals)
      : null;
  const unsigned = {
    id: input.id,
    type: 'paid-call',
    check_type: 'self-checked',
    origin: 'known-answers',
    run_id: input.runId,
    issued_at: issuedAt,
    task: input.known.task.name,
    endpoint: input.candidate,
    url: input.request.url,
    method: input.request.method,
    // What makes the call's expected answer reproducible: the seed draws `inputs` (and every other task's).
    seed: input.known.seed,
    inputs: input.request.inputs,
    ...(input.request.body === undefined ? {} : { body: input.request.body }),
    check_receipt_id: input.checkReceiptId,
    price: {
      network: input.terms.network,
      asset: input.terms.asset,
      amount_atomic: input.terms.amount_atomic,
      amount_usd: amountUsd,
      pay_to: input.terms.pay_to,
    },
    payer: input.payer,
    settlement_tx: input.settlementTx,
    http_status: input.status,
    delivered: judged.delivered,
    known_answer: judged.known_answer,
    why: judged.why,
    detail: judged.detail,
    receipt_url: receiptUrlOf(input.baseUrl, input.id),
  };
  const record = paidCallRecord({
    endpoint_url: input.candidate,
    task: input.known.task.name,
    called_at: issuedAt,
    price_atomic: input.terms.amount_atomic,
    network: input.terms.network,
    pay_to: input.terms.pay_to,
    settlement_tx: input.settlementTx,
    delivered: judged.delivered,
    known_answer: judged.known_answer,
    http_status: input.status,
    receipt_id: input.id,
    why: judged.why,
  });
  return { unsigned, record };
}

type Judged = Omit<AnswerVerdict, 'known_answer' | 'why'> & {
  known_answer: AnswerVerdict['known_answer'] | null;
  why: string | null;
};

function judge(input: PaidCallInput): Judged {
  if (input.status === null) {
    // No answer at all: delivered nothing; whether it would have been right cannot be known.
    const detail = `no answer to the paid request${input.error ? `: ${input.error}` : ''}`;
    return { delivered: false, known_answer: null, why: 'no_answer', detail };
  }
  return judgeAnswer(input.known, {
    status: input.status,
    text: input.text,
    truncated: input.truncated,
  });
}
