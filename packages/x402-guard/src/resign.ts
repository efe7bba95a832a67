/**
 * No second signature while the first may land: before the client signs for a URL, every earlier payment of that
 * URL whose outcome is not known is put to Spotcheck's payment status (Spotcheck's docs/api.md §3.2). `landed`: no
 * new payment (the caller already paid; the answer names the transaction). `pending`: wait until its `wait_until` if
 * the caller allows that long, else no new payment. A new signature only after `safe_to_resign`. No answer from
 * payment status means no new signature, whatever the failure mode of the check.
 */
import type { PaymentRecord, Payments } from './payments.ts';
import { askPaymentStatus, type SpotcheckClient } from './spotcheck.ts';
import type { GuardEvent, PaymentStatusAnswer } from './types.ts';

/** What the gate needs. */
export type ResignDeps = {
  spotcheck: SpotcheckClient;
  payments: Payments;
  pendingWaitMs: number;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  report: (event: GuardEvent) => void;
};

/** The gate's decision: sign, or abort with a reason the client's error will carry. */
export type ResignDecision = { allow: true } | { allow: false; reason: string };

/** Decides whether a new payment for `url` may be signed now. */
export async function resignGate(deps: ResignDeps, url: string): Promise<ResignDecision> {
  const deadline = deps.now() + deps.pendingWaitMs;
  for (const record of deps.payments.unresolved(url)) {
    const decision = await settleDoubt(deps, record, deadline);
    if (!decision.allow) return decision;
  }
  return { allow: true };
}

async function settleDoubt(
  deps: ResignDeps,
  record: PaymentRecord,
  deadline: number,
): Promise<ResignDecision> {
  if (record.state === 'landed') return landed(record.url, record.landed);
  for (;;) {
    const reply = await askPaymentStatus(deps.spotcheck, record.header, record.url);
    if (reply.kind !== 'answer') {
      const cause = reply.kind === 'failed' ? reply.cause : reply.code;
      deps.report({
        type: 'resign',
        url: record.url,
        status: 'status_unavailable',
        allowed: false,
        answer: null,
      });
      return {
        allow: false,
        reason: `spotcheck: an earlier payment for ${record.url} may still land and payment status gave no answer (${cause}); not signing again`,
      };
    }
    const answer = reply.answer;
    if (answer.safe_to_resign === true) {
      deps.payments.remove(record);
      deps.report({ type: 'resign', url: record.url, status: answer.status, allowed: true, answer });
      return { allow: true };
    }
    deps.report({ type: 'resign', url: record.url, status: answer.status, allowed: false, answer });
    if (answer.status === 'landed') {
      record.state = 'landed';
      record.landed = answer;
      return landed(record.url, answer);
    }
    const waitUntil = typeof answer.wait_until === 'string' ? Date.parse(answer.wait_until) : Number.NaN;
    const now = deps.now();
    if (
      answer.status !== 'pending' ||
      !Number.isFinite(waitUntil) ||
      waitUntil > deadline ||
      now >= deadline
    ) {
      return {
        allow: false,
        reason: `spotcheck: an earlier payment for ${record.url} is ${answer.status} (${answer.reason ?? 'no reason'})${
          Number.isFinite(waitUntil) ? `; ask again after ${answer.wait_until}` : ''
        }; not signing again`,
      };
    }
    // Chain time may trail the clock: ask again a second past `wait_until`, and never past the caller's deadline.
    await deps.sleep(Math.min(Math.max(0, waitUntil - now) + 1000, deadline - now));
  }
}

function landed(url: string, answer: PaymentStatusAnswer | null): ResignDecision {
  const tx = answer?.tx?.hash;
  return {
    allow: false,
    reason: `spotcheck: an earlier payment for ${url} landed${tx ? ` in ${tx}` : ''}; not paying again (guard.forget(url) to buy again)`,
  };
}
