/**
 * The check on a challenge the client received, end to end: the real service on a port, wired to the sandbox world
 * (anvil with Circle's FiatToken, the SDK facilitator, the seller fleet), probing through the real SSRF-gated prober.
 * The official client (`@x402/fetch` over `x402Client`) hands its `onBeforePaymentCreation` hook the seller's real
 * 402 and the requirement it selected; sent back to the check they give `pay` with the terms hash of exactly that
 * requirement, and the same challenge with its `payTo` or amount altered gives `skip`/`challenge_mismatch`.
 */
import type { PaymentCreationContext } from '@x402/core/client';
import { encodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { wrapFetchWithPayment } from '@x402/fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentTermsSha256 } from '../../core/payment.ts';
import { ATTACKER_WALLET } from '../../sandbox/sellers/constants.ts';
import { EXEMPT_SECRET } from '../helpers/service.ts';
import { fetchFrom, type PaidWorld, startPaidWorld } from '../helpers/world.ts';

const PATH = '/v1/products/endpoint-spot-check';
let paid: PaidWorld;

beforeAll(async () => {
  paid = await startPaidWorld({ buyers: 2 });
});
afterAll(async () => {
  await paid?.stop();
});

type Answer = Record<string, unknown> & {
  verdict: string;
  reason_code: string;
  payment_terms_sha256: string | null;
};

async function check(body: Record<string, unknown>): Promise<Answer> {
  const response = await fetch(`${paid.spot.url}${PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-key': EXEMPT_SECRET },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Answer;
}

const termsHash = (requirement: { network: string; asset: string; amount: string; payTo: string }) =>
  paymentTermsSha256({
    network: requirement.network,
    asset: requirement.asset,
    amountAtomic: requirement.amount,
    payTo: requirement.payTo,
  });

describe('the official client asks the check about the challenge it is about to sign', () => {
  let seen: PaymentCreationContext | null = null;
  let answer: Answer | null = null;
  const url = () => paid.world.sellers.urls['sdk-ok'];

  beforeAll(async () => {
    const client = paid.client(0).onBeforePaymentCreation(async (context) => {
      seen = context;
      answer = await check({
        url: url(),
        payment_required: encodePaymentRequiredHeader(context.paymentRequired),
        selected_requirement: context.selectedRequirements,
      });
      const approved =
        answer.verdict === 'pay' && answer.payment_terms_sha256 === termsHash(context.selectedRequirements);
      return approved ? undefined : { abort: true as const, reason: `spotcheck: ${answer.reason_code}` };
    });
    const response = await wrapFetchWithPayment(fetchFrom('192.0.2.31'), client)(url());
    expect(response.status).toBe(200);
  }, 30_000);

  it('approves the honest seller with the terms hash of the selected requirement, then the client pays', () => {
    const selected = seen?.selectedRequirements;
    expect(selected).toBeDefined();
    expect(answer).toMatchObject({
      verdict: 'pay',
      payment_terms_sha256: termsHash(selected!),
      payment: { pay_to: selected!.payTo, amount: { atomic: selected!.amount } },
      sent_challenge: { selected_by: 'caller', selected_terms_sha256: termsHash(selected!) },
    });
  });

  it.each([
    ['payTo', { payTo: ATTACKER_WALLET }],
    ['amount', { amount: '20000' }],
  ])('skips the same challenge with its %s altered (challenge_mismatch)', async (_name, change) => {
    const required = seen?.paymentRequired as PaymentRequired;
    const altered = { ...required, accepts: required.accepts.map((accept) => ({ ...accept, ...change })) };
    const selected = altered.accepts[0];
    for (const body of [
      { url: url(), payment_required: encodePaymentRequiredHeader(altered) },
      { url: url(), payment_required: altered, selected_requirement: selected },
    ]) {
      const skipped = await check(body);
      expect(skipped).toMatchObject({
        verdict: 'skip',
        reason_code: 'challenge_mismatch',
        payment: null,
        payment_terms_sha256: null,
        sent_challenge: { selected_terms_sha256: termsHash(selected!) },
      });
    }
  });

  it('keeps a check on a sent challenge out of the URL public state', async () => {
    const byUrl = () => fetch(`${paid.spot.url}/v1/receipts/by-url?${new URLSearchParams({ url: url() })}`);
    // Every check of this URL so far was on a sent challenge: none of them is its public state.
    expect((await byUrl()).status).toBe(404);
    const plain = await check({ url: url() });
    const after = await byUrl();
    expect(after.status).toBe(200);
    expect(((await after.json()) as { id: string }).id).toBe(plain.receipt_id);
  });
});
