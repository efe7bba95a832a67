import { describe, expect, it } from 'vitest';
import { BASE, BASE_USDC } from '../../../core/networks.ts';
import { assemblePaidCall, type PaidCallInput } from '../../../core/paid-call.ts';
import { type Task, taskRequest } from '../../../core/tasks.ts';

const TASK: Task = {
  name: 'fx',
  description: 'A task.',
  inputs: { amount: { kind: 'integer', min: 1, max: 1000 } },
  request: { method: 'GET', query: { base: 'EUR', amount: '{amount}' } },
  answer: [
    { pointer: '/rate', equals: 1.09 },
    { pointer: '/converted', near: { product: [{ input: 'amount' }, 1.09] }, tolerance: 0.01 },
  ],
  candidates: [],
};
const SEED = '00112233445566778899aabbccddeeff';
const request = taskRequest(TASK, 'https://A.example/fx', SEED);
const amount = request.inputs.amount as number;
const right = JSON.stringify({ rate: 1.09, converted: Math.round(amount * 109) / 100 });

const input: PaidCallInput = {
  id: 'sc-abc',
  now: new Date('2026-11-24T01:00:00Z'),
  baseUrl: 'https://spot.example',
  runId: '20261124T010000Z-0000',
  known: { task: TASK, seed: SEED, others: [] },
  candidate: 'https://A.example/fx',
  request,
  checkReceiptId: 'sc-check',
  terms: {
    network: BASE,
    asset: BASE_USDC,
    amount_atomic: '10000',
    pay_to: '0x1111111111111111111111111111111111111111',
  },
  payer: '0x2222222222222222222222222222222222222222',
  status: 200,
  text: right,
  truncated: false,
  settlementTx: `0x${'ab'.repeat(32)}`,
  error: null,
};

describe('assemblePaidCall', () => {
  it('builds a self-checked receipt and the record the lookup ranks from the same facts', () => {
    const { unsigned, record } = assemblePaidCall(input);
    expect(unsigned).toMatchObject({
      id: 'sc-abc',
      type: 'paid-call',
      check_type: 'self-checked',
      task: 'fx',
      endpoint: 'https://A.example/fx',
      url: `https://a.example/fx?base=EUR&amount=${amount}`,
      // The seed and the inputs it drew: anyone can recompute the expected answer.
      seed: SEED,
      inputs: { amount },
      check_receipt_id: 'sc-check',
      price: { amount_atomic: '10000', amount_usd: 0.01 },
      settlement_tx: input.settlementTx,
      delivered: true,
      known_answer: 'pass',
      why: null,
      receipt_url: 'https://spot.example/v1/receipts/sc-abc',
    });
    expect(record).toMatchObject({
      service_id: 'a.example/fx',
      receipt_id: 'sc-abc',
      known_answer: 'pass',
      broken_on_seller_side: false,
      called_at: '2026-11-24T01:00:00.000Z',
    });
  });

  it('records a paid request that got no answer as undelivered, unjudged, broken on the seller side', () => {
    const { unsigned, record } = assemblePaidCall({ ...input, status: null, text: '', error: 'timeout' });
    expect(unsigned).toMatchObject({ delivered: false, known_answer: null, why: 'no_answer' });
    expect(unsigned.detail).toBe('no answer to the paid request: timeout');
    expect(record).toMatchObject({ delivered: false, known_answer: null, broken_on_seller_side: true });
  });

  it('marks a wrong answer delivered and failed, with why', () => {
    const { record } = assemblePaidCall({ ...input, text: '{"rate":2}' });
    expect(record).toMatchObject({ delivered: true, known_answer: 'fail', why: 'value_differs' });
    // The right answer of another call (other inputs) is wrong for this one.
    const other = assemblePaidCall({ ...input, known: { ...input.known, seed: 'f'.repeat(32) } });
    expect(other.record).toMatchObject({ delivered: true, known_answer: 'fail', why: 'out_of_range' });
  });

  it('records the POST body it sent', () => {
    const post: Task = {
      ...TASK,
      request: { method: 'POST', body: { amount: '{amount}', note: 'n={amount}' } },
    };
    const sent = taskRequest(post, 'https://A.example/fx', SEED);
    const { unsigned } = assemblePaidCall({ ...input, known: { ...input.known, task: post }, request: sent });
    expect(unsigned).toMatchObject({ method: 'POST', body: { amount, note: `n=${amount}` } });
    expect(assemblePaidCall(input).unsigned).not.toHaveProperty('body');
  });
});
