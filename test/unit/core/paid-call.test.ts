import { describe, expect, it } from 'vitest';
import { BASE, BASE_USDC } from '../../../core/networks.ts';
import { assemblePaidCall, type PaidCallInput } from '../../../core/paid-call.ts';

const input: PaidCallInput = {
  id: 'sc-abc',
  now: new Date('2026-11-24T01:00:00Z'),
  baseUrl: 'https://spot.example',
  runId: '20261124T010000Z-0000',
  task: 'fx',
  answerCheck: { pointer: '/rate', equals: 1.09 },
  candidate: 'https://A.example/fx',
  url: 'https://A.example/fx?base=EUR',
  method: 'GET',
  checkReceiptId: 'sc-check',
  terms: {
    network: BASE,
    asset: BASE_USDC,
    amount_atomic: '10000',
    pay_to: '0x1111111111111111111111111111111111111111',
  },
  payer: '0x2222222222222222222222222222222222222222',
  status: 200,
  text: '{"rate":1.09}',
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
  });
});
